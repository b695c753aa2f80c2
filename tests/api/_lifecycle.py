"""Shared helpers for the lifecycle-controller tests (in-process API)."""

from __future__ import annotations

import asyncio
import time
from typing import Callable


async def eventually(cond: Callable[[], object], timeout: float = 5.0) -> object:
    """Yield to the loop until ``cond()`` is truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        out = cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(0.001)


async def settle(rounds: int = 50) -> None:
    """Let queued informer events and reconciles run (for asserting that nothing happens)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def owner_ref(owner: dict, block: bool | None = None, controller: bool | None = None) -> dict:
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"]}
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
