"""The RBAC objects of a fresh cluster: upstream's bootstrap policy, then mockkube's own.

Upstream's part comes from the golden files kube-apiserver's bootstrap policy is tested
against (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata``), vendored in
``bootstrappolicy/`` by scripts/update_bootstrappolicy.py (which says where each file comes
from), plus ``v1.36-delta.yaml``: rules v1.36 has that the vendored snapshot lacks; read from
``policy.json``, the same files as parsed (the script writes it), as parsing the YAML took a
good part of every start. The
aggregated roles (``admin``, ``edit``, ``view``) ship with ``rules: null`` upstream and get
their rules from the clusterrole-aggregation controller; they are written out here as that
controller computes them, so a cluster without components has them too.

mockkube's additions, kept apart below: the ``kubeadm:cluster-admins`` binding a kubeadm/kind
cluster has (the default identity is in that group), and the ServiceAccount, ClusterRole and
binding each built-in simulated DRA driver gets, as a real driver's Helm chart installs them.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from mockkube.rules.rbac import aggregated_rules

GROUP = "rbac.authorization.k8s.io"
POLICY_DIR = Path(__file__).parent / "bootstrappolicy"
_META_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


@functools.cache
def _policy() -> dict[str, Any]:
    """The vendored files as parsed, by file name (scripts/update_bootstrappolicy.py --compile)."""
    return json.loads((POLICY_DIR / "policy.json").read_text())


def _load(name: str):
    return _policy().get(name)


@functools.cache
def _items(name: str) -> tuple[dict, ...]:
    return tuple((_load(name) or {}).get("items") or ())


def golden(name: str) -> list[dict]:
    """The objects of one vendored file (fresh copies)."""
    return copy.deepcopy(list(_items(name)))


def _delta() -> dict:
    return copy.deepcopy(_load("v1.36-delta.yaml") or {})


def upstream_cluster_roles() -> list[dict]:
    """ClusterRoles() + ControllerRoles() of a v1.36 kube-apiserver, as the golden files have
    them (aggregated roles with ``rules: null``), with the v1.36 delta merged in."""
    roles = golden("cluster-roles.yaml") + golden("controller-roles.yaml")
    extra = _delta().get("clusterRoles") or {}
    for r in roles:
        for rule in extra.get(r["metadata"]["name"]) or ():
            if rule not in (r.get("rules") or []):
                r["rules"] = [*(r.get("rules") or []), rule]
    return roles


def _aggregate(roles: list[dict]) -> None:
    """Fill the aggregated roles' rules as the clusterrole-aggregation controller does
    (repeated until stable: ``admin`` aggregates ``edit``, which aggregates ``view``)."""
    for _ in range(len(roles)):
        changed = False
        for r in roles:
            if r.get("aggregationRule"):
                rules = aggregated_rules(r, roles)
                if rules != r.get("rules"):
                    r["rules"], changed = rules, True
        if not changed:
            return


# -- mockkube's additions ---------------------------------------------------------------
def _cluster_role(name: str, rules: list[dict]) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": dict(_META_LABELS), "annotations": dict(_AUTOUPDATE)},
        "rules": rules,
    }


def _binding(name: str, role: str, subjects: list[dict]) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name, "labels": dict(_META_LABELS), "annotations": dict(_AUTOUPDATE)},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    }


def driver_rules(driver: str, multi_node: bool = False) -> list[dict]:
    """What a DRA driver's chart grants its ServiceAccount (kubelet plugin and controller):
    publish ResourceSlices, read claims and classes, and write its own entries of a claim's
    ``status.devices`` (``resourceclaims/driver`` with the driver as resource name:
    ``associated-node:*`` from a node-bound token; ``arbitrary-node:*`` for a controller that
    acts for devices of many nodes, such as a fabric attachment controller)."""
    r = "resource.k8s.io"
    scope = "arbitrary-node" if multi_node else "associated-node"
    return [
        {
            "apiGroups": [r],
            "resources": ["resourceslices"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
        },
        {"apiGroups": [r], "resources": ["resourceclaims", "deviceclasses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [r], "resources": ["resourceclaims/status"], "verbs": ["update", "patch"]},
        {
            "apiGroups": [r],
            "resources": ["resourceclaims/driver"],
            "resourceNames": [driver],
            "verbs": [f"{scope}:update", f"{scope}:patch"],
        },
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    ]


def driver_objects() -> tuple[list[dict], list[dict]]:
    """(ClusterRoles, ClusterRoleBindings) of the built-in simulated drivers."""
    from mockkube.rules.identities import BUILTIN_DRIVERS, DRIVER_NAMESPACE, MULTI_NODE_DRIVERS, driver_service_account

    roles, bindings = [], []
    for driver in sorted(BUILTIN_DRIVERS):
        sa = driver_service_account(driver)
        name = f"mockkube:dra-driver:{driver}"
        roles.append(_cluster_role(name, driver_rules(driver, driver in MULTI_NODE_DRIVERS)))
        bindings.append(_binding(name, name, [{"kind": "ServiceAccount", "name": sa, "namespace": DRIVER_NAMESPACE}]))
    return roles, bindings


def mockkube_cluster_role_bindings() -> list[dict]:
    """kubeadm's binding of its admin group (the default identity's group) to cluster-admin."""
    return [
        _binding(
            "kubeadm:cluster-admins",
            "cluster-admin",
            [{"apiGroup": GROUP, "kind": "Group", "name": "kubeadm:cluster-admins"}],
        )
    ]


# resource.k8s.io/v1beta2 DeviceTaintRules are served with DRADeviceTaintRules on (off by
# default in v1.36): the rules upstream's policy adds with that gate on (its
# cluster-roles-featuregates/controller-roles-featuregates golden files) to the scheduler and
# the device-taint-eviction controller, in roles of their own (created whatever the gate)
FEATURE_ROLE = "mockkube:feature:DRADeviceTaintRules"


def feature_objects() -> tuple[list[dict], list[dict]]:
    read = {"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules"], "verbs": ["get", "list", "watch"]}
    status = {"apiGroups": ["resource.k8s.io"], "resources": ["devicetaintrules/status"], "verbs": ["patch", "update"]}
    scheduler = {"apiGroup": GROUP, "kind": "User", "name": "system:kube-scheduler"}
    controller = {"kind": "ServiceAccount", "name": "device-taint-eviction-controller", "namespace": "kube-system"}
    roles, bindings = [], []
    for who, rules, subject in (
        ("kube-scheduler", [read], scheduler),
        ("device-taint-eviction-controller", [status, read], controller),
    ):
        name = f"{FEATURE_ROLE}:{who}"
        roles.append(_cluster_role(name, rules))
        bindings.append(_binding(name, name, [subject]))
    return roles, bindings


# resource.k8s.io/v1alpha3 ResourcePoolStatusRequests (DRAResourcePoolStatus, alpha): the
# controller that answers them writes statuses and deletes expired requests (its informers
# list and watch as kube-controller-manager)
POOL_STATUS_ROLE = "mockkube:feature:DRAResourcePoolStatus:resourcepoolstatusrequest-controller"


def pool_status_objects() -> tuple[list[dict], list[dict]]:
    rules = [
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourcepoolstatusrequests"],
            "verbs": ["delete", "get", "list", "watch"],
        },
        {
            "apiGroups": ["resource.k8s.io"],
            "resources": ["resourcepoolstatusrequests/status"],
            "verbs": ["patch", "update"],
        },
    ]
    subject = {"kind": "ServiceAccount", "name": "resourcepoolstatusrequest-controller", "namespace": "kube-system"}
    return [_cluster_role(POOL_STATUS_ROLE, rules)], [_binding(POOL_STATUS_ROLE, POOL_STATUS_ROLE, [subject])]


# -- what upstream's policy adds with a gate on ----------------------------------------------
# policy.go and controller_policy.go append these when the gate is on; the golden files (default
# gates) lack them. Read from the v1.38 development line's policy (a fork in the search index;
# v1.36's own text was not at hand), keeping only what gates v1.36 has: the scheduling.k8s.io
# v1alpha2 Workload and PodGroup APIs (GenericWorkload), claims shared per PodGroup
# (DRAWorkloadResourceClaims) and Workloads made by the Job controller (WorkloadWithJob).
_READ = ("get", "list", "watch")
_WRITE = ("create", "delete", "deletecollection", "patch", "update")
_SCHEDULING = "scheduling.k8s.io"
PODGROUP_PROTECTION = "podgroup-protection-controller"


def _policy_rule(group: str, resources: tuple[str, ...], verbs: tuple[str, ...]) -> dict:
    """A rule as rbacv1helpers.NewRule builds it (verbs sorted, resources as given)."""
    return {"apiGroups": [group], "resources": list(resources), "verbs": sorted(verbs)}


def gated_rules(gates: Any) -> dict[str, list[dict]]:
    """{bootstrap ClusterRole: the rules upstream appends to it with these gates on}."""
    out: dict[str, list[dict]] = {}
    if gates is None:
        return out
    if gates.enabled("GenericWorkload"):
        out["system:kube-scheduler"] = [
            _policy_rule(_SCHEDULING, ("podgroups",), _READ),
            _policy_rule(_SCHEDULING, ("podgroups/status",), ("patch", "update")),
        ]
        out["system:aggregate-to-view"] = [
            _policy_rule(_SCHEDULING, ("workloads", "podgroups", "podgroups/status"), _READ)
        ]
        out["system:aggregate-to-edit"] = [_policy_rule(_SCHEDULING, ("workloads", "podgroups"), _WRITE)]
    if gates.enabled("DRAWorkloadResourceClaims"):
        out["system:controller:resource-claim-controller"] = [
            _policy_rule(_SCHEDULING, ("podgroups",), _READ),
            _policy_rule(_SCHEDULING, ("podgroups/status",), ("patch", "update")),
        ]
    if gates.enabled("WorkloadWithJob"):
        out["system:controller:job-controller"] = [
            _policy_rule(_SCHEDULING, ("workloads", "podgroups"), ("create", "get", "list", "patch", "update", "watch"))
        ]
    return out


def gated_controller_objects(gates: Any) -> tuple[list[dict], list[dict]]:
    """(ClusterRoles, ClusterRoleBindings) of controllers upstream's policy has only with a
    gate on: the PodGroup protection controller (GenericWorkload)."""
    if gates is None or not gates.enabled("GenericWorkload"):
        return [], []
    name = f"system:controller:{PODGROUP_PROTECTION}"
    role = _cluster_role(
        name,
        [
            _policy_rule(_SCHEDULING, ("podgroups",), ("get", "list", "update", "watch")),
            _policy_rule("", ("pods",), _READ),
        ],
    )
    binding = _binding(
        name, name, [{"kind": "ServiceAccount", "name": PODGROUP_PROTECTION, "namespace": "kube-system"}]
    )
    return [role], [binding]


# -- what the server creates ---------------------------------------------------------------
def cluster_roles(gates: Any = None) -> list[dict]:
    """Every bootstrap ClusterRole: upstream's for these feature gates (aggregations
    computed), then mockkube's. ``gates`` None: v1.36's defaults."""
    roles = upstream_cluster_roles() + gated_controller_objects(gates)[0]
    for r in roles:
        for rule in gated_rules(gates).get(r["metadata"]["name"]) or ():
            if rule not in (r.get("rules") or []):
                r["rules"] = [*(r.get("rules") or []), rule]
    roles += feature_objects()[0] + pool_status_objects()[0] + driver_objects()[0]
    _aggregate(roles)
    return roles


def cluster_role_bindings(gates: Any = None) -> list[dict]:
    return (
        golden("cluster-role-bindings.yaml")
        + golden("controller-role-bindings.yaml")
        + gated_controller_objects(gates)[1]
        + mockkube_cluster_role_bindings()
        + feature_objects()[1]
        + pool_status_objects()[1]
        + driver_objects()[1]
    )


def reconciled_rules(existing: dict, expected: dict) -> list[dict] | None:
    """The rules the rbac/bootstrap-roles post-start hook gives an existing bootstrap
    ClusterRole: the expected rules it lacks added, nothing removed (reconciliation's
    RemoveExtraPermissions is false); None when nothing changes or the role opts out with
    ``rbac.authorization.kubernetes.io/autoupdate: "false"``. A rule counts as present when an
    equal one is (upstream's coverage check also accepts broader rules)."""
    annotations = (existing.get("metadata") or {}).get("annotations") or {}
    if annotations.get("rbac.authorization.kubernetes.io/autoupdate") == "false":
        return None
    have = list(existing.get("rules") or [])
    missing = [r for r in expected.get("rules") or [] if r not in have]
    return have + missing if missing else None


def namespaced_roles() -> list[dict]:
    return golden("namespace-roles.yaml")


def namespaced_role_bindings() -> list[dict]:
    return golden("namespace-role-bindings.yaml")
