"""Best-effort core/v1 Events, as client-go's EventRecorder writes them, so that
``kubectl describe`` and ``kubectl events`` show what the controllers did.

Each component's client has one :class:`EventRecorder` (a broadcaster recording to the
API, as ``StartRecordingToSink``), whose EventCorrelator (``events_cache.py``) turns a
repeat into a patch of the first event (``count``, ``lastTimestamp``), aggregates similar
events and drops spam; the clock is the cluster's, so a test that moves it moves these
windows too.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any, Callable

from mockkube.client.client import Client
from mockkube.client.events_cache import EventCorrelator
from mockkube.machinery import errors, meta

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


def _aggregate_name(obj_name: str, now: float) -> str:
    return f"{obj_name}.{int(now * 1e9) + next(_seq):x}"


class EventRecorder:
    """One component's event sink: correlate, then create or patch (client-go's
    ``recordToSink`` and ``recordEvent``). ``clock`` is the cluster's; without one, the
    time of the event being recorded (:func:`record` sets it)."""

    def __init__(self, client: Any, clock: Callable[[], float] | None = None) -> None:
        self.client = client
        self.at = 0.0
        self.clock = clock or (lambda: self.at)
        self.correlator = EventCorrelator(lambda: self.clock(), aggregate_name=_aggregate_name)
        self.rt = client.rt("events")

    def emit(self, ev: dict) -> dict | None:
        """Record ``ev`` (an :func:`event_for` body); the stored event, or None when the
        spam filter skipped it or the API refused it (events never break their sender)."""
        result = self.correlator.correlate(ev)
        if result.skip or result.event is None:
            return None
        event = result.event
        m = event.get("metadata") or {}
        ns = m.get("namespace") or "default"
        saved = None
        try:
            if int(event.get("count") or 1) > 1 and result.patch is not None:
                try:
                    saved = self.client.patch(self.rt, ns, m.get("name", ""), result.patch, "strategic")
                except errors.APIError as e:
                    if e.code != 404:  # gone (deleted, or the cluster was reset): created anew below
                        raise
            if saved is None:
                body = dict(event, metadata={k: v for k, v in m.items() if k != "resourceVersion"})
                saved = self.client.create(self.rt, body, ns)
        except Exception as e:  # noqa: BLE001 - a StatusError is not retried upstream either
            log.debug("event %s/%s not recorded: %s", event.get("reason"), event.get("message"), e)
            return None
        self.correlator.update_state(saved)
        return saved


def recorder_for(client: Any, clock: Callable[[], float] | None = None) -> EventRecorder:
    """The client's recorder (made on first use): one correlator per component, as each
    upstream component has its own broadcaster; a reset builds new clients, so new caches."""
    rec = getattr(client, "_event_recorder", None)
    if rec is None:
        rec = EventRecorder(client, clock)
        client._event_recorder = rec
    return rec


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
    """Record the Event through the client's recorder; failures are logged and ignored
    (events are informational)."""
    rec = recorder_for(client)
    rec.at = now
    rec.emit(event_for(obj, api_version, kind, type_, reason, message, component, now))
