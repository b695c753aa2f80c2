"""Returning a running cluster to its initial state between tests, without a restart.

The baseline is every stored object once the cluster has settled after start. A reset
stops the components, writes the store back to that baseline through ordinary store
writes (so every watcher sees DELETED/ADDED/MODIFIED events and resourceVersions keep
rising: no client cache is fooled), resets the clock, runs the registered reset hooks
(fault injections and the like) and starts fresh components, whose caches, allocations,
kubelet pod runs and driver state therefore start from nothing, as they did at start.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from mockkube.machinery.meta import clone
from mockkube.storage.store import Store

# Kept as they are across a reset: the kubelets renew leases all the time, and restoring
# an old renewTime would only make a node look late.
KEEP_AS_IS = frozenset({"coordination.k8s.io/leases"})


@dataclass
class Baseline:
    """Stored objects by (storage key, namespace, name), as they were at the baseline."""

    objects: dict[tuple[str, str, str], dict] = field(default_factory=dict)

    @classmethod
    def take(cls, store: Store) -> "Baseline":
        out = cls()
        with store.lock:
            for rt in _types(store):
                for e in store.entries(rt):
                    meta = e.obj["metadata"]
                    out.objects[(rt.storage_key, meta.get("namespace", ""), meta["name"])] = e.obj
        return out


@dataclass
class RestoreCounts:
    deleted: int = 0
    created: int = 0
    updated: int = 0


def restore(store: Store, baseline: Baseline) -> RestoreCounts:
    """Write the store back to ``baseline``; returns what it had to change."""
    counts = RestoreCounts()
    with store.lock:
        for rt in _types(store):
            key = rt.storage_key
            seen: set[tuple[str, str]] = set()
            for e in list(store.entries(rt)):
                meta = e.obj["metadata"]
                ns, name = meta.get("namespace", ""), meta["name"]
                seen.add((ns, name))
                want = baseline.objects.get((key, ns, name))
                if want is None:
                    store.delete(rt, ns, name)
                    counts.deleted += 1
                elif key not in KEEP_AS_IS and not _same(e.obj, want):
                    store.update(rt, _fresh(want), e.rv)
                    counts.updated += 1
            for (k, ns, name), want in baseline.objects.items():
                if k == key and (ns, name) not in seen:
                    store.create(rt, _fresh(want))
                    counts.created += 1
    return counts


def _types(store: Store):
    seen: set[str] = set()
    for rt in store.registry.all():
        if rt.storage_key not in seen:
            seen.add(rt.storage_key)
            yield rt


def _same(a: dict, b: dict) -> bool:
    """Equal but for the resourceVersion (every object's changes, status included, count)."""
    if a is b:
        return True
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    if {k: v for k, v in ma.items() if k != "resourceVersion"} != {
        k: v for k, v in mb.items() if k != "resourceVersion"
    }:
        return False
    return {k: v for k, v in a.items() if k != "metadata"} == {k: v for k, v in b.items() if k != "metadata"}


def _fresh(obj: dict) -> dict:
    out = clone(obj)
    out["metadata"].pop("resourceVersion", None)
    return out


async def quiesce(components: list, timeout: float = 5.0) -> bool:
    """Wait (yielding on the components' loop) until no component has queued work: every
    controller's queue empty and nothing in flight, no undelivered informer events. True if
    reached within ``timeout``. Timers (lease renewals, pod run times) are not work."""
    deadline = time.monotonic() + timeout
    idle_rounds = 0
    while time.monotonic() < deadline:
        if all(_idle(c) for c in components) and await _remote_idle(components):
            idle_rounds += 1
            if idle_rounds >= 3:  # what one round's callbacks queued has run too
                return True
        else:
            idle_rounds = 0
        await asyncio.sleep(0)
    return False


async def _remote_idle(components: list) -> bool:
    """Components in processes of their own answer over their channel."""
    for c in components:
        fn = getattr(c, "remote_idle", None)
        if fn is not None and not await fn():
            return False
    return True


def _idle(component) -> bool:
    fn = getattr(component, "idle", None)
    return bool(fn()) if callable(fn) else True
