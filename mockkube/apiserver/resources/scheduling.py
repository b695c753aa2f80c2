"""scheduling.k8s.io/v1 PriorityClasses, with the two built-in system classes.

As upstream ``pkg/apis/scheduling`` and ``pkg/registry/scheduling/priorityclass``:
names with the ``system-`` prefix are reserved for the built-in classes, a user class
may not exceed 1000000000, value and preemptionPolicy are immutable, one class at most is
the global default (the Priority admission plugin's check), and the system classes cannot
be deleted.
"""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.resources import feature_drops
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

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


# -- scheduling.k8s.io/v1alpha2: Workload and PodGroup (KEP-4671, KEP-5832, KEP-5729) --------
#
# As upstream ``pkg/apis/scheduling/validation`` and ``pkg/registry/scheduling/{workload,
# podgroup}`` at v1.36: both kinds are served while GenericWorkload is on; a Workload's
# podGroupTemplates (at most 8) and every PodGroup spec field are immutable; a PodGroup's
# status is a subresource written by the scheduler (the PodGroupScheduled condition) and by
# the ResourceClaim controller (resourceClaimStatuses).

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_GROUP_RESOURCE_CLAIMS = 4  # +k8s:maxItems=4 on resourceClaims (v1alpha2)
_POLICIES = ("basic", "gang")
_DISRUPTION_MODES = ["Pod", "PodGroup"]


def _dns_label_errs(value: str, path: str) -> list[fe.FieldError]:
    from mockkube.machinery import names

    if not value:
        return [fe.required(path)]
    return [fe.invalid(path, value, msg) for msg in names.dns1123_label(value)]


def validate_scheduling_policy(policy: Any, path: str) -> list[fe.FieldError]:
    """validatePodGroupSchedulingPolicy: exactly one of ``basic`` and ``gang``; a gang's
    minCount is required and positive."""
    policy = policy if isinstance(policy, dict) else {}
    set_fields = [f"`{k}`" for k in _POLICIES if policy.get(k) is not None]
    if not set_fields:
        return [fe.invalid(path, "", "must specify one of: `basic`, `gang`")]
    if len(set_fields) > 1:
        return [
            fe.invalid(
                path,
                "{" + ", ".join(set_fields) + "}",
                "exactly one of `basic`, `gang` is required, but multiple fields are set",
            )
        ]
    gang = policy.get("gang")
    if isinstance(gang, dict):
        mc = gang.get("minCount")
        if not mc:
            return [fe.required(f"{path}.gang.minCount")]
        if isinstance(mc, int) and mc < 0:
            return [fe.invalid(f"{path}.gang.minCount", mc, "must be greater than zero")]
    return []


