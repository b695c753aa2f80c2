"""scheduling.k8s.io/v1 PriorityClasses, with the two built-in system classes.

As upstream ``pkg/apis/scheduling`` and ``pkg/registry/scheduling/priorityclass``:
names with the ``system-`` prefix are reserved for the built-in classes, a user class
may not exceed 1000000000, value and preemptionPolicy are immutable, one class at most is
the global default (the Priority admission plugin's check), and the system classes cannot
be deleted.
"""

from __future__ import annotations

from typing import Any

from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
SYSTEM_NODE_CRITICAL = "system-node-critical"

# scheduling.SystemPriorityClasses(): what kube-apiserver's post-start hook creates
SYSTEM_PRIORITY_CLASSES: list[dict] = [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": SYSTEM_NODE_CRITICAL},
        "value": SYSTEM_CRITICAL_PRIORITY + 1000,
        "description": "Used for system critical pods that must not be moved from their current node.",
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": SYSTEM_CLUSTER_CRITICAL},
        "value": SYSTEM_CRITICAL_PRIORITY,
        "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
        "node if necessary.",
    },
]
_PREEMPTION_POLICIES = ["Never", "PreemptLowerPriority"]


def _known_system_class(name: str, value: Any, global_default: bool) -> str:
    """scheduling.IsKnownSystemPriorityClass: "" when it is one, else the error."""
    for pc in SYSTEM_PRIORITY_CLASSES:
        if pc["metadata"]["name"] == name:
            if pc["value"] != value:
                return f"value of {name} PriorityClass must be {pc['value']}"
            if global_default:
                return f"globalDefault of {name} PriorityClass must be false"
            return ""
    return f"{name} is not a known system priority class"


def validate_priority_class(pc: dict) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    name = (pc.get("metadata") or {}).get("name") or ""
    value = pc.get("value")
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system_class(name, value, bool(pc.get("globalDefault")))
        if why:
            errs.append(
                fe.forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PREFIX}' prefix are "
                    f"reserved for system use only. error: {why}",
                )
            )
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            fe.forbidden(
                "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            )
        )
    policy = pc.get("preemptionPolicy")
    if policy is not None and policy not in _PREEMPTION_POLICIES:
        errs.append(fe.not_supported("preemptionPolicy", policy, _PREEMPTION_POLICIES))
    return errs


class PriorityClassStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        obj.setdefault("value", 0)

    def admit(self, obj: dict, old: dict | None, res: Any) -> None:
        """The Priority admission plugin's PriorityClass check: one global default."""
        if not obj.get("globalDefault"):
            return
        name = obj["metadata"].get("name", "")
        for e in res.list(priorityclasses, None).entries:
            other = e.obj
            if other.get("globalDefault") and other["metadata"]["name"] != name:
                raise errors.forbidden(
                    "priorityclasses",
                    "scheduling.k8s.io",
                    name,
                    f"PriorityClass {other['metadata']['name']} is already marked as default. "
                    f"Only one default can exist",
                )

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_priority_class(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = validate_priority_class(new)
        if new.get("value") != old.get("value"):
            errs.append(fe.forbidden("value", "may not be changed in an update."))
        if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
            errs.append(fe.invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable"))
        return errs

    def can_delete(self, obj: dict) -> str:
        name = (obj.get("metadata") or {}).get("name", "")
        if any(pc["metadata"]["name"] == name for pc in SYSTEM_PRIORITY_CLASSES):
            return "this is a system priority class and cannot be deleted"
        return ""


priorityclasses = REGISTRY.add(
    ResourceType(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        namespaced=False,
        short_names=("pc",),
        strategy=PriorityClassStrategy(),
    )
)
