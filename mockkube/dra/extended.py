"""Extended resources backed by DRA (KEP-5004): the pure part.

A DeviceClass with `spec.extendedResourceName: example.com/gpu` (or any class, through the
implicit name `deviceclass.resource.kubernetes.io/<class>`) lets a pod ask for devices
with `resources.requests: {example.com/gpu: 2}`. The scheduler then allocates one special
claim per pod with one ExactCount request per container and resource, named
"container-<i>-request-<j>", creates it at PreBind (generateName "<pod>-extended-resources-",
annotation resource.kubernetes.io/extended-resource-claim: "true", owned by the pod) and
records pod.status.extendedResourceClaimStatus. Resources the node already advertises in
status.allocatable (a device plugin) are not DRA-backed on that node.

Hook for the scheduler (PreFilter/Filter): `claim, mappings = extended_resource_claim(pod,
classes, node)`; allocate `claim` together with the pod's other claims; at PreBind create it
and set `extended_resource_claim_status(claim_name, mappings)`.
"""
from __future__ import annotations

from typing import Iterable

from mockkube.dra.qty import q

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def extended_resource_classes(classes: Iterable[dict]) -> dict[str, str]:
    """resource name -> DeviceClass name. Explicit names map to the newest class that
    declares them (creationTimestamp, then name); every class also has its implicit name."""
    explicit: dict[str, tuple[str, str]] = {}
    out: dict[str, str] = {}
    for c in classes:
        meta = c.get("metadata") or {}
        name = meta.get("name", "")
        out[IMPLICIT_PREFIX + name] = name
        ern = (c.get("spec") or {}).get("extendedResourceName")
        if ern:
            key = (meta.get("creationTimestamp") or "", name)
            if ern not in explicit or key > explicit[ern]:
                explicit[ern] = key
    for ern, (_ts, name) in explicit.items():
        out[ern] = name
    return out


def _container_requests(container: dict) -> dict[str, str]:
    res = container.get("resources") or {}
    merged = dict(res.get("limits") or {})
    merged.update(res.get("requests") or {})
    return merged


def is_dra_backed(resource: str, mapping: dict[str, str], node: dict | None = None) -> bool:
    if resource not in mapping:
        return False
    if node is not None:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if resource in allocatable and str(allocatable[resource]) not in ("0", ""):
            return False
    return True


def extended_resource_claim(pod: dict, classes: Iterable[dict], node: dict | None = None
                            ) -> tuple[dict | None, list[dict]]:
    """The in-memory special claim for the pod's DRA-backed extended resources (None if
    there are none) and the requestMappings for pod.status.extendedResourceClaimStatus.
    Containers are numbered init containers first, then regular containers."""
    mapping = extended_resource_classes(classes)
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    requests: list[dict] = []
    mappings: list[dict] = []
    containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
    for ci, container in enumerate(containers):
        j = 0
        for resource, amount in sorted(_container_requests(container).items()):
            if not is_dra_backed(resource, mapping, node):
                continue
            count = q(amount).value()
            if count <= 0:
                continue
            rname = f"container-{ci}-request-{j}"
            j += 1
            requests.append({"name": rname, "exactly": {"deviceClassName": mapping[resource],
                                                        "allocationMode": "ExactCount", "count": count}})
            mappings.append({"containerName": container.get("name", ""), "resourceName": resource,
                             "requestName": rname})
    if not requests:
        return None, []
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": meta.get("namespace", "default"),
            "generateName": f"{meta.get('name', '')}-extended-resources-",
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta.get("name", ""),
                                 "uid": meta.get("uid", ""), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": {"devices": {"requests": requests}},
    }
    return claim, mappings


def extended_resource_claim_status(claim_name: str, mappings: list[dict]) -> dict:
    """pod.status.extendedResourceClaimStatus."""
    return {"resourceClaimName": claim_name, "requestMappings": [dict(m) for m in mappings]}
