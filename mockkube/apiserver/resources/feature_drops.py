"""What kube-apiserver's strategies drop when a feature gate is off: upstream's
``dropDisabled...Fields`` rules for the DRA kinds, the pod status fields DRA adds and the
pod spec's ``schedulingGroup`` (in pods and in every workload's pod template).

Each rule drops a field from the new object unless its gate is on or the old object (on
an update) already uses the feature, so turning a gate off never strips what is stored.
Pure functions over plain dicts; the strategies call ``drop_disabled(new, old, gates,
subresource)``.

Where upstream's code and its intent differ, the code wins: ResourceClaim
``constraints[].distinctAttribute`` is not dropped with DRAConsumableCapacity off
(upstream's loop clears a copy), as docs/compatibility.md notes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

Gates = Any  # mockkube.config.features.FeatureGates (anything with enabled(name))


def _requests(spec: dict | None) -> list[dict]:
    return [r for r in (((spec or {}).get("devices") or {}).get("requests") or []) if isinstance(r, dict)]


def _subrequests(spec: dict | None) -> Iterator[dict]:
    """Every ``exactly`` and ``firstAvailable[]`` entry of a claim spec's requests."""
    for r in _requests(spec):
        if isinstance(r.get("exactly"), dict):
            yield r["exactly"]
        for sub in r.get("firstAvailable") or []:
            if isinstance(sub, dict):
                yield sub


def _results(claim: dict | None) -> list[dict]:
    alloc = ((claim or {}).get("status") or {}).get("allocation") or {}
    return [r for r in ((alloc.get("devices") or {}).get("results") or []) if isinstance(r, dict)]


def _status_devices(claim: dict | None) -> list[dict]:
    return [d for d in (((claim or {}).get("status") or {}).get("devices") or []) if isinstance(d, dict)]


def _slice_devices(obj: dict | None) -> list[dict]:
    return [d for d in (((obj or {}).get("spec") or {}).get("devices") or []) if isinstance(d, dict)]


def _rule(gate: str | tuple[str, ...], in_use: Callable[[Any], bool], drop: Callable[[Any], None]):
    """A dropDisabled...Fields rule: drop unless every gate is on or ``old`` uses it."""
    gates_needed = (gate,) if isinstance(gate, str) else gate

    def apply(new: Any, old: Any, gates: Gates) -> None:
        if all(gates.enabled(g) for g in gates_needed):
            return
        if old is not None and in_use(old):
            return
        drop(new)

    return apply


# -- ResourceClaimSpec (pkg/registry/resource/resourceclaimspec) -------------------------


def _drop_first_available(spec: dict) -> None:
    for r in _requests(spec):
        r.pop("firstAvailable", None)


def _drop_tolerations(spec: dict) -> None:
    for sub in _subrequests(spec):
        sub.pop("tolerations", None)


def _drop_admin_access(spec: dict) -> None:
    for r in _requests(spec):
        if isinstance(r.get("exactly"), dict):
            r["exactly"].pop("adminAccess", None)


def _drop_capacity(spec: dict) -> None:
    for sub in _subrequests(spec):
        sub.pop("capacity", None)


def _spec_capacity_in_use(spec: dict) -> bool:
    constraints = ((spec or {}).get("devices") or {}).get("constraints") or []
    if any(isinstance(c, dict) and c.get("distinctAttribute") is not None for c in constraints):
        return True
    return any(sub.get("capacity") is not None for sub in _subrequests(spec))


CLAIM_SPEC_RULES = (  # upstream's order: prioritized list first, so its sub-requests go first
    _rule("DRAPrioritizedList", lambda s: any(r.get("firstAvailable") for r in _requests(s)), _drop_first_available),
    _rule("DRADeviceTaints", lambda s: any(sub.get("tolerations") for sub in _subrequests(s)), _drop_tolerations),
    _rule(
        "DRAAdminAccess",
        lambda s: any(
            isinstance(r.get("exactly"), dict) and r["exactly"].get("adminAccess") is not None for r in _requests(s)
        ),
        _drop_admin_access,
    ),
    _rule("DRAConsumableCapacity", _spec_capacity_in_use, _drop_capacity),
)


def claim_spec(new: dict | None, old: dict | None, gates: Gates) -> None:
    """resourceclaimspec.DropDisabledFields on a claim's (or a template's) ``spec``."""
    if not isinstance(new, dict):
        return
    for rule in CLAIM_SPEC_RULES:
        rule(new, old, gates)


# -- ResourceClaim status (pkg/registry/resource/resourceclaim) ----------------------------


def _drop_status_devices(claim: dict) -> None:
    (claim.get("status") or {}).pop("devices", None)


def _drop_result_admin_access(claim: dict) -> None:
    for r in _results(claim):
        r.pop("adminAccess", None)


