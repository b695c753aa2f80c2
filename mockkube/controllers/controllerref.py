"""Controller ownerReferences and the adopt/release decision (upstream's ControllerRefManager),
as pure functions over plain objects, shared by the ReplicaSet and Deployment controllers."""

from __future__ import annotations

from typing import Callable

from mockkube.machinery.selectors import LabelSelector


def controller_of(obj: dict) -> dict | None:
    """The ownerReference with ``controller: true``, if any (metav1.GetControllerOf)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def new_controller_ref(owner: dict, api_version: str, kind: str) -> dict:
    """metav1.NewControllerRef: controller and blockOwnerDeletion both true."""
    m = owner["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": m["name"],
        "uid": m["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_terminating(obj: dict) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def claim_decision(owner: dict, obj: dict, selector: LabelSelector) -> str:
    """What ClaimObject does with one candidate: ``"keep"`` (ours and matching),
    ``"adopt"`` (orphan matching; only while the owner is not being deleted),
    ``"release"`` (ours, no longer matching), or ``"ignore"``."""
    ref = controller_of(obj)
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if ref is not None:
        if ref.get("uid") != owner["metadata"].get("uid"):
            return "ignore"
        if selector.matches(labels):
            return "keep"
        if is_terminating(owner) or is_terminating(obj):
            return "ignore"
        return "release"
    if is_terminating(owner) or is_terminating(obj) or not selector.matches(labels):
        return "ignore"
    return "adopt"


def with_owner(obj: dict, ref: dict) -> dict:
    """Add ``ref`` to ``obj`` (a clone) in place: adoption."""
    refs = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("uid") != ref["uid"]]
    obj["metadata"]["ownerReferences"] = refs + [ref]
    return obj


def without_owner(obj: dict, owner_uid: str) -> dict:
    """Drop the reference to ``owner_uid`` from ``obj`` (a clone) in place: release."""
    refs = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("uid") != owner_uid]
    if refs:
        obj["metadata"]["ownerReferences"] = refs
    else:
        obj["metadata"].pop("ownerReferences", None)
    return obj


def metadata_patch(obj: dict) -> dict:
    """A merge patch that gives the live object ``obj``'s owner references and finalizers:
    upstream's ControllerRefManager (adopt, release) and job controller (tracking finalizer)
    patch pods, their roles grant ``patch`` and not ``update``. The resourceVersion makes it
    conditional as an update is (409 when the pod changed meanwhile)."""
    m = obj["metadata"]
    return {
        "metadata": {
            "ownerReferences": m.get("ownerReferences"),
            "finalizers": m.get("finalizers"),
            "resourceVersion": m.get("resourceVersion"),
        }
    }


def resolve_owner(obj: dict, kind: str, get: Callable[[str, str], dict | None]) -> dict | None:
    """The controlling owner of ``obj`` of ``kind`` if it still exists with the same UID."""
    ref = controller_of(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    owner = get((obj.get("metadata") or {}).get("namespace", ""), ref.get("name", ""))
    if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
        return None
    return owner
