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


# -- events.k8s.io/v1: client-go's tools/events ---------------------------------------------------

FINISH_TIME = 6 * 60.0  # tools/events finishTime: a series unseen this long is written and closed
REFRESH_TIME = 30 * 60.0  # refreshTime: every open series is written this often


def object_reference(obj: dict, api_version: str, kind: str) -> dict:
    """reference.GetReference: what ``regarding``/``related`` hold (with the object's
    resourceVersion, which is part of the isomorphism key upstream too)."""
    m = obj.get("metadata") or {}
    ref = {"kind": kind, "namespace": m.get("namespace", ""), "name": m.get("name", ""), "uid": m.get("uid", "")}
    ref["apiVersion"] = api_version
    ref["resourceVersion"] = m.get("resourceVersion", "")
    return {k: v for k, v in ref.items() if v}


def _ref_key(ref: dict | None) -> tuple:
    r = ref or {}
    return tuple(
        r.get(k, "") for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    )


class SeriesRecorder:
    """An events.k8s.io/v1 recorder as client-go's ``tools/events`` broadcaster, which
    kube-scheduler records through: each event is keyed on (type, action, reason,
    reportingController, regarding, related) — not on its note. The first occurrence is
    created; the second turns it into a series (``series.count`` 2 and
    ``lastObservedTime``), patched at once; later ones only count in the recorder, and reach
    the API when the series is refreshed (every 30 min) or finished (6 min after its last
    occurrence: the final count is written and the key forgotten). A singleton event is
    forgotten 6 min after its ``eventTime``. Times are the cluster's clock; ``tick()`` runs
    the periodic work (the owner calls it; each recorded event does too)."""

    def __init__(self, client: Any, clock: Callable[[], float], controller: str, instance: str) -> None:
        self.client = client
        self.clock = clock
        self.controller = controller
        self.instance = instance
        self.rt = client.rt("events", "events.k8s.io")
        self.cache: dict[tuple, dict] = {}
        now = clock()
        self._finished_at = self._refreshed_at = now

    def event(
        self,
        regarding: dict,
        type_: str,
        reason: str,
        note: str,
        action: str = "",
        related: dict | None = None,
        *,
        api_version: str = "v1",
        kind: str = "Pod",
    ) -> None:
        """``Eventf(regarding, related, type, reason, action, note)`` for objects of ``kind``."""
        now = self.clock()
        reg = object_reference(regarding, api_version, kind)
        rel = object_reference(related, api_version, kind) if related is not None else None
        key = (type_, action, reason, self.controller, _ref_key(reg), _ref_key(rel))
        cached = self.cache.get(key)
        if cached is None:
            ns = reg.get("namespace") or "default"
            ev = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": f"{reg.get('name', '')}.{int(now * 1e9) + next(_seq):x}", "namespace": ns},
                "eventTime": meta.rfc3339_micro(now),
                "reportingController": self.controller,
                "reportingInstance": self.instance,
                "action": action,
                "reason": reason,
                "regarding": reg,
                "note": note,
                "type": type_,
            }
            if rel is not None:
                ev["related"] = rel
            self.cache[key] = ev
            self._record(ev)
        elif cached.get("series"):
            cached["series"]["count"] += 1
            cached["series"]["lastObservedTime"] = meta.rfc3339_micro(now)
        else:
            cached["series"] = {"count": 2, "lastObservedTime": meta.rfc3339_micro(now)}
            self._record(cached)
        self.tick(now)

    def _record(self, ev: dict) -> bool:
        """recordEvent: a series is a patch of ``series`` (created anew, series and all, when
        the event is gone); a new event a create. False when it should be retried (the
        server could not be reached; a refusal is final)."""
        m = ev["metadata"]
        try:
            if ev.get("series"):
                try:
                    self.client.patch(self.rt, m["namespace"], m["name"], {"series": dict(ev["series"])}, "strategic")
                    return True
                except errors.APIError as e:
                    if e.code != 404:
                        raise
            self.client.create(self.rt, dict(ev, metadata=dict(m)), m["namespace"])
        except errors.APIError as e:
            log.debug("event %s/%s not recorded: %s", ev.get("reason"), ev.get("note"), e)
            return True  # refused: not retried, as upstream ("will not retry!")
        except Exception as e:  # noqa: BLE001 - the server is gone: retried at the next finish
            log.debug("event %s/%s not recorded: %s", ev.get("reason"), ev.get("note"), e)
            return False
        return True

    def tick(self, now: float | None = None) -> None:
        """finishSeries every 6 min, refreshExistingEventSeries every 30 min (cluster time)."""
        now = self.clock() if now is None else now
        if now - self._finished_at >= FINISH_TIME:
            self._finished_at = now
            self.finish_series(now)
        if now - self._refreshed_at >= REFRESH_TIME:
            self._refreshed_at = now
            for ev in self.cache.values():
                if ev.get("series"):
                    self._record(ev)

    def finish_series(self, now: float) -> None:
        """A series unseen for 6 min gets its final count written and is forgotten; a
        singleton older than 6 min is forgotten."""
        horizon = now - FINISH_TIME
        for key, ev in list(self.cache.items()):
            series = ev.get("series")
            if series:
                if meta.parse_time(series["lastObservedTime"]) < horizon and self._record(ev):
                    del self.cache[key]
            elif meta.parse_time(ev["eventTime"]) < horizon:
                del self.cache[key]
