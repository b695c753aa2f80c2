"""kubectl with a MutatingAdmissionPolicy: applied from YAML, listed with upstream's columns,
mutating what kubectl creates."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: default-team
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  matchConditions:
  - name: no-team-yet
    expression: "!has(object.metadata.labels) || !('team' in object.metadata.labels)"
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"team": "unassigned"}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: default-team
spec:
  policyName: default-team
"""


def test_kubectl_mutating_admission_policy(mockkube_fresh):
    c = mockkube_fresh
    c.kubectl("apply", "-f", "-", input=POLICY)
    lines = c.kubectl("get", "mutatingadmissionpolicies").stdout.splitlines()
    assert lines[0].split() == ["NAME", "MUTATIONS", "PARAMKIND", "AGE"]
    assert lines[1].split()[:3] == ["default-team", "1", "<unset>"]
    out = json.loads(c.kubectl("create", "configmap", "plain", "-o", "json").stdout)
    assert out["metadata"]["labels"] == {"team": "unassigned"}
    c.kubectl("create", "configmap", "owned")
    c.kubectl("label", "configmap", "owned", "team=storage", "--overwrite")
    assert c.kubectl("get", "configmap", "owned", "-o", "jsonpath={.metadata.labels.team}").stdout == "storage"
