"""RBAC objects stored with upstream's validation and defaults (not enforced)."""

from __future__ import annotations

import pytest

R = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture
def c(mockkube):
    return mockkube


def post(c, path, body):
    r = c.http.post(c.url + path, json=body)
    return r.status_code, r.json()


def test_roles_and_bindings_with_system_names_and_defaults(c, mockkube_namespace):
    ns = mockkube_namespace
    st, role = post(
        c,
        f"{R}/clusterroles",
        {
            "metadata": {"name": "system:driver"},
            "rules": [{"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["*"]}],
        },
    )
    assert st == 201, role
    st, rb = post(
        c,
        f"{R}/namespaces/{ns}/rolebindings",
        {
            "metadata": {"name": "driver"},
            "roleRef": {"kind": "ClusterRole", "name": "system:driver"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "default"}],
        },
    )
    assert st == 201, rb
    assert rb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert rb["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io" and "apiGroup" not in rb["subjects"][1]
    out = c.kubectl("get", "rolebinding", "driver", "-n", ns, "-o", "wide").stdout
    assert "ClusterRole/system:driver" in out and "alice" in out and f"{ns}:default" not in out.split("alice")[0]
    rb["roleRef"]["name"] = "other"
    r = c.http.put(f"{c.url}{R}/namespaces/{ns}/rolebindings/driver", json=rb)
    assert (
        r.status_code == 422
        and "roleRef: Invalid value" in r.json()["message"]
        and "cannot change roleRef" in r.json()["message"]
    )


@pytest.mark.parametrize(
    "path, body, message",
    [
        (
            "/roles",
            {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"]}]},
            "rules[0].verbs: Required value: verbs must contain at least one value",
        ),
        (
            "/roles",
            {"metadata": {"name": "r"}, "rules": [{"nonResourceURLs": ["/x"], "verbs": ["get"]}]},
            "namespaced rules cannot apply to non-resource URLs",
        ),
        (
            "/roles",
            {"metadata": {"name": "a/b"}, "rules": []},
            "metadata.name: Invalid value: \"a/b\": may not contain '/'",
        ),
        (
            "/rolebindings",
            {"metadata": {"name": "b"}, "roleRef": {"kind": "Pod", "name": "x"}},
            'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
        ),
        (
            "/rolebindings",
            {
                "metadata": {"name": "b"},
                "roleRef": {"kind": "Role", "name": "x"},
                "subjects": [{"kind": "Robot", "name": "r2"}],
            },
            'subjects[0].kind: Unsupported value: "Robot"',
        ),
    ],
)
def test_bad_rbac_objects_name_the_field(c, mockkube_namespace, path, body, message):
    st, status = post(c, f"{R}/namespaces/{mockkube_namespace}{path}", body)
    assert st == 422 and status["reason"] == "Invalid", status
    assert message in status["message"]


def test_cluster_role_binding_needs_a_namespace_for_service_accounts(c):
    st, status = post(
        c,
        f"{R}/clusterrolebindings",
        {
            "metadata": {"name": "b"},
            "roleRef": {"kind": "Role", "name": "x"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        },
    )
    assert st == 422
    assert 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"' in status["message"]
    assert "subjects[0].namespace: Required value" in status["message"]
