"""Shared helpers for the lifecycle-controller tests (in-process API)."""

from __future__ import annotations

from mockkube.testing.waiting import eventually, settle  # noqa: F401  (re-exported for the tests)


def owner_ref(owner: dict, block: bool | None = None, controller: bool | None = None) -> dict:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block is not None:
        ref["blockOwnerDeletion"] = block
    if controller is not None:
        ref["controller"] = controller
    return ref


def cm(name: str, ns: str = "default", owners: list[dict] | None = None, finalizers: list[str] | None = None) -> dict:
    m: dict = {"name": name, "namespace": ns}
    if owners:
        m["ownerReferences"] = owners
    if finalizers:
        m["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": m}
