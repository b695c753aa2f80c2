"""KEP-5729 (DRAWorkloadResourceClaims): ResourceClaims shared by the pods of a PodGroup.

A pod in a PodGroup (``spec.schedulingGroup.podGroupName``) whose ``spec.resourceClaims``
entry equals one of the PodGroup's ``spec.resourceClaims`` entries field for field (name,
resourceClaimName, resourceClaimTemplateName) uses the PodGroup's claim: the named claim,
or the one the ResourceClaim controller generated for the PodGroup from the template
(``status.resourceClaimStatuses``). That claim is allocated once, for the first pod the
scheduler places, and reserved for the PodGroup (one ``reservedFor`` entry naming it), not
for each pod. Pure: the scheduler, the ResourceClaim controller and the kubelet share it.
"""

from __future__ import annotations

GROUP = "scheduling.k8s.io"
RESOURCE = "podgroups"
PODGROUP_CLAIM_ANNOTATION = "resource.kubernetes.io/podgroup-claim-name"
_FIELDS = ("name", "resourceClaimName", "resourceClaimTemplateName")


def pod_group_name(pod: dict) -> str:
    return (((pod.get("spec") or {}).get("schedulingGroup")) or {}).get("podGroupName") or ""


def matching_entry(pod_claim: dict, pod_group: dict | None) -> dict | None:
    """The PodGroup's spec.resourceClaims entry equal to ``pod_claim``, else None."""
    if pod_group is None:
        return None
    for entry in (pod_group.get("spec") or {}).get("resourceClaims") or ():
        if all(entry.get(f) == pod_claim.get(f) for f in _FIELDS):
            return entry
    return None


def group_claim_name(entry: dict, pod_group: dict) -> str | None:
    """The claim a PodGroup entry stands for: its resourceClaimName, or the claim generated
    from its template (None while the controller has not made it yet)."""
    if entry.get("resourceClaimName"):
        return entry["resourceClaimName"]
    for st in (pod_group.get("status") or {}).get("resourceClaimStatuses") or ():
        if st.get("name") == entry.get("name"):
            return st.get("resourceClaimName")
    return None


def consumer_ref(pod_group: dict) -> dict:
    """The ResourceClaimConsumerReference naming a PodGroup in status.reservedFor."""
    m = pod_group.get("metadata") or {}
    return {"apiGroup": GROUP, "resource": RESOURCE, "name": m.get("name", ""), "uid": m.get("uid", "")}


def is_group_ref(ref: dict) -> bool:
    return ref.get("apiGroup") == GROUP and ref.get("resource") == RESOURCE


def reserved_for_group_of(pod: dict, claim: dict) -> bool:
    """The claim is reserved for the pod's PodGroup (by name, as the kubelet checks)."""
    name = pod_group_name(pod)
    return bool(name) and any(
        is_group_ref(r) and r.get("name") == name for r in (claim.get("status") or {}).get("reservedFor") or ()
    )


def group_claim_for(pod: dict, claim: dict, pod_group: dict | None) -> bool:
    """``claim`` is one the pod uses through its PodGroup."""
    if pod_group is None:
        return False
    name = (claim.get("metadata") or {}).get("name")
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        entry = matching_entry(pc, pod_group)
        if entry is not None and group_claim_name(entry, pod_group) == name:
            return True
    return False
