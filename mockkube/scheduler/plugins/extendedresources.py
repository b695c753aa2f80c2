"""DynamicResources' part for extended resources backed by DRA (KEP-5004), as upstream's
extendeddynamicresources.go: the plugin calls these at its extension points.

PreFilter looks for the pod's special claim left by an earlier cycle (annotated, the pod
as controller); an allocated one that still fits a node is reused like any allocated
claim, any other is stale: Filter reports it unschedulable and PostFilter deletes it so
the next attempt starts anew. Without one, Filter builds the node's variant of the
in-memory claim (resources a device plugin advertises on the node stay with
NodeResourcesFit); PreBind creates it (scheduler_resourceclaim_creates_total{status});
Unreserve deletes a claim PreBind created.
"""

from __future__ import annotations

import json
from typing import Any

from mockkube.dra import extended
from mockkube.machinery import errors

FINALIZER = "resource.kubernetes.io/delete-protection"
ERR_STALE = "cannot schedule extended resource claim"
CREATES_METRIC = "scheduler_resourceclaim_creates_total"
CREATES_HELP = "Number of ResourceClaims creation requests within scheduler"


def find_existing(dra: Any, pod: dict) -> dict | None:
    """The pod's special claim as the scheduler last saw it, if any. A pod that requests no
    extended resource has none (its requests of such resources cannot change), which spares
    a scan of every claim per scheduling attempt."""
    if not getattr(dra, "extended_resources", True):  # DRAExtendedResource off: none is DRA-backed
        return None
    spec = pod.get("spec") or {}
    if not any(
        extended.is_dra_extended_resource_name(k)
        for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        for k in ((c.get("resources") or {}).get("requests") or {})
    ):
        return None
    ns = (pod.get("metadata") or {}).get("namespace", "")
    return extended.find_extended_resource_claim(pod, (c for (cns, _), c in list(dra.claims.items()) if cns == ns))


def mappings_for(pod: dict, claim: dict, dra: Any, node: dict | None) -> list[dict] | None:
    """requestMappings for reusing an existing special claim on `node`, or None when the
    claim no longer matches what the pod needs there (then it is stale)."""
    want, mappings = extended.extended_resource_claim(pod, dra.allocator.classes.values(), node)
    have = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []
    if want is None or want["spec"]["devices"]["requests"] != have:
        return None
    return mappings


def create(client: Any, claims_rt: Any, metrics: Any, ext: dict) -> dict:
    """Create the special claim (with the delete-protection finalizer), counting the call."""
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {k: v for k, v in ext["metadata"].items() if k not in ("name", "uid", "resourceVersion")},
        "spec": ext["spec"],
    }
    body["metadata"]["finalizers"] = [FINALIZER]
    counter = metrics.counter(CREATES_METRIC, CREATES_HELP, ["status"]) if metrics is not None else None
    try:
        created = client.create(claims_rt, body)
    except errors.APIError:
        if counter is not None:
            counter.labels("failure").inc()
        raise
    if counter is not None:
        counter.labels("success").inc()
    return created


def delete(client: Any, claims_rt: Any, claim: dict) -> None:
    """upstream deleteClaim: drop the delete-protection finalizer, then delete."""
    m = claim["metadata"]
    for _ in range(5):
        cur = client.read(claims_rt, m["namespace"], m["name"])  # live, as upstream's retry
        if cur is None or cur["metadata"].get("uid") != m.get("uid"):
            return
        if FINALIZER not in (cur["metadata"].get("finalizers") or []):
            break
        upd = json.loads(json.dumps(cur))
        upd["metadata"]["finalizers"] = [f for f in upd["metadata"]["finalizers"] if f != FINALIZER]
        if not upd["metadata"]["finalizers"]:
            del upd["metadata"]["finalizers"]
        try:
            client.update(claims_rt, upd)
            break
        except errors.APIError as e:
            if e.code != 409:
                raise
    try:
        client.delete(claims_rt, m["namespace"], m["name"])
    except errors.APIError as e:
        if e.code != 404:
            raise
