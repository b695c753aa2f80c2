"""client-go's ``tools/record`` EventCorrelator (``events_cache.go``): what a component's
event recorder does with an Event before it reaches the API. Pure: no I/O, the time comes
from the clock it is given (the cluster's injectable clock), events are core/v1 dicts.

- **Counting** (eventLogger): an event identical to an earlier one (same source, involved
  object with field path, type, reason and message) becomes a patch of the first one:
  its ``count`` + 1, ``lastTimestamp`` now, under the first occurrence's name.
- **Aggregation** (EventAggregator): once 10 events that differ only in their message
  are seen for the same source, object, type, reason and reporting controller/instance,
  each with less than 10 minutes since the previous one, further ones become one
  "(combined from similar events): <message>" event, itself counted.
- **Spam filter** (EventSourceObjectSpamFilter): per source and object, a token bucket of
  25 events refilled at one every 5 minutes; an event over budget is skipped (its count
  is still observed, so the next one sent carries the total).

Each cache is an LRU of 4096 entries, as upstream's. The simulated kubelets of a large
cluster keep one correlator each in the API server's process, so entries are kept small
(slotted records, a single local key held as itself until a second one comes, a plain dict
for the LRU's order): about 1.5 KB less a pod's five Events at 10,000 pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mockkube.machinery import meta

MAX_LRU_CACHE_ENTRIES = 4096
# more than 10 events that vary only by message within 10 minutes: aggregate
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL_SECONDS = 600
# a source may send 25 events about an object, refilled at 1 every 5 minutes
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "

Clock = Callable[[], float]


def _src(ev: dict) -> dict:
    return ev.get("source") or {}


def _obj(ev: dict) -> dict:
    return ev.get("involvedObject") or {}


def _str(x) -> str:
    return x if isinstance(x, str) else ("" if x is None else str(x))


def event_key(ev: dict) -> str:
    """getEventKey: source, involved object (with field path), type, reason, message."""
    s, o = _src(ev), _obj(ev)
    return "".join(
        [
            _str(s.get("component")),
            _str(s.get("host")),
            _str(o.get("kind")),
            _str(o.get("namespace")),
            _str(o.get("name")),
            _str(o.get("fieldPath")),
            _str(o.get("uid")),
            _str(o.get("apiVersion")),
            _str(ev.get("type")),
            _str(ev.get("reason")),
            _str(ev.get("message")),
        ]
    )


def spam_key(ev: dict) -> str:
    """getSpamKey: source and involved object (no field path)."""
    s, o = _src(ev), _obj(ev)
    return "".join(
        [
            _str(s.get("component")),
            _str(s.get("host")),
            _str(o.get("kind")),
            _str(o.get("namespace")),
            _str(o.get("name")),
            _str(o.get("uid")),
            _str(o.get("apiVersion")),
        ]
    )


def aggregate_by_reason(ev: dict) -> tuple[str, str]:
    """EventAggregatorByReasonFunc: (aggregate key, local key = the message)."""
    s, o = _src(ev), _obj(ev)
    key = "".join(
        [
            _str(s.get("component")),
            _str(s.get("host")),
            _str(o.get("kind")),
            _str(o.get("namespace")),
            _str(o.get("name")),
            _str(o.get("uid")),
            _str(o.get("apiVersion")),
            _str(ev.get("type")),
            _str(ev.get("reason")),
            _str(ev.get("reportingComponent")),
            _str(ev.get("reportingInstance")),
        ]
    )
    return key, ev.get("message", "")


def aggregate_message(ev: dict) -> str:
    """EventAggregatorByReasonMessageFunc."""
    return AGGREGATE_PREFIX + ev.get("message", "")


class LRU:
    """groupcache's lru.Cache: Get refreshes an entry, Add beyond the size evicts the oldest."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: dict[str, object] = {}  # in use order (a third of an OrderedDict's memory)

    def get(self, key: str):
        d = self._d
        value = d.pop(key, None)
        if value is not None:
            d[key] = value
        return value

    def add(self, key: str, value: object) -> None:
        d = self._d
        d.pop(key, None)
        d[key] = value
        if self.size and len(d) > self.size:
            del d[next(iter(d))]

    def __len__(self) -> int:
        return len(self._d)


class TokenBucket:
    """flowcontrol's token bucket (golang.org/x/time/rate): starts full, refills at ``qps``
    up to ``burst``; TryAccept takes a token if one is there and changes nothing if not."""

    __slots__ = ("qps", "burst", "tokens", "last")

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps, self.burst = qps, burst
        self.tokens = float(burst)
        self.last = now

    def try_accept(self, now: float) -> bool:
        elapsed = max(0.0, now - self.last)
        tokens = min(float(self.burst), self.tokens + elapsed * self.qps)
        if tokens < 1.0:
            return False
        self.tokens, self.last = tokens - 1.0, max(now, self.last)
        return True


class SpamFilter:
    """EventSourceObjectSpamFilter.Filter: True when the event is to be skipped."""

    def __init__(
        self,
        clock: Clock,
        burst: int = DEFAULT_SPAM_BURST,
        qps: float = DEFAULT_SPAM_QPS,
        size: int = MAX_LRU_CACHE_ENTRIES,
        key: Callable[[dict], str] = spam_key,
    ) -> None:
        self.clock, self.burst, self.qps, self.key = clock, burst, qps, key
        self.cache = LRU(size)

    def filter(self, ev: dict) -> bool:
        k = self.key(ev)
        now = self.clock()
        bucket = self.cache.get(k)
        if bucket is None:
            bucket = TokenBucket(self.qps, self.burst, now)
        skip = not bucket.try_accept(now)
        self.cache.add(k, bucket)
        return skip


