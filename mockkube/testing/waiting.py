"""Waiting for state that lives outside the test process (a served cluster, a subprocess).

Prefer a watch (``kubectl wait``, an informer) where one exists; where none does, poll
with a deadline rather than sleeping for a fixed time.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def until(cond: Callable[[], T], timeout: float = 30.0, what: str = "condition", interval: float = 0.05) -> T:
    """Call ``cond`` until it returns something truthy and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        out = cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        time.sleep(interval)


async def eventually(cond: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """``until`` for asyncio tests on the server's own loop: yields so components can run."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        out = cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(0.001)


async def settle(rounds: int = 50) -> None:
    """Let queued informer events and reconciles run (for asserting that nothing happens)."""
    import asyncio

    for _ in range(rounds):
        await asyncio.sleep(0)


def as_predicate(condition: "str | Callable[[dict], bool]") -> Callable[[dict | None], bool]:
    """A condition type that must be True ("Ready", "Complete"), "deleted", or a callable."""
    if callable(condition):
        return lambda obj: obj is not None and bool(condition(obj))
    if condition == "deleted":
        return lambda obj: obj is None

    def has_condition(obj: dict | None) -> bool:
        conds = ((obj or {}).get("status") or {}).get("conditions") or []
        return any(c.get("type") == condition and c.get("status") == "True" for c in conds)

    return has_condition


def watch_until(
    http, collection_url: str, name: str, pred: Callable[[dict | None], bool], timeout: float = 30.0
) -> dict:
    """Follow one object through a watch (GET, then watch from its resourceVersion) until
    ``pred(obj)`` holds (``obj`` None once it is deleted); resumes on a dropped stream and
    relists on 410. Returns the object ({} for a deletion)."""
    import json

    deadline = time.monotonic() + timeout
    selector = f"metadata.name={name}"
    while True:
        r = http.get(collection_url, params={"fieldSelector": selector}, timeout=60)
        r.raise_for_status()
        body = r.json()
        items = body.get("items") or []
        obj = items[0] if items else None
        if pred(obj):
            return obj or {}
        rv = body["metadata"]["resourceVersion"]
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(
                f"{collection_url}/{name}: condition not reached within {timeout}s; last seen:\n"
                f"{json.dumps(obj, indent=2)[:4000]}"
            )
        params = {
            "watch": "1",
            "fieldSelector": selector,
            "resourceVersion": rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(max(1, int(left + 0.999))),
        }
        with http.get(collection_url, params=params, stream=True, timeout=(10, left + 5)) as resp:
            if resp.status_code == 410:
                continue
            resp.raise_for_status()
            for line in resp.iter_lines():
                if not line:
                    continue
                ev = json.loads(line)
                typ = ev.get("type")
                if typ == "ERROR":
                    break  # 410 Gone in the stream: relist
                if typ == "BOOKMARK":
                    continue
                obj = None if typ == "DELETED" else ev["object"]
                if pred(obj):
                    return obj or {}
                if time.monotonic() > deadline:
                    break
