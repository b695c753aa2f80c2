"""rbac.authorization.k8s.io/v1 over HTTP: the bootstrap policy, rule and binding validation."""

from __future__ import annotations

RBAC = "/apis/rbac.authorization.k8s.io/v1"


async def test_bootstrap_policy(api):
    st, body, _ = await api.get(f"{RBAC}/clusterroles/cluster-admin")
    assert st == 200 and body["rules"][0] == {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
    st, body, _ = await api.get(f"{RBAC}/clusterrolebindings/cluster-admin")
    assert body["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]
    st, body, _ = await api.get(f"{RBAC}/clusterroles")
    names = {o["metadata"]["name"] for o in body["items"]}
    assert {"admin", "edit", "view", "system:discovery", "system:basic-user"} <= names
    st, body, _ = await api.get(f"{RBAC}/clusterroles/view")
    assert body["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}
    ]


async def test_role_validation(api):
    role = {
        "metadata": {"name": "r"},
        "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
    }
    st, body, _ = await api.post(f"{RBAC}/namespaces/default/roles", role)
    assert st == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[1].nonResourceURLs", 'Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs'),
    ]
    st, body, _ = await api.post(f"{RBAC}/clusterroles", {"metadata": {"name": "c"}, "rules": [{"verbs": ["get"]}]})
    assert st == 422 and [c["field"] for c in body["details"]["causes"]] == ["rules[0].apiGroups", "rules[0].resources"]
    ok = {"metadata": {"name": "pod-reader"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
    assert (await api.post(f"{RBAC}/namespaces/default/roles", ok))[0] == 201


async def test_binding_validation_and_defaults(api):
    rb = {
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "default"}],
    }
    st, body, _ = await api.post(f"{RBAC}/namespaces/default/rolebindings", rb)
    assert st == 201 and body["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    st, body, _ = await api.patch(f"{RBAC}/namespaces/default/rolebindings/b", {"roleRef": {"name": "other"}})
    assert st == 422 and "roleRef: Invalid value" in body["message"] and "cannot change roleRef" in body["message"]
    crb = {
        "metadata": {"name": "c"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
        "subjects": [{"kind": "ServiceAccount", "name": "default"}, {"kind": "Robot", "name": "r"}],
    }
    st, body, _ = await api.post(f"{RBAC}/clusterrolebindings", crb)
    assert st == 422
    assert [c["field"] for c in body["details"]["causes"]] == [
        "roleRef.kind",
        "subjects[0].namespace",
        "subjects[1].kind",
    ]


async def test_tables(api):
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    st, body, _ = await api.get(f"{RBAC}/clusterrolebindings/cluster-admin", headers=accept)
    assert [c["name"] for c in body["columnDefinitions"]] == [
        "Name",
        "Role",
        "Age",
        "Users",
        "Groups",
        "ServiceAccounts",
    ]
    cells = body["rows"][0]["cells"]
    assert (cells[0], cells[1], cells[4]) == ("cluster-admin", "ClusterRole/cluster-admin", "system:masters")
    st, body, _ = await api.get(f"{RBAC}/clusterroles/view", headers=accept)
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Created At"]