def _claim_capacity_in_use(claim: dict) -> bool:
    if _spec_capacity_in_use(claim.get("spec") or {}):
        return True
    if any(r.get("shareID") is not None or r.get("consumedCapacity") is not None for r in _results(claim)):
        return True
    return any(d.get("shareID") is not None for d in _status_devices(claim))


def _drop_claim_capacity(claim: dict) -> None:
    for r in _results(claim):
        r.pop("shareID", None)
        r.pop("consumedCapacity", None)
    for d in _status_devices(claim):
        d.pop("shareID", None)


def _drop_result_binding_conditions(claim: dict) -> None:
    for r in _results(claim):
        r.pop("bindingConditions", None)
        r.pop("bindingFailureConditions", None)


CLAIM_STATUS_RULES = (
    _rule("DRAResourceClaimDeviceStatus", lambda c: bool(_status_devices(c)), _drop_status_devices),
    _rule(
        "DRAAdminAccess",
        lambda c: (
            any(
                isinstance(r.get("exactly"), dict) and r["exactly"].get("adminAccess") is not None
                for r in _requests(c.get("spec"))
            )
            or any(r.get("adminAccess") is not None for r in _results(c))
        ),
        _drop_result_admin_access,
    ),
    _rule("DRAConsumableCapacity", _claim_capacity_in_use, _drop_claim_capacity),
    _rule(
        "DRADeviceBindingConditions",
        lambda c: any(
            r.get("bindingConditions") is not None or r.get("bindingFailureConditions") is not None for r in _results(c)
        ),
        _drop_result_binding_conditions,
    ),
)


