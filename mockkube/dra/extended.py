"""Extended resources backed by DRA (KEP-5004): the pure part.

A DeviceClass with `spec.extendedResourceName: example.com/gpu` (or any class, through the
implicit name `deviceclass.resource.kubernetes.io/<class>`) lets a pod ask for devices
with `resources.requests: {example.com/gpu: 2}`. The scheduler then allocates one special
claim per pod with ExactCount requests named "container-<i>-request-<j>" (i: index in
initContainers + containers, j: index of the resource among the container's sorted
request names), creates it at PreBind (generateName "<pod>-extended-resources-",
annotation resource.kubernetes.io/extended-resource-claim: "true", owned by the pod) and
records pod.status.extendedResourceClaimStatus. Resources the node already advertises in
status.allocatable (a device plugin) are not DRA-backed on that node.

Requests are built as upstream's createRequestsAndMappings (v1.36): long-lived containers
(regular containers and sidecars) get their own requests; a short-lived init container
first reuses the requests of long-lived containers that start after it, and the init
containers' own requests collapse into the largest one (they never run at the same time).
Ephemeral containers have no resources and never count.
"""

from __future__ import annotations

from typing import Iterable

from mockkube.dra.qty import q
from mockkube.machinery.names import is_extended_resource_name
from mockkube.machinery.podrequests import pod_requests

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource name or an implicit one."""
    return name.startswith(IMPLICIT_PREFIX) or is_extended_resource_name(name)


def extended_resource_classes(classes: Iterable[dict]) -> dict[str, str]:
    """resource name -> DeviceClass name. An explicit name maps to the newest class that
    declares it (creationTimestamp; on a tie the lexicographically first name); every
    class also has its implicit name."""
    explicit: dict[str, tuple[str, str]] = {}
    out: dict[str, str] = {}
    for c in classes:
        meta = c.get("metadata") or {}
        name = meta.get("name", "")
        out[IMPLICIT_PREFIX + name] = name
        ern = (c.get("spec") or {}).get("extendedResourceName")
        if ern:
            ts = meta.get("creationTimestamp") or ""
            cur = explicit.get(ern)
            if cur is None or ts > cur[0] or (ts == cur[0] and name < cur[1]):
                explicit[ern] = (ts, name)
    for ern, (_ts, name) in explicit.items():
        out[ern] = name
    return out


def _count(value: object) -> int:
    try:
        return int(q(value).value())
    except Exception:
        return 0


def is_dra_backed(resource: str, mapping: dict[str, str], node: dict | None = None) -> bool:
    """DRA provides `resource` on `node`: a class maps it and no device plugin advertises
    a non-zero amount of it there."""
    if resource not in mapping:
        return False
    if node is not None:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if resource in allocatable and _count(allocatable[resource]) != 0:
            return False
    return True


def pod_extended_requests(pod: dict, mapping: dict[str, str]) -> dict[str, int]:
    """The pod's non-zero effective requests (upstream PodRequests) for resources some
    class maps."""
    spec = pod.get("spec") or {}
    names = {
        k
        for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        for k in ((c.get("resources") or {}).get("requests") or {})
    }
    if not any(k in mapping for k in names):
        return {}
    effective = pod_requests(pod)
    out = {}
    for k in sorted(names):
        if k in mapping and is_dra_extended_resource_name(k):
            n = effective.get(k, 0)
            if n > 0:
                out[k] = n
    return out


def _request_and_mappings(
    index: int, container: dict, resource: str, class_name: str, reusable: list[dict | None]
) -> tuple[dict | None, list[dict]]:
    creqs = (container.get("resources") or {}).get("requests") or {}
    if resource not in creqs:
        return None, []
    want = _count(creqs[resource])
    if want <= 0:
        return None, []
    mappings: list[dict] = []
    got = 0
    for r in reusable:
        if r is None:
            continue
        got += r["exactly"]["count"]
        mappings.append(
            {"containerName": container.get("name", ""), "resourceName": resource, "requestName": r["name"]}
        )
        if got >= want:
            return None, mappings
    ridx = sorted(creqs).index(resource)
    name = f"container-{index}-request-{ridx}"
    req = {
        "name": name,
        "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": want - got},
    }
    mappings.append({"containerName": container.get("name", ""), "resourceName": resource, "requestName": name})
    return req, mappings


def requests_and_mappings(
    pod: dict, resources: Iterable[str], mapping: dict[str, str]
) -> tuple[list[dict], list[dict]]:
    """Device requests and requestMappings for the DRA-backed `resources` of the pod."""
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    containers = inits + list(spec.get("containers") or ())
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(inits)) if i not in long_lived]
    requests: list[dict] = []
    mappings: list[dict] = []
    for resource in sorted(resources):
        class_name = mapping.get(resource)
        if class_name is None:
            continue
        long_reqs: list[dict | None] = [None] * len(containers)
        long_maps: list[dict] = []
        for i in long_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, class_name, [])
            long_reqs[i] = req
            long_maps += maps
        biggest: dict | None = None
        short_names: set[str] = set()
        short_maps: list[dict] = []
        for i in short_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, class_name, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_maps += maps
        if biggest is not None and len(short_names) > 1:
            for m in short_maps:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_reqs if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: r["name"])
    return requests, mappings


def special_claim(pod: dict) -> dict:
    """The special claim's object meta with an empty spec (upstream's PreFilter claim)."""
    meta = pod.get("metadata") or {}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": meta.get("namespace", "default"),
            "generateName": f"{meta.get('name', '')}-extended-resources-",
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta.get("name", ""),
                    "uid": meta.get("uid", ""),
                    "controller": True,
                }
            ],
        },
        "spec": {"devices": {}},
    }


def extended_resource_claim(
    pod: dict, classes: Iterable[dict], node: dict | None = None, mapping: dict[str, str] | None = None
) -> tuple[dict | None, list[dict]]:
    """The in-memory special claim for the pod's DRA-backed extended resources on `node`
    (None if there are none there) and the requestMappings for
    pod.status.extendedResourceClaimStatus. `mapping`: extended_resource_classes(classes)
    when the caller has it already."""
    if mapping is None:
        mapping = extended_resource_classes(classes)
    wanted = [r for r in pod_extended_requests(pod, mapping) if is_dra_backed(r, mapping, node)]
    requests, mappings = requests_and_mappings(pod, wanted, mapping)
    if not requests:
        return None, []
    claim = special_claim(pod)
    claim["spec"] = {"devices": {"requests": requests}}
    return claim, mappings


def is_extended_resource_claim(claim: dict) -> bool:
    return ((claim.get("metadata") or {}).get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"


def find_extended_resource_claim(pod: dict, claims: Iterable[dict]) -> dict | None:
    """upstream findExtendedResourceClaim: the annotated claim the pod controls."""
    meta = pod.get("metadata") or {}
    for c in claims:
        if not is_extended_resource_claim(c):
            continue
        for o in (c.get("metadata") or {}).get("ownerReferences") or ():
            if o.get("name") == meta.get("name") and o.get("controller") and o.get("uid") == meta.get("uid"):
                return c
    return None


def extended_resource_claim_status(claim_name: str, mappings: list[dict]) -> dict:
    """pod.status.extendedResourceClaimStatus."""
    return {"resourceClaimName": claim_name, "requestMappings": [dict(m) for m in mappings]}


def container_requests(pod: dict, container_name: str) -> set[str]:
    """The special claim's request names a container uses (from the pod's status)."""
    st = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    return {
        m.get("requestName", "") for m in st.get("requestMappings") or () if m.get("containerName") == container_name
    }
