"""events.k8s.io/v1 Events: the same objects as core/v1 Events, stored once as core/v1 (as
kube-apiserver stores both APIs in one ``events`` resource) and converted on the way in and
out, field for field as upstream's ``pkg/apis/events/v1`` conversions: ``regarding`` is
``involvedObject``, ``note`` is ``message``, ``reportingController`` is ``reportingComponent``,
``deprecatedSource``/``deprecatedFirstTimestamp``/``deprecatedLastTimestamp``/``deprecatedCount``
are ``source``/``firstTimestamp``/``lastTimestamp``/``count``; ``series`` (count and
lastObservedTime), ``eventTime``, ``action``, ``related``, ``reason``, ``type`` and
``reportingInstance`` keep their names. So ``kubectl get events`` lists what a component
recorded through events.k8s.io/v1 (the scheduler) and the reverse.

Creating through events.k8s.io/v1 is validated strictly as upstream's ``ValidateEventCreate``
does for that API (``eventTime`` required; ``type`` Normal or Warning; the deprecated fields
unset; a series counts at least 2), with the core/v1 field names in the messages, as
upstream reports them."""

from __future__ import annotations

from mockkube.apiserver.resources.core import _EVENT_FIELDS
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

V1 = "events.k8s.io/v1"
CORE = "v1"

# events.k8s.io/v1 name -> core/v1 name (the fields whose names differ)
_RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {v: k for k, v in _RENAMED.items()}
# fields of both shapes with the same name and meaning
_SHARED = ("metadata", "eventTime", "series", "related", "action", "reason", "type", "reportingInstance")


# what Go serialises for the fields a shape always carries (structs and non-omitempty
# strings), when the other shape did not set them
_CORE_ZERO = {
    "involvedObject": {},
    "source": {},
    "firstTimestamp": None,
    "lastTimestamp": None,
    "eventTime": None,
    "reportingComponent": "",
    "reportingInstance": "",
}
_V1_ZERO = {
    "eventTime": None,
    "regarding": {},
    "deprecatedSource": {},
    "deprecatedFirstTimestamp": None,
    "deprecatedLastTimestamp": None,
}
_V1_OMITEMPTY = ("note", "deprecatedCount", "reportingController", "reportingInstance", "action", "reason", "type")


def to_core(ev: dict) -> dict:
    """An events.k8s.io/v1 Event as core/v1 (Convert_v1_Event_To_core_Event)."""
    out: dict = {"apiVersion": CORE, "kind": "Event"}
    for k, v in ev.items():
        if k in ("apiVersion", "kind"):
            continue
        out[_RENAMED.get(k, k)] = v
    for k, v in _CORE_ZERO.items():
        if k not in out:
            out[k] = {} if v == {} else v
    return out


def to_v1(ev: dict) -> dict:
    """A core/v1 Event as events.k8s.io/v1 (Convert_core_Event_To_v1_Event), with the v1
    struct's omitempty fields left out when empty."""
    out: dict = {"apiVersion": V1, "kind": "Event"}
    for k, v in ev.items():
        if k in ("apiVersion", "kind"):
            continue
        name = _TO_V1.get(k, k)
        if name in _V1_OMITEMPTY and (v is None or v == "" or v == 0):
            continue
        out[name] = v
    for k, v in _V1_ZERO.items():
        if k not in out:
            out[k] = {} if v == {} else v
    return out


class EventConverter:
    """What the generic read paths call (``convert(objs, api_version)``)."""

    def convert(self, objs: list[dict], api_version: str) -> list[dict]:
        out = []
        for o in objs:
            if o.get("apiVersion") == api_version:
                out.append(o)
            elif api_version == V1:
                out.append(to_v1(o))
            else:
                out.append(to_core(o))
        return out


def _to_storage(obj: dict) -> None:
    """Converted in place (the generic registry holds on to the dict and its metadata)."""
    if obj.get("apiVersion") == CORE:
        return
    converted = to_core(obj)
    obj.clear()
    obj.update(converted)


def validate_v1_create(ev: dict) -> list[fe.FieldError]:
    """ValidateEventCreate's strict part for events.k8s.io/v1 (on the core/v1 shape)."""
    errs: list[fe.FieldError] = []
    series = ev.get("series")
    if series is not None:
        if int(series.get("count") or 0) < 2:
            errs.append(fe.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(fe.required("series.lastObservedTime", ""))
    if not ev.get("eventTime"):
        errs.append(fe.required("eventTime", ""))
    typ = ev.get("type") or ""
    if typ not in ("Normal", "Warning"):
        errs.append(fe.invalid("type", "", f"has invalid value: {typ}"))
    if ev.get("firstTimestamp"):
        errs.append(fe.invalid("firstTimestamp", "", "needs to be unset"))
    if ev.get("lastTimestamp"):
        errs.append(fe.invalid("lastTimestamp", "", "needs to be unset"))
    if ev.get("count"):
        errs.append(fe.invalid("count", "", "needs to be unset"))
    src = ev.get("source") or {}
    if src.get("component") or src.get("host"):
        errs.append(fe.invalid("source", "", "needs to be unset"))
    return errs


class EventV1Strategy(Strategy):
    """events.k8s.io/v1, stored as core/v1."""

    allow_create_on_update = True
    held_as_json = True  # as core/v1 Events: one store
    api_version = V1
    storage_api_version = CORE
    converter = EventConverter()

    def prepare_create(self, obj: dict) -> None:
        _to_storage(obj)
        super().prepare_create(obj)

    def prepare_update(self, new: dict, old: dict) -> None:
        _to_storage(new)
        super().prepare_update(new, old)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_v1_create(obj)


def _core(name: str):
    return _EVENT_FIELDS[name]


events = REGISTRY.add(
    ResourceType(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        namespaced=True,
        short_names=("ev",),
        storage_key="core/events",
        strategy=EventV1Strategy(),
        indexed_fields=("regarding.name",),  # core/v1's involvedObject.name index
        # upstream's field label conversions: regarding.* and reportingController select on
        # the stored involvedObject.* and reportingComponent
        selectable_fields={
            **{
                f"regarding.{k}": _core(f"involvedObject.{k}")
                for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
            },
            "reason": _core("reason"),
            "reportingController": _core("reportingComponent"),
            "type": _core("type"),
        },
    )
)
