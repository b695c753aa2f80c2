"""Best-effort core/v1 Events, as client-go's EventRecorder writes them, so that
``kubectl describe`` and ``kubectl events`` show what the controllers did."""

from __future__ import annotations

import itertools
import logging

from mockkube.client.client import Client
from mockkube.machinery import meta

log = logging.getLogger("mockkube.events")
_seq = itertools.count()  # keeps names unique when an injected clock stands still


def event_for(
    obj: dict,
    api_version: str,
    kind: str,
    type_: str,
    reason: str,
    message: str,
    component: str,
    now: float,
    *,
    field_path: str = "",
    host: str = "",
    instance: str = "",
    action: str = "",
) -> dict:
    """The core/v1 Event a recorder creates for ``obj``, named ``<obj>.<hex nanoseconds>`` as
    client-go's recorder does (so same-second events list in order)."""
    m = obj.get("metadata") or {}
    ts = meta.rfc3339(now)
    ns = m.get("namespace") or "default"
    involved = {
        "kind": kind,
        "namespace": m.get("namespace", ""),
        "name": m.get("name", ""),
        "uid": m.get("uid", ""),
        "apiVersion": api_version,
        "resourceVersion": m.get("resourceVersion", ""),
    }
    if field_path:
        involved["fieldPath"] = field_path
    source = {"component": component}
    if host:
        source["host"] = host
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{m.get('name', '')}.{int(now * 1e9) + next(_seq):x}", "namespace": ns},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": source,
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
        "type": type_,
        "reportingComponent": component,
        "reportingInstance": instance,
    }
    if action:
        ev["action"] = action
    return ev


def record(
    client: Client,
    obj: dict,
    api_version: str,
    kind: str,
    type_: str,
    reason: str,
    message: str,
    component: str,
    now: float,
) -> None:
    """Create the Event; failures are logged and ignored (events are informational)."""
    ev = event_for(obj, api_version, kind, type_, reason, message, component, now)
    try:
        client.create(client.rt("events"), ev)
    except Exception as e:  # noqa: BLE001 - an event must never break a controller
        log.debug("event %s/%s not recorded: %s", reason, message, e)
