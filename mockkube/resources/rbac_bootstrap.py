"""The default ClusterRoles and ClusterRoleBindings of a fresh cluster.

As upstream ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy`` (a subset of the
``system:`` roles): ``cluster-admin`` bound to ``system:masters``, the discovery, basic-user
and public-info-viewer roles bound to authenticated (and, for public info, unauthenticated)
users, and the user-facing ``admin``/``edit``/``view`` roles, which aggregate the
``system:aggregate-to-*`` roles. The aggregated rules are written out here as the
aggregation controller would compute them at start-up.
"""

from __future__ import annotations

GROUP = "rbac.authorization.k8s.io"
_META_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
_RW = ["create", "delete", "deletecollection", "patch", "update"]
_READ = ["get", "list", "watch"]


def _rule(verbs: list[str], groups: list[str], resources: list[str]) -> dict:
    return {"verbs": verbs, "apiGroups": groups, "resources": resources}


def _urls(verbs: list[str], urls: list[str]) -> dict:
    return {"verbs": verbs, "nonResourceURLs": urls}


_VIEW_RULES = [
    _rule(_READ, [""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
                        "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                        "services", "services/status"]),
    _rule(_READ, [""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
                        "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"]),
    _rule(_READ, [""], ["namespaces"]),
    _rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(_READ, ["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                            "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                            "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
    _rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    _rule(_READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    _rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    _rule(_READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
    _rule(_READ, ["resource.k8s.io"], ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"]),
]
_EDIT_RULES = [
    _rule(["create", "delete", "deletecollection", "patch", "update"], [""],
          ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(_RW, [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                      "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                      "services/proxy"]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(_RW, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                          "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
    _rule(_RW, ["autoscaling"], ["horizontalpodautoscalers"]),
    _rule(_RW, ["batch"], ["cronjobs", "jobs"]),
    _rule(_RW, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    _rule(_RW, ["policy"], ["poddisruptionbudgets"]),
    _rule(_RW, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(_RW, ["resource.k8s.io"], ["resourceclaims", "resourceclaimtemplates"]),
    _rule(_READ, [""], ["secrets"]),
]
_ADMIN_RULES = [
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    _rule(_RW + _READ, [GROUP], ["rolebindings", "roles"]),
]


def _cluster_role(name: str, rules: list[dict], labels: dict | None = None, aggregate_from: str = "") -> dict:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
           "metadata": {"name": name, "labels": {**_META_LABELS, **(labels or {})}, "annotations": dict(_AUTOUPDATE)},
           "rules": rules}
    if aggregate_from:
        obj["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{aggregate_from}": "true"}}]}
    return obj


def _binding(name: str, role: str, groups: list[str]) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(_META_LABELS), "annotations": dict(_AUTOUPDATE)},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]}


def _sa_binding(role: str, namespace: str, sa: str) -> dict:
    b = _binding(role, role, [])
    b["subjects"] = [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}]
    return b


def _agg(to: str) -> dict:
    return {f"rbac.authorization.k8s.io/aggregate-to-{to}": "true"}


def cluster_roles() -> list[dict]:
    """ClusterRoles() of the bootstrap policy (the subset mockkube ships)."""
    view, edit, admin = _VIEW_RULES, _VIEW_RULES + _EDIT_RULES, _VIEW_RULES + _EDIT_RULES + _ADMIN_RULES
    return [
        _cluster_role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _urls(["*"], ["*"])]),
        _cluster_role("admin", admin, aggregate_from="admin"),
        _cluster_role("edit", edit, labels=_agg("admin"), aggregate_from="edit"),
        _cluster_role("view", view, labels=_agg("edit"), aggregate_from="view"),
        _cluster_role("system:aggregate-to-admin", _ADMIN_RULES, labels=_agg("admin")),
        _cluster_role("system:aggregate-to-edit", _EDIT_RULES, labels=_agg("edit")),
        _cluster_role("system:aggregate-to-view", _VIEW_RULES, labels=_agg("view")),
        _cluster_role("system:discovery", [_urls(["get"], ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                                                           "/livez", "/openapi", "/openapi/*", "/readyz",
                                                           "/version", "/version/"])]),
        _cluster_role("system:basic-user", [
            _rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        _cluster_role("system:public-info-viewer", [_urls(["get"], ["/healthz", "/livez", "/readyz", "/version",
                                                                    "/version/"])]),
        _cluster_role("system:auth-delegator", [
            _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"])]),
        _cluster_role("system:service-account-issuer-discovery", [
            _urls(["get"], ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                            "/openid/v1/jwks", "/openid/v1/jwks/"])]),
        # controller roles (upstream's controller_policy.go), for the controllers whose writes
        # RBAC checks in-process: the aggregation controller writes rules it does not hold
        _cluster_role("system:controller:clusterrole-aggregation-controller", [
            _rule(["escalate", "get", "list", "patch", "update", "watch"], [GROUP], ["clusterroles"])]),
        _cluster_role("system:monitoring", [_urls(["get"], ["/healthz", "/healthz/*", "/livez", "/livez/*",
                                                            "/metrics", "/metrics/slis", "/readyz",
                                                            "/readyz/*"])]),
    ]


def namespaced_roles() -> list[dict]:
    """Roles of the bootstrap policy in kube-system: the one charts of webhooks and
    extension servers bind, to read the request-header authentication configuration."""
    return [{"apiVersion": f"{GROUP}/v1", "kind": "Role",
             "metadata": {"name": "extension-apiserver-authentication-reader", "namespace": "kube-system",
                          "labels": dict(_META_LABELS), "annotations": dict(_AUTOUPDATE)},
             "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["configmaps"],
                        "resourceNames": ["extension-apiserver-authentication"]}]}]


def cluster_role_bindings() -> list[dict]:
    """ClusterRoleBindings() of the bootstrap policy (the subset mockkube ships)."""
    return [
        _binding("cluster-admin", "cluster-admin", ["system:masters"]),
        # as kubeadm binds it: the default identity (kubernetes-admin) is in this group
        _binding("kubeadm:cluster-admins", "cluster-admin", ["kubeadm:cluster-admins"]),
        _binding("system:discovery", "system:discovery", ["system:authenticated"]),
        _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 ["system:authenticated", "system:unauthenticated"]),
        _binding("system:monitoring", "system:monitoring", ["system:monitoring"]),
        _binding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery",
                 ["system:serviceaccounts"]),
        _sa_binding("system:controller:clusterrole-aggregation-controller", "kube-system",
                    "clusterrole-aggregation-controller"),
    ]
