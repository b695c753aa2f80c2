"""Scheduler events (core/v1 Event, source and reportingComponent default-scheduler),
with the recorder's aggregation: a repeat of the same reason and message for the same
pod bumps count and lastTimestamp instead of writing a new Event."""

from __future__ import annotations

from typing import Any

from mockkube.client.recorder import event_for
from mockkube.machinery import errors, meta

COMPONENT = "default-scheduler"


class Recorder:
    def __init__(self, client: Any, clock) -> None:
        self.client = client
        self.clock = clock
        self.rt = client.rt("events")
        self._last: dict[tuple[str, str], tuple[str, str]] = {}  # (pod uid, reason) -> (name, message)

    def event(self, pod: dict, typ: str, reason: str, message: str, action: str | None = None) -> None:
        m = pod.get("metadata") or {}
        ns = m.get("namespace", "default")
        now = meta.rfc3339(self.clock())
        key = (m.get("uid", ""), reason)
        prev = self._last.get(key)
        if prev is not None and prev[1] == message:
            cur = self.client.get(self.rt, ns, prev[0])
            if cur is not None:
                try:
                    self.client.patch(
                        self.rt, ns, prev[0], {"count": int(cur.get("count") or 1) + 1, "lastTimestamp": now}, "merge"
                    )
                    return
                except errors.APIError:
                    pass
        body = event_for(
            pod,
            "v1",
            "Pod",
            typ,
            reason,
            message,
            COMPONENT,
            self.clock(),
            instance=COMPONENT,
            action=action or ("Scheduling" if reason == "FailedScheduling" else "Binding"),
        )
        name = body["metadata"]["name"]
        try:
            self.client.create(self.rt, body, ns)
        except errors.APIError:
            return
        self._last[key] = (name, message)
        if len(self._last) > 50_000:
            self._last.clear()

    def forget(self, pod_uid: str) -> None:
        self._last.pop((pod_uid, "FailedScheduling"), None)
