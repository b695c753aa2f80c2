"""ValidatingAdmissionPolicies through real kubectl: a policy denying a ResourceSlice
write answers upstream's message, and a DRA driver chart's policy restricts the driver's
service account to ResourceSlices of its own node (impersonated with --as/--as-user-extra)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

DRIVER_SA = "system:serviceaccount:dra:dra-example-driver-service-account"

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: only-gpu-slices
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["resource.k8s.io"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["resourceslices"]
  validations:
  - expression: object.spec.driver == "gpu.example.com"
    messageExpression: "'driver ' + object.spec.driver + ' may not publish here'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: only-gpu-slices
spec:
  policyName: only-gpu-slices
  validationActions: [Deny]
"""

# deployments/helm/dra-example-driver/templates/validatingadmissionpolicy.yaml, rendered
DRIVER_CHART_POLICY = f"""
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: resourceslices-policy-dra-example-driver
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["resource.k8s.io"]
      apiVersions: ["v1", "v1beta1", "v1beta2"]
      operations:  ["CREATE", "UPDATE", "DELETE"]
      resources:   ["resourceslices"]
  matchConditions:
  - name: isRestrictedUser
    expression: >-
      request.userInfo.username == "{DRIVER_SA}"
  variables:
  - name: userNodeName
    expression: >-
      request.userInfo.extra[?'authentication.kubernetes.io/node-name'][0].orValue('')
  - name: objectNodeName
    expression: >-
      (request.operation == "DELETE" ? oldObject : object).spec.?nodeName.orValue("")
  validations:
  - expression: variables.userNodeName != ""
    message: >-
      no node association found for user, this user must run in a pod on a node and ServiceAccountTokenPodNodeInfo must be enabled
  - expression: variables.userNodeName == variables.objectNodeName
    messageExpression: >-
      "this user running on node '"+variables.userNodeName+"' may not modify " +
      (variables.objectNodeName == "" ?"cluster resourceslices" : "resourceslices on node '"+variables.objectNodeName+"'")
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: resourceslices-policy-dra-example-driver
spec:
  policyName: resourceslices-policy-dra-example-driver
  validationActions: [Deny]
"""


def _slice(name: str, driver: str, node: str) -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: {name}
spec:
  driver: {driver}
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: dev-0}}]
"""


@pytest.fixture
def kubectl(mockkube_empty):
    return mockkube_empty.kubectl


def test_policy_denies_resourceslice_with_upstream_message(kubectl):
    kubectl("apply", "-f", "-", input=POLICY)
    p = kubectl("get", "validatingadmissionpolicy", "only-gpu-slices", "-o", "jsonpath={.status.observedGeneration}")
    assert p.stdout == "1"
    table = kubectl("get", "validatingadmissionpolicies").stdout.splitlines()
    assert table[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert table[1].split()[:3] == ["only-gpu-slices", "1", "<unset>"]
    table = kubectl("get", "validatingadmissionpolicybindings").stdout.splitlines()
    assert table[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert table[1].split()[:3] == ["only-gpu-slices", "only-gpu-slices", "<unset>"]
    p = kubectl("create", "-f", "-", check=False, input=_slice("bad", "fpga.example.com", "n1"))
    assert p.returncode == 1
    # kubectl prints a 422 with causes as on a real cluster (see the Kubernetes VAP docs' example)
    assert p.stderr.strip() == (
        "The resourceslices \"bad\" is invalid: : ValidatingAdmissionPolicy 'only-gpu-slices' with binding "
        "'only-gpu-slices' denied request: driver fpga.example.com may not publish here"
    )
    kubectl("create", "-f", "-", input=_slice("good", "gpu.example.com", "n1"))


def test_driver_chart_policy_restricts_driver_to_its_node(kubectl):
    kubectl("apply", "-f", "-", input=DRIVER_CHART_POLICY)
    as_driver = ["--as", DRIVER_SA, "--as-group", "system:serviceaccounts"]
    on_n1 = [*as_driver, "--as-user-extra", "authentication.kubernetes.io/node-name=n1"]
    kubectl(*on_n1, "create", "-f", "-", input=_slice("n1-gpu", "gpu.example.com", "n1"))
    p = kubectl(*on_n1, "create", "-f", "-", check=False, input=_slice("n2-gpu", "gpu.example.com", "n2"))
    assert p.returncode == 1
    assert (
        "ValidatingAdmissionPolicy 'resourceslices-policy-dra-example-driver' with binding "
        "'resourceslices-policy-dra-example-driver' denied request: this user running on node 'n1' may not "
        "modify resourceslices on node 'n2'"
    ) in p.stderr
    p = kubectl(*as_driver, "create", "-f", "-", check=False, input=_slice("n3-gpu", "gpu.example.com", "n3"))
    assert "no node association found for user" in p.stderr
    # the admin is not the restricted user; the driver may delete its own node's slice
    kubectl("create", "-f", "-", input=_slice("n2-gpu", "gpu.example.com", "n2"))
    p = kubectl(*on_n1, "delete", "resourceslice", "n2-gpu", check=False)
    assert "may not modify resourceslices on node 'n2'" in p.stderr
    kubectl(*on_n1, "delete", "resourceslice", "n1-gpu")


WARN_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: team-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "DELETE"]
      resources: ["configmaps"]
  validations:
  - expression: "(request.operation == 'DELETE' ? oldObject : object).metadata.?labels.team.hasValue()"
    messageExpression: "'configmap ' + request.name + ' has no team label'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: team-label
spec:
  policyName: team-label
  validationActions: [Warn, Audit]
"""


def test_warn_policy_shows_kubectl_warning_lines(kubectl):
    kubectl("apply", "-f", "-", input=WARN_POLICY)
    line = (
        "Warning: Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label': "
        "configmap loose has no team label"
    )
    made = kubectl("create", "configmap", "loose", "--from-literal=a=b")
    assert line in made.stderr and "configmap/loose created" in made.stdout
    gone = kubectl("delete", "configmap", "loose")
    assert line in gone.stderr and 'configmap "loose" deleted' in gone.stdout