def validate_group_resource_claims(claims: Any, path: str) -> list[fe.FieldError]:
    """PodGroupResourceClaim entries as a pod's resourceClaims are checked: a unique DNS
    label name, exactly one of resourceClaimName and resourceClaimTemplateName."""
    from mockkube.machinery import names

    if len(claims or []) > MAX_GROUP_RESOURCE_CLAIMS:
        return [fe.too_many(path, len(claims), MAX_GROUP_RESOURCE_CLAIMS)]
    errs: list[fe.FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(claims or []):
        c = c if isinstance(c, dict) else {}
        p = f"{path}[{i}]"
        name = c.get("name") or ""
        errs += _dns_label_errs(name, f"{p}.name")
        if name and name in seen:
            errs.append(fe.duplicate(f"{p}.name", name))
        seen.add(name)
        rc, tmpl = c.get("resourceClaimName"), c.get("resourceClaimTemplateName")
        if rc is not None and tmpl is not None:
            errs.append(
                fe.invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
            )
        elif rc is None and tmpl is None:
            errs.append(fe.invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
        for key, value in (("resourceClaimName", rc), ("resourceClaimTemplateName", tmpl)):
            if value is not None:
                errs += [fe.invalid(f"{p}.{key}", value, m) for m in names.dns1123_subdomain(value)]
    return errs


def _validate_group_common(obj: dict, path: str) -> list[fe.FieldError]:
    """What a PodGroupTemplate and a PodGroup's spec share."""
    from mockkube.machinery import names

    errs = validate_scheduling_policy(obj.get("schedulingPolicy"), f"{path}.schedulingPolicy")
    errs += validate_group_resource_claims(obj.get("resourceClaims"), f"{path}.resourceClaims")
    mode = obj.get("disruptionMode")
    if mode is not None and mode not in _DISRUPTION_MODES:
        errs.append(fe.not_supported(f"{path}.disruptionMode", mode, _DISRUPTION_MODES))
    pcn = obj.get("priorityClassName")
    if pcn:
        errs += [fe.invalid(f"{path}.priorityClassName", pcn, m) for m in names.dns1123_subdomain(pcn)]
    for i, tc in enumerate(((obj.get("schedulingConstraints") or {}).get("topology")) or []):
        key = (tc or {}).get("key") or ""
        if not key:
            errs.append(fe.required(f"{path}.schedulingConstraints.topology[{i}].key"))
        else:
            errs += [
                fe.invalid(f"{path}.schedulingConstraints.topology[{i}].key", key, m) for m in names.qualified_name(key)
            ]
    return errs


def validate_workload(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs: list[fe.FieldError] = []
    ref = spec.get("controllerRef")
    if ref is not None:
        errs += _validate_controller_ref(ref, "spec.controllerRef")
    errs += _validate_templates(spec, create=True)
    return errs


def _validate_controller_ref(ref: dict, path: str) -> list[fe.FieldError]:
    from mockkube.machinery import names

    errs: list[fe.FieldError] = []
    group = ref.get("apiGroup") or ""
    if group:
        errs += [fe.invalid(f"{path}.apiGroup", group, m) for m in names.dns1123_subdomain(group)]
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(fe.required(f"{path}.{key}"))
        else:
            errs += [fe.invalid(f"{path}.{key}", value, m) for m in names.name_is_path_segment(value)]
    return errs


def _validate_templates(spec: dict, create: bool) -> list[fe.FieldError]:
    templates = spec.get("podGroupTemplates") or []
    path = "spec.podGroupTemplates"
    if not templates:
        return [fe.required(path, "must have at least one item")]
    if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
        return [fe.too_many(path, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES)]
    if not create:
        return []  # immutable after create: checked there
    errs: list[fe.FieldError] = []
    seen: set[str] = set()
    for i, t in enumerate(templates):
        t = t if isinstance(t, dict) else {}
        p = f"{path}[{i}]"
        name = t.get("name") or ""
        errs += _dns_label_errs(name, f"{p}.name")
        if name in seen:
            errs.append(fe.duplicate(p, name))
        seen.add(name)
        errs += _validate_group_common(t, p)
    return errs


def validate_workload_update(new: dict, old: dict) -> list[fe.FieldError]:
    from mockkube.machinery import names

    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[fe.FieldError] = []
    if old_spec.get("controllerRef") is not None:
        errs += names.validate_immutable(spec.get("controllerRef"), old_spec.get("controllerRef"), "spec.controllerRef")
    elif spec.get("controllerRef") is not None:
        errs += _validate_controller_ref(spec["controllerRef"], "spec.controllerRef")
    errs += names.validate_immutable(
        spec.get("podGroupTemplates"), old_spec.get("podGroupTemplates"), "spec.podGroupTemplates"
    )
    errs += _validate_templates(spec, create=False)
    return errs


def validate_pod_group(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs: list[fe.FieldError] = []
    ref = spec.get("podGroupTemplateRef")
    if ref is not None:
        workload = (ref or {}).get("workload")
        if workload is None:
            errs.append(fe.invalid("spec.podGroupTemplateRef", "", "must specify one of: `workload`"))
        else:
            for key in ("workloadName", "podGroupTemplateName"):
                errs += _dns_label_errs(workload.get(key) or "", f"spec.podGroupTemplateRef.workload.{key}")
    errs += _validate_group_common(spec, "spec")
    return errs


_POD_GROUP_SPEC_FIELDS = (
    "podGroupTemplateRef",
    "schedulingPolicy",
    "schedulingConstraints",
    "resourceClaims",
    "priorityClassName",
    "priority",
    "disruptionMode",
)


def validate_pod_group_update(new: dict, old: dict) -> list[fe.FieldError]:
    """Every spec field of a PodGroup is immutable."""
    from mockkube.machinery import names

    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[fe.FieldError] = []
    for key in _POD_GROUP_SPEC_FIELDS:
        errs += names.validate_immutable(spec.get(key), old_spec.get(key), f"spec.{key}")
    return errs


def validate_pod_group_status(new: dict, old: dict) -> list[fe.FieldError]:
    """ValidatePodGroupStatusUpdate: conditions as metav1 validates them; each
    resourceClaimStatuses entry names an entry of spec.resourceClaims."""
    from mockkube.apiserver.resources.dra_validation_common import validate_conditions
    from mockkube.machinery.fielderrors import Path

    status = new.get("status") or {}
    errs = validate_conditions(status.get("conditions"), Path("status.conditions"))
    claims = {(c or {}).get("name") for c in (new.get("spec") or {}).get("resourceClaims") or []}
    for i, s in enumerate(status.get("resourceClaimStatuses") or []):
        name = (s or {}).get("name")
        if name not in claims:
            errs.append(
                fe.invalid(
                    f"status.resourceClaimStatuses[{i}].name",
                    name,
                    "must match the name of an entry in `spec.resourceClaims`",
                )
            )
    return errs


class WorkloadStrategy(Strategy):
    tracks_generation = True
    drop_disabled = staticmethod(feature_drops.workload)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_workload(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_workload_update(new, old)


class PodGroupStrategy(SpecStatusStrategy):
    drop_disabled = staticmethod(feature_drops.pod_group)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_pod_group(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_pod_group_update(new, old)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_pod_group_status(new, old)


workloads = REGISTRY.add(
    ResourceType(
        "scheduling.k8s.io",
        "v1alpha2",
        "Workload",
        "workloads",
        namespaced=True,
        strategy=WorkloadStrategy(),
        feature_gate="GenericWorkload",
    )
)

podgroups = REGISTRY.add(
    ResourceType(
        "scheduling.k8s.io",
        "v1alpha2",
        "PodGroup",
        "podgroups",
        namespaced=True,
        subresources=(Subresource("status", "PodGroup"),),
        strategy=PodGroupStrategy(),
        feature_gate="GenericWorkload",
    )
)
