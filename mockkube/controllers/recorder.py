"""Best-effort core/v1 Events, as client-go's EventRecorder writes them, so that
``kubectl describe`` and ``kubectl events`` show what the controllers did."""

from __future__ import annotations

import itertools
import logging

from mockkube.machinery import meta
from mockkube.storage.client import Client

log = logging.getLogger("mockkube.events")
_seq = itertools.count()  # keeps names unique when an injected clock stands still


def event_for(obj: dict, api_version: str, kind: str, type_: str, reason: str, message: str,
              component: str, now: float) -> dict:
    """The Event object a recorder creates for ``obj`` (name ``<obj>.<hex nanoseconds>``)."""
    m = obj.get("metadata") or {}
    ts = meta.rfc3339(now)
    ns = m.get("namespace") or "default"
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{m.get('name', '')}.{int(now * 1e9) + next(_seq):x}", "namespace": ns},
        "involvedObject": {"kind": kind, "namespace": m.get("namespace", ""), "name": m.get("name", ""),
                           "uid": m.get("uid", ""), "apiVersion": api_version,
                           "resourceVersion": m.get("resourceVersion", "")},
        "reason": reason, "message": message, "source": {"component": component},
        "firstTimestamp": ts, "lastTimestamp": ts, "count": 1, "type": type_,
        "reportingComponent": component, "reportingInstance": "",
    }


def record(client: Client, obj: dict, api_version: str, kind: str, type_: str, reason: str,
           message: str, component: str, now: float) -> None:
    """Create the Event; failures are logged and ignored (events are informational)."""
    ev = event_for(obj, api_version, kind, type_, reason, message, component, now)
    try:
        client.create(client.rt("events"), ev)
    except Exception as e:  # noqa: BLE001 - an event must never break a controller
        log.debug("event %s/%s not recorded: %s", reason, message, e)