@dataclass(slots=True)
class _AggregateRecord:
    local_keys: set | str  # a single key as itself (a set is 216 bytes)
    last: float | None  # when the aggregate was last recorded (None: never)

    def add(self, local_key: str) -> int:
        """Insert ``local_key``; how many distinct keys there are now."""
        keys = self.local_keys
        if isinstance(keys, str):
            if keys == local_key:
                return 1
            keys = self.local_keys = {keys}
        keys.add(local_key)
        return len(keys)

    def pop_any(self) -> None:
        keys = self.local_keys
        if isinstance(keys, str):
            self.local_keys = set()
        else:
            keys.pop()


class Aggregator:
    """EventAggregator.EventAggregate: the event to send and its cache key."""

    def __init__(
        self,
        clock: Clock,
        max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
        max_interval: float = DEFAULT_AGGREGATE_INTERVAL_SECONDS,
        size: int = MAX_LRU_CACHE_ENTRIES,
        key: Callable[[dict], tuple[str, str]] = aggregate_by_reason,
        message: Callable[[dict], str] = aggregate_message,
        name: Callable[[str, float], str] | None = None,
    ) -> None:
        self.clock, self.max_events, self.max_interval = clock, max_events, max_interval
        self.key, self.message = key, message
        self.name = name or (lambda obj_name, now: f"{obj_name}.{int(now * 1e9):x}")
        self.cache = LRU(size)

    def aggregate(self, ev: dict) -> tuple[dict, str]:
        now = self.clock()
        full_key = event_key(ev)
        agg_key, local_key = self.key(ev)
        record = self.cache.get(agg_key)
        # a record too old (or none: its time is the zero time) starts afresh
        if record is None or record.last is None or now - record.last > self.max_interval:
            record = _AggregateRecord(local_key, None)
        seen = record.add(local_key)
        record.last = now
        self.cache.add(agg_key, record)
        if seen < self.max_events:
            return ev, full_key
        record.pop_any()  # do not grow the local key set beyond the max
        ts = meta.rfc3339(now)
        obj = _obj(ev)
        copy = {
            "metadata": {
                "name": self.name(obj.get("name", ""), now),
                "namespace": (ev.get("metadata") or {}).get("namespace", ""),
            },
            "involvedObject": dict(obj),
            "reason": ev.get("reason", ""),
            "message": self.message(ev),
            "source": dict(_src(ev)),
            "firstTimestamp": ts,
            "lastTimestamp": ts,
            "count": 1,
            "type": ev.get("type", ""),
        }
        for k in ("apiVersion", "kind"):
            if k in ev:
                copy[k] = ev[k]
        return copy, agg_key


@dataclass(slots=True)
class _EventLog:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


class EventLogger:
    """eventLogger: counts occurrences per key; a repeat becomes a patch of the first."""

    def __init__(self, size: int = MAX_LRU_CACHE_ENTRIES) -> None:
        self.cache = LRU(size)

    def observe(self, ev: dict, key: str) -> tuple[dict, dict | None]:
        event = dict(ev, metadata=dict(ev.get("metadata") or {}))
        last = self.cache.get(key)
        patch = None
        if last is not None and last.count > 0:
            event["metadata"]["name"] = last.name
            if last.resource_version:
                event["metadata"]["resourceVersion"] = last.resource_version
            else:
                event["metadata"].pop("resourceVersion", None)
            event["firstTimestamp"] = last.first_timestamp
            event["count"] = last.count + 1
            # CreateTwoWayMergePatch from (count 0, lastTimestamp epoch, message "") to the event
            patch = {"count": event["count"], "lastTimestamp": event.get("lastTimestamp")}
            if event.get("message"):
                patch["message"] = event["message"]
        self.cache.add(key, _log_of(event))
        return event, patch

    def update_state(self, ev: dict) -> None:
        self.cache.add(event_key(ev), _log_of(ev))


def _log_of(ev: dict) -> _EventLog:
    m = ev.get("metadata") or {}
    return _EventLog(
        int(ev.get("count") or 0), ev.get("firstTimestamp") or "", m.get("name", ""), m.get("resourceVersion", "")
    )


@dataclass
class CorrelateResult:
    event: dict | None
    patch: dict | None  # a strategic merge patch of the existing event, when it is a repeat
    skip: bool = False


class EventCorrelator:
    """NewEventCorrelator's defaults (or NewEventCorrelatorWithOptions' overrides)."""

    def __init__(
        self,
        clock: Clock,
        *,
        burst: int = DEFAULT_SPAM_BURST,
        qps: float = DEFAULT_SPAM_QPS,
        max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
        max_interval: float = DEFAULT_AGGREGATE_INTERVAL_SECONDS,
        size: int = MAX_LRU_CACHE_ENTRIES,
        spam_key_func: Callable[[dict], str] = spam_key,
        aggregate_name: Callable[[str, float], str] | None = None,
    ) -> None:
        self.spam = SpamFilter(clock, burst, qps, size, spam_key_func)
        self.aggregator = Aggregator(clock, max_events, max_interval, size, name=aggregate_name)
        self.logger = EventLogger(size)

    def correlate(self, ev: dict) -> CorrelateResult:
        """EventCorrelate: filter, aggregate, count and de-duplicate ``ev``."""
        aggregated, key = self.aggregator.aggregate(ev)
        observed, patch = self.logger.observe(aggregated, key)
        if self.spam.filter(observed):
            return CorrelateResult(None, None, True)
        return CorrelateResult(observed, patch)

    def update_state(self, ev: dict) -> None:
        """UpdateState: the server's answer (name, resourceVersion, count) for later repeats."""
        self.logger.update_state(ev)
