"""kubectl against rbac.authorization.k8s.io: the bootstrap roles, `kubectl create role`,
`create rolebinding` and `get -o wide` as on a real cluster."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def test_kubectl_rbac_objects(mockkube_fresh):
    c = mockkube_fresh
    out = c.kubectl("get", "clusterroles", "cluster-admin", "view", "edit", "admin").stdout
    assert out.splitlines()[0].split() == ["NAME", "CREATED", "AT"]
    c.kubectl("create", "role", "e2e-pod-reader", "--verb=get,list", "--resource=pods")
    c.kubectl(
        "create", "rolebinding", "e2e-read", "--role=e2e-pod-reader", "--user=alice", "--serviceaccount=default:builder"
    )
    lines = c.kubectl("get", "rolebinding", "e2e-read", "-o", "wide").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    cells = lines[1].split()
    assert (cells[0], cells[1], cells[3], cells[4]) == ("e2e-read", "Role/e2e-pod-reader", "alice", "default/builder")
    bad = (
        '{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},'
        ' "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"}}'
    )
    r = c.kubectl("create", "-f", "-", input=bad, check=False)
    assert r.returncode != 0 and 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"' in r.stderr