def claim(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    """A ResourceClaim: the spec's rules on create and update, the status's on a status update."""
    if subresource == "status":
        for rule in CLAIM_STATUS_RULES:
            rule(new, old, gates)
        return
    claim_spec(new.get("spec"), (old or {}).get("spec") if old is not None else None, gates)


def claim_template(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    """A ResourceClaimTemplate: the claim spec's rules on ``spec.spec``."""
    old_spec = ((old or {}).get("spec") or {}).get("spec") if old is not None else None
    claim_spec((new.get("spec") or {}).get("spec"), old_spec, gates)


# -- ResourceSlice (pkg/registry/resource/resourceslice) ------------------------------------


def _drop_device_fields(*fields: str) -> Callable[[dict], None]:
    def drop(obj: dict) -> None:
        for d in _slice_devices(obj):
            for f in fields:
                d.pop(f, None)

    return drop


def _partitionable_in_use(obj: dict) -> bool:
    spec = obj.get("spec") or {}
    if spec.get("sharedCounters") or spec.get("perDeviceNodeSelection") is not None:
        return True
    return any(
        d.get("consumesCounters") or any(d.get(f) is not None for f in ("nodeName", "nodeSelector", "allNodes"))
        for d in _slice_devices(obj)
    )


def _drop_partitionable(obj: dict) -> None:
    spec = obj.get("spec") or {}
    spec.pop("sharedCounters", None)
    spec.pop("perDeviceNodeSelection", None)
    _drop_device_fields("consumesCounters", "nodeName", "nodeSelector", "allNodes")(obj)


def _slice_capacity_in_use(obj: dict) -> bool:
    for d in _slice_devices(obj):
        if d.get("allowMultipleAllocations") is not None:
            return True
        if any(isinstance(c, dict) and c.get("requestPolicy") is not None for c in (d.get("capacity") or {}).values()):
            return True
    return False


LIST_VALUE_FIELDS = ("ints", "bools", "strings", "versions")  # DeviceAttribute's +featureGate=DRAListTypeAttributes


def _list_attributes(obj: dict) -> Iterator[dict]:
    """Every device attribute of a slice that holds a list value."""
    for d in _slice_devices(obj):
        for a in (d.get("attributes") or {}).values():
            if isinstance(a, dict) and any(a.get(f) is not None for f in LIST_VALUE_FIELDS):
                yield a


def _drop_list_attributes(obj: dict) -> None:
    """The list values go; an attribute that had nothing else is left empty, which
    validation then refuses (it must have exactly one value)."""
    for a in list(_list_attributes(obj)):
        for f in LIST_VALUE_FIELDS:
            a.pop(f, None)


def _drop_slice_capacity(obj: dict) -> None:
    for d in _slice_devices(obj):
        d.pop("allowMultipleAllocations", None)
        for c in (d.get("capacity") or {}).values():
            if isinstance(c, dict):
                c.pop("requestPolicy", None)


SLICE_RULES = (
    _rule("DRADeviceTaints", lambda o: any(d.get("taints") for d in _slice_devices(o)), _drop_device_fields("taints")),
    _rule("DRAPartitionableDevices", _partitionable_in_use, _drop_partitionable),
    _rule(
        ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
        lambda o: any(
            d.get("bindingConditions") or d.get("bindingFailureConditions") or d.get("bindsToNode") is not None
            for d in _slice_devices(o)
        ),
        _drop_device_fields("bindingConditions", "bindingFailureConditions", "bindsToNode"),
    ),
    _rule("DRAConsumableCapacity", _slice_capacity_in_use, _drop_slice_capacity),
    _rule(
        "DRANodeAllocatableResources",
        lambda o: any(d.get("nodeAllocatableResourceMappings") for d in _slice_devices(o)),
        _drop_device_fields("nodeAllocatableResourceMappings"),
    ),
    _rule("DRAListTypeAttributes", lambda o: any(_list_attributes(o)), lambda o: _drop_list_attributes(o)),
)


def resource_slice(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    for rule in SLICE_RULES:
        rule(new, old, gates)


# -- DeviceClass (pkg/registry/resource/deviceclass) ----------------------------------------

_DEVICE_CLASS_RULE = _rule(
    "DRAExtendedResource",
    lambda o: (o.get("spec") or {}).get("extendedResourceName") is not None,
    lambda o: (o.get("spec") or {}).pop("extendedResourceName", None),
)


def device_class(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    _DEVICE_CLASS_RULE(new, old, gates)


# -- Pod status fields DRA adds (pkg/api/pod dropDisabledPodStatusFields) -------------------

POD_STATUS_RULES = (
    _rule(
        "DRAExtendedResource",
        lambda p: (p.get("status") or {}).get("extendedResourceClaimStatus") is not None,
        lambda p: (p.get("status") or {}).pop("extendedResourceClaimStatus", None),
    ),
    _rule(
        "DRANodeAllocatableResources",
        lambda p: bool((p.get("status") or {}).get("nodeAllocatableResourceClaimStatuses")),
        lambda p: (p.get("status") or {}).pop("nodeAllocatableResourceClaimStatuses", None),
    ),
)


# -- Pod spec (pkg/api/pod dropDisabledFields) ---------------------------------------------

# spec.schedulingGroup (KEP-4671 in v1.36; v1.35's spec.workloadRef, whose rule it keeps):
# GenericWorkload off drops it unless the old spec already names a group
_SCHEDULING_GROUP_RULE = _rule(
    "GenericWorkload",
    lambda spec: spec.get("schedulingGroup") is not None,
    lambda spec: spec.pop("schedulingGroup", None),
)


def pod_spec(new: dict | None, old: dict | None, gates: Gates) -> None:
    """The fields of switched-off features in a pod spec (a pod's, or a template's)."""
    if isinstance(new, dict):
        _SCHEDULING_GROUP_RULE(new, old if isinstance(old, dict) else None, gates)


def pod(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    """A pod's spec fields (on create and update) and its DRA status fields (on create, a
    status update and any update)."""
    if subresource == "":
        pod_spec(new.get("spec"), (old or {}).get("spec") if old is not None else None, gates)
    if not isinstance(new.get("status"), dict):
        return
    for rule in POD_STATUS_RULES:
        rule(new, old, gates)


def _at(obj: dict | None, path: tuple[str, ...]) -> dict | None:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj if isinstance(obj, dict) else None


def pod_template(path: tuple[str, ...]) -> Callable[[dict, dict | None, Gates, str], None]:
    """A workload strategy's ``drop_disabled``: upstream's DropDisabledTemplateFields on the
    pod template at ``path`` (e.g. ``spec.template``; a CronJob's is deeper)."""

    def drop(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
        if subresource:
            return
        spec_path = path + ("spec",)
        pod_spec(_at(new, spec_path), _at(old, spec_path) if old is not None else None, gates)

    return drop


# -- scheduling.k8s.io/v1alpha2 (KEP-5729: claims shared per PodGroup) ------------------------

_POD_GROUP_CLAIMS_RULE = _rule(
    "DRAWorkloadResourceClaims",
    lambda pg: bool((pg.get("spec") or {}).get("resourceClaims")),
    lambda pg: (pg.get("spec") or {}).pop("resourceClaims", None),
)


def _templates(workload: dict) -> list[dict]:
    return [t for t in ((workload.get("spec") or {}).get("podGroupTemplates") or []) if isinstance(t, dict)]


def _drop_template_claims(workload: dict) -> None:
    for t in _templates(workload):
        t.pop("resourceClaims", None)


_WORKLOAD_CLAIMS_RULE = _rule(
    "DRAWorkloadResourceClaims",
    lambda w: any(t.get("resourceClaims") for t in _templates(w)),
    _drop_template_claims,
)


def pod_group(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    """A PodGroup's ``spec.resourceClaims`` (DRAWorkloadResourceClaims)."""
    if subresource == "":
        _POD_GROUP_CLAIMS_RULE(new, old, gates)


def workload(new: dict, old: dict | None, gates: Gates, subresource: str = "") -> None:
    """A Workload's ``spec.podGroupTemplates[].resourceClaims`` (DRAWorkloadResourceClaims)."""
    if subresource == "":
        _WORKLOAD_CLAIMS_RULE(new, old, gates)
