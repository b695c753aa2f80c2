"""MutatingAdmissionPolicies through real kubectl, with the manifests of docs/admission.md
("MutatingAdmissionPolicy") as written: a label on every ConfigMap in namespaces with a
label (ApplyConfiguration), a JSONPatch annotation with jsonpatch.escapeKey, and params
from a ConfigMap; plus the Table columns and an error as kubectl prints it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOC = (Path(__file__).resolve().parents[2] / "docs" / "admission.md").read_text()
_START = DOC.index("## MutatingAdmissionPolicy")
_END = DOC.find("\n## ", _START + 1)
SECTION = DOC[_START : _END if _END != -1 else len(DOC)]
MANIFESTS = re.findall(r"<<'YAML'\n(.*?)\nYAML\n", SECTION, re.S)


@pytest.fixture
def kubectl(mockkube_empty):
    return mockkube_empty.kubectl


def test_docs_examples_run_as_written(kubectl):
    assert len(MANIFESTS) == 3
    label, created_by, params = MANIFESTS
    kubectl("create", "namespace", "blue")
    kubectl("label", "namespace", "blue", "team=blue")
    kubectl("apply", "-f", "-", input=label)
    kubectl("-n", "blue", "create", "configmap", "settings", "--from-literal=a=b")
    assert (
        kubectl("-n", "blue", "get", "configmap", "settings", "-o", "jsonpath={.metadata.labels.team}").stdout == "blue"
    )
    kubectl("create", "configmap", "elsewhere", "--from-literal=a=b")
    assert kubectl("get", "configmap", "elsewhere", "-o", "jsonpath={.metadata.labels}").stdout == ""

    kubectl("apply", "-f", "-", input=created_by)
    kubectl("create", "configmap", "who", "--from-literal=a=b")
    assert (
        kubectl("get", "configmap", "who", "-o", r"jsonpath={.metadata.annotations.example\.com/created-by}").stdout
        == "kubernetes-admin"
    )
    # an update is not a CREATE: the annotation stays what it was; --as changes request.userInfo
    kubectl("--as", "jane", "create", "configmap", "jane-made")
    assert (
        kubectl(
            "get", "configmap", "jane-made", "-o", r"jsonpath={.metadata.annotations.example\.com/created-by}"
        ).stdout
        == "jane"
    )

    kubectl("create", "namespace", "policy-params")
    kubectl("-n", "policy-params", "create", "configmap", "replica-defaults", "--from-literal=replicas=2")
    kubectl("apply", "-f", "-", input=params)
    kubectl("create", "deployment", "web", "--image=nginx")
    assert kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2"

    table = kubectl("get", "mutatingadmissionpolicies").stdout.splitlines()
    assert table[0].split() == ["NAME", "MUTATIONS", "PARAMKIND", "AGE"]
    assert [r.split()[:3] for r in table[1:]] == [
        ["created-by", "1", "<unset>"],
        ["default-replicas", "1", "v1/ConfigMap"],
        ["team-label", "1", "<unset>"],
    ]
    table = kubectl("get", "mutatingadmissionpolicybindings").stdout.splitlines()
    assert table[0].split() == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert table[1].split()[:3] == ["created-by", "created-by", "<unset>"]
    assert table[2].split()[:3] == ["default-replicas", "default-replicas", "policy-params/replica-defaults"]

    # the params are gone: parameterNotFoundAction Deny refuses the write; upstream's policy
    # dispatcher replaces the Forbidden message, so there is no 'deployments.apps "web2" is forbidden'
    kubectl("-n", "policy-params", "delete", "configmap", "replica-defaults")
    p = kubectl("create", "deployment", "web2", "--image=nginx", check=False)
    assert p.returncode == 1
    assert p.stderr.strip() == (
        "error: failed to create deployment: policy 'default-replicas' "
        "with binding 'default-replicas' denied request: failed to configure binding: no params found for "
        "policy binding with `Deny` parameterNotFoundAction"
    )


def test_policy_validation_as_kubectl_prints_it(kubectl):
    bad = """
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: bad
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "Object{}"
"""
    p = kubectl("apply", "-f", "-", input=bad, check=False)
    assert p.returncode == 1
    assert (
        'spec.mutations[0].jsonPatch.expression: Invalid value: "Object{}": must evaluate to list(JSONPatch)'
        in p.stderr
    )
