"""The API Priority and Fairness objects a v1.36 kube-apiserver starts with: the mandatory and
suggested FlowSchemas and PriorityLevelConfigurations of
``staging/src/k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go``, transcribed with
its helpers (``newFlowSchema``, ``groups``, ``resourceRule``, ...) in its order;
tests/unit/test_flowcontrol_bootstrap.py compares them with upstream's file.

Shared by the API server (created at start) and the configuration controller that keeps
them (``mockkube/controllers/apfconfig.py``).
"""

from __future__ import annotations

AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"

# k8s.io/apiserver/pkg/authentication/user and serviceaccount
SYSTEM_PRIVILEGED_GROUP = "system:masters"
NODES_GROUP = "system:nodes"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ALL_AUTHENTICATED = "system:authenticated"
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
KUBE_SCHEDULER = "system:kube-scheduler"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def _meta(name: str) -> dict:
    return {"name": name, "annotations": {AUTO_UPDATE: "true"}}


def new_priority_level(name: str, spec: dict) -> dict:
    return {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": _meta(name),
        "spec": spec,
    }


def new_flow_schema(name: str, pl_name: str, precedence: int, dm_type: str, *rules: dict) -> dict:
    spec: dict = {"priorityLevelConfiguration": {"name": pl_name}, "matchingPrecedence": precedence}
    if dm_type:
        spec["distinguisherMethod"] = {"type": dm_type}
    spec["rules"] = list(rules)
    return {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": _meta(name),
        "spec": spec,
    }


def groups(*names: str) -> list[dict]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def users(*names: str) -> list[dict]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def kube_system_service_account(*names: str) -> list[dict]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"name": n, "namespace": "kube-system"}} for n in names]


def resource_rule(verbs: list, api_groups: list, resources: list, namespaces: list, cluster_scope: bool) -> dict:
    rule = {"verbs": verbs, "apiGroups": api_groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = namespaces
    return rule


def non_resource_rule(verbs: list, urls: list) -> dict:
    return {"verbs": verbs, "nonResourceURLs": urls}


def _limited(shares: int, lendable: int, queues: int, hand: int, length: int) -> dict:
    return {
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": shares,
            "lendablePercent": lendable,
            "limitResponse": {
                "type": "Queue",
                "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": length},
            },
        },
    }


_ALL = resource_rule(["*"], ["*"], ["*"], ["*"], True)
_ALL_NON_RESOURCE = non_resource_rule(["*"], ["*"])


def _everything(subjects: list[dict]) -> dict:
    return {"subjects": subjects, "resourceRules": [dict(_ALL)], "nonResourceRules": [dict(_ALL_NON_RESOURCE)]}


# -- mandatory -------------------------------------------------------------------------------

PL_EXEMPT = new_priority_level(
    "exempt", {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}
)
PL_CATCH_ALL = new_priority_level(
    "catch-all",
    {
        "type": "Limited",
        "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0, "limitResponse": {"type": "Reject"}},
    },
)
FS_EXEMPT = new_flow_schema("exempt", "exempt", 1, "", _everything(groups(SYSTEM_PRIVILEGED_GROUP)))
FS_CATCH_ALL = new_flow_schema(
    "catch-all", "catch-all", 10000, "ByUser", _everything(groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED))
)

MANDATORY_PRIORITY_LEVELS = [PL_CATCH_ALL, PL_EXEMPT]
MANDATORY_FLOW_SCHEMAS = [FS_EXEMPT, FS_CATCH_ALL]

# -- suggested -------------------------------------------------------------------------------

SUGGESTED_PRIORITY_LEVELS = [
    new_priority_level("system", _limited(30, 33, 64, 6, 50)),
    new_priority_level("node-high", _limited(40, 25, 64, 6, 50)),
    new_priority_level("leader-election", _limited(10, 0, 16, 4, 50)),
    new_priority_level("workload-high", _limited(40, 50, 128, 6, 50)),
    new_priority_level("workload-low", _limited(100, 90, 128, 6, 50)),
    new_priority_level("global-default", _limited(20, 50, 128, 6, 50)),
]

_PROBES = new_flow_schema(
    "probes",
    "exempt",
    2,
    "",
    {
        "subjects": groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED),
        "nonResourceRules": [non_resource_rule(["get"], ["/healthz", "/readyz", "/livez"])],
    },
)
_SYSTEM_LEADER_ELECTION = new_flow_schema(
    "system-leader-election",
    "leader-election",
    100,
    "ByUser",
    {
        "subjects": users(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER) + kube_system_service_account("*"),
        "resourceRules": [
            resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], ["*"], False)
        ],
    },
)
_SYSTEM_NODE_HIGH = new_flow_schema(
    "system-node-high",
    "node-high",
    400,
    "ByUser",
    {
        "subjects": groups(NODES_GROUP),
        "resourceRules": [
            resource_rule(["*"], [""], ["nodes", "nodes/status"], ["*"], True),
            resource_rule(["*"], ["coordination.k8s.io"], ["leases"], ["*"], False),
        ],
    },
)
_SYSTEM_NODES = new_flow_schema("system-nodes", "system", 500, "ByUser", _everything(groups(NODES_GROUP)))
_KUBE_CONTROLLER_MANAGER = new_flow_schema(
    "kube-controller-manager", "workload-high", 800, "ByNamespace", _everything(users(KUBE_CONTROLLER_MANAGER))
)
_KUBE_SCHEDULER = new_flow_schema(
    "kube-scheduler", "workload-high", 800, "ByNamespace", _everything(users(KUBE_SCHEDULER))
)
_KUBE_SYSTEM_SERVICE_ACCOUNTS = new_flow_schema(
    "kube-system-service-accounts", "workload-high", 900, "ByNamespace", _everything(kube_system_service_account("*"))
)
_SERVICE_ACCOUNTS = new_flow_schema(
    "service-accounts", "workload-low", 9000, "ByUser", _everything(groups(ALL_SERVICE_ACCOUNTS_GROUP))
)
_GLOBAL_DEFAULT = new_flow_schema(
    "global-default", "global-default", 9900, "ByUser", _everything(groups(ALL_UNAUTHENTICATED, ALL_AUTHENTICATED))
)

# in upstream's list order
SUGGESTED_FLOW_SCHEMAS = [
    _SYSTEM_NODES,
    _SYSTEM_NODE_HIGH,
    _PROBES,
    _SYSTEM_LEADER_ELECTION,
    _KUBE_CONTROLLER_MANAGER,
    _KUBE_SCHEDULER,
    _KUBE_SYSTEM_SERVICE_ACCOUNTS,
    _SERVICE_ACCOUNTS,
    _GLOBAL_DEFAULT,
]


def priority_levels() -> list[dict]:
    """Every bootstrap PriorityLevelConfiguration, mandatory first (fresh copies)."""
    import copy

    return copy.deepcopy(MANDATORY_PRIORITY_LEVELS + SUGGESTED_PRIORITY_LEVELS)


def flow_schemas() -> list[dict]:
    import copy

    return copy.deepcopy(MANDATORY_FLOW_SCHEMAS + SUGGESTED_FLOW_SCHEMAS)


MANDATORY_NAMES = {
    "flowschemas": {o["metadata"]["name"]: o for o in MANDATORY_FLOW_SCHEMAS},
    "prioritylevelconfigurations": {o["metadata"]["name"]: o for o in MANDATORY_PRIORITY_LEVELS},
}
