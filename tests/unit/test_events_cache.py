"""client-go's EventCorrelator (tools/record/events_cache.go), ported case by case from
upstream's events_cache_test.go: TestEventAggregatorByReasonFunc,
TestEventAggregatorByReasonMessageFunc, TestEventCorrelator (9 scenarios) and
TestEventSpamFilter (3 cases); plus the kubelet's retry loop the issue describes."""

from __future__ import annotations

import copy

import pytest

from mockkube.client import events_cache as ec
from mockkube.machinery import meta

START = 1_700_000_000.0


class IntervalClock:
    """clock.IntervalClock: every reading returns the time, then moves it on by ``step``."""

    def __init__(self, start: float, step: float) -> None:
        self.t, self.step = start, step

    def __call__(self) -> float:
        t = self.t
        self.t += self.step
        return t


def make_ref(kind: str, name: str, namespace: str) -> dict:
    return {
        "kind": kind,
        "name": name,
        "namespace": namespace,
        "uid": "C934D34AFB20242",
        "apiVersion": "version",
        "fieldPath": "spec.containers{mycontainer}",
    }


def make_event(reason: str, message: str, ref: dict) -> dict:
    ts = meta.rfc3339(START)
    return {
        "metadata": {},
        "reason": reason,
        "message": message,
        "involvedObject": dict(ref),
        "source": {"component": "kubelet", "host": "kublet.node1"},
        "count": 1,
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "type": "Normal",
    }


def make_events(n: int, template: dict) -> list[dict]:
    return [copy.deepcopy(template) for _ in range(n)]


def make_unique_events(n: int) -> list[dict]:
    return [make_event(f"reason-{i}", f"message-{i}", make_ref("Pod", f"pod-{i}", f"ns-{i}")) for i in range(n)]


def make_similar_events(n: int, template: dict, prefix: str) -> list[dict]:
    out = make_events(n, template)
    for i, e in enumerate(out):
        e["message"] = f"{prefix}-{i}-{e['message']}"
    return out


def set_count(ev: dict, n: int) -> dict:
    return dict(copy.deepcopy(ev), count=n)


def validate_event(actual: dict, expected: dict) -> None:
    """validateEvent: timestamps set, equal iff count 1; name has the expected prefix; the rest equal."""
    got = copy.deepcopy(actual)
    assert got["firstTimestamp"] and got["lastTimestamp"]
    if expected["count"] > 1:
        assert got["firstTimestamp"] != got["lastTimestamp"], "compression must show in the timestamps"
    else:
        assert got["firstTimestamp"] == got["lastTimestamp"]
    got["firstTimestamp"], got["lastTimestamp"] = expected["firstTimestamp"], expected["lastTimestamp"]
    assert got["metadata"].get("name", "").startswith(expected["metadata"].get("name", ""))
    got["metadata"]["name"] = expected["metadata"].get("name", "")
    want = copy.deepcopy(expected)
    want["metadata"].setdefault("name", "")
    got["metadata"].setdefault("namespace", "")
    want["metadata"].setdefault("namespace", "")
    assert got == want


def test_event_aggregator_by_reason_func():
    e1 = make_event("end-of-world", "it was fun", make_ref("Pod", "pod1", "other"))
    e2 = make_event("end-of-world", "it was awful", make_ref("Pod", "pod1", "other"))
    e3 = make_event("nevermind", "it was a bug", make_ref("Pod", "pod1", "other"))
    agg1, local1 = ec.aggregate_by_reason(e1)
    agg2, local2 = ec.aggregate_by_reason(e2)
    agg3, _ = ec.aggregate_by_reason(e3)
    assert agg1 == agg2
    assert local1 != local2
    assert agg1 != agg3


def test_event_aggregator_by_reason_message_func():
    e1 = make_event("end-of-world", "it was fun", make_ref("Pod", "pod1", "other"))
    assert ec.aggregate_message(e1).startswith("(combined from similar events): ")


FIRST = make_event("first", "i am first", make_ref("Pod", "my-pod", "my-ns"))
DUPLICATE = make_event("duplicate", "me again", make_ref("Pod", "my-pod", "my-ns"))
UNIQUE = make_event("unique", "snowflake", make_ref("Pod", "my-pod", "my-ns"))
SIMILAR = make_event("similar", "similar message", make_ref("Pod", "my-pod", "my-ns"))
SIMILAR["involvedObject"]["fieldPath"] = "spec.containers{container1}"
AGGREGATE = make_event(SIMILAR["reason"], ec.aggregate_message(SIMILAR), SIMILAR["involvedObject"])
OTHER_CONTAINER = copy.deepcopy(SIMILAR)
OTHER_CONTAINER["involvedObject"]["fieldPath"] = "spec.containers{container2}"

# TestEventCorrelator: name -> (previous events, new event, expected event or None for skip, interval)
CORRELATOR_SCENARIOS = {
    "create-a-single-event": ([], FIRST, set_count(FIRST, 1), 5),
    "the-same-event-should-just-count": (make_events(1, DUPLICATE), DUPLICATE, set_count(DUPLICATE, 2), 5),
    "the-same-event-should-just-count-even-if-more-than-aggregate": (
        make_events(ec.DEFAULT_AGGREGATE_MAX_EVENTS, DUPLICATE),
        DUPLICATE,
        set_count(DUPLICATE, ec.DEFAULT_AGGREGATE_MAX_EVENTS + 1),
        30,  # a larger interval induces aggregation but not spam
    ),
    "the-same-event-is-spam-if-happens-too-frequently": (
        make_events(ec.DEFAULT_SPAM_BURST + 1, DUPLICATE),
        DUPLICATE,
        None,
        1,
    ),
    "create-many-unique-events": (make_unique_events(30), UNIQUE, set_count(UNIQUE, 1), 5),
    "similar-events-should-aggregate-event": (
        make_similar_events(ec.DEFAULT_AGGREGATE_MAX_EVENTS - 1, SIMILAR, SIMILAR["message"]),
        SIMILAR,
        set_count(AGGREGATE, 1),
        5,
    ),
    "similar-events-many-times-should-count-the-aggregate": (
        make_similar_events(ec.DEFAULT_AGGREGATE_MAX_EVENTS, SIMILAR, SIMILAR["message"]),
        SIMILAR,
        set_count(AGGREGATE, 2),
        5,
    ),
    "events-from-different-containers-do-not-aggregate": (
        make_events(1, OTHER_CONTAINER),
        SIMILAR,
        set_count(SIMILAR, 1),
        5,
    ),
    "similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate": (
        make_similar_events(ec.DEFAULT_AGGREGATE_MAX_EVENTS - 1, SIMILAR, SIMILAR["message"]),
        SIMILAR,
        set_count(SIMILAR, 1),
        ec.DEFAULT_AGGREGATE_INTERVAL_SECONDS,
    ),
}


@pytest.mark.parametrize("scenario", list(CORRELATOR_SCENARIOS))
def test_event_correlator(scenario):
    previous, new, expected, interval = CORRELATOR_SCENARIOS[scenario]
    clock = IntervalClock(START, interval)
    correlator = ec.EventCorrelator(clock)
    for ev in copy.deepcopy(previous):
        now = meta.rfc3339(clock())
        ev["firstTimestamp"] = ev["lastTimestamp"] = now
        result = correlator.correlate(ev)
        if not result.skip:  # a skipped event does not update state
            correlator.update_state(result.event)
    ev = copy.deepcopy(new)
    ev["firstTimestamp"] = ev["lastTimestamp"] = meta.rfc3339(clock())
    result = correlator.correlate(ev)
    assert result.skip == (expected is None)
    if expected is not None:
        validate_event(result.event, expected)


def _spam_key_by_object_and_reason(e: dict) -> str:
    s, o = e["source"], e["involvedObject"]
    return "".join(
        [s["component"], s["host"], o["kind"], o["namespace"], o["name"], o["uid"], o["apiVersion"], e["reason"]]
    )


ORIGINAL = make_event("original", "i am first", make_ref("Pod", "my-pod", "my-ns"))
DIFFERENT_REASON = make_event("duplicate", "me again", make_ref("Pod", "my-pod", "my-ns"))
SPAM = make_event("original", "me again", make_ref("Pod", "my-pod", "my-ns"))

# TestEventSpamFilter: (new event, expected event or None for skip, spam key func or None for the default)
SPAM_CASES = {
    "event should be reported as spam if object reference is the same for default spam filter": (
        DIFFERENT_REASON,
        None,
        None,
    ),
    "event should not be reported as spam if object reference is the same, but reason is different "
    "for custom spam filter": (DIFFERENT_REASON, DIFFERENT_REASON, _spam_key_by_object_and_reason),
    "event should  be reported as spam if object reference and reason is the same, but message is "
    "different for custom spam filter": (SPAM, None, _spam_key_by_object_and_reason),
}


@pytest.mark.parametrize("case", list(SPAM_CASES))
def test_event_spam_filter(case):
    new, expected, key = SPAM_CASES[case]
    clock = IntervalClock(START, 1)
    correlator = ec.EventCorrelator(clock, burst=1, spam_key_func=key or ec.spam_key)
    result = correlator.correlate(copy.deepcopy(ORIGINAL))
    if not result.skip:
        correlator.update_state(result.event)
    result = correlator.correlate(copy.deepcopy(new))
    assert result.skip == (expected is None)
    if expected is not None:
        validate_event(result.event, expected)


def test_repeated_failure_is_one_event_whose_count_grows_and_the_patch_says_so():
    """A kubelet retrying a failing prepare 8 times in 25 s: one name, count 1..8, each
    repeat a patch of count, lastTimestamp and message."""
    now = [START]
    correlator = ec.EventCorrelator(lambda: now[0])
    ref = make_ref("Pod", "p", "default")
    names, counts = set(), []
    for i in range(8):
        now[0] = START + i * 25 / 7
        ev = make_event("FailedPrepareDynamicResources", "Failed to prepare dynamic resources: busy", ref)
        ev["metadata"] = {"name": f"p.{i}", "namespace": "default"}
        ev["firstTimestamp"] = ev["lastTimestamp"] = meta.rfc3339(now[0])
        result = correlator.correlate(ev)
        assert not result.skip
        if i == 0:
            assert result.patch is None
        else:
            assert result.patch == {
                "count": i + 1,
                "lastTimestamp": meta.rfc3339(now[0]),
                "message": "Failed to prepare dynamic resources: busy",
            }
            assert result.event["firstTimestamp"] == meta.rfc3339(START)
        stored = dict(result.event, metadata=dict(result.event["metadata"], resourceVersion=str(100 + i)))
        correlator.update_state(stored)
        names.add(result.event["metadata"]["name"])
        counts.append(result.event["count"])
    assert names == {"p.0"} and counts == list(range(1, 9))


def test_spam_budget_refills_one_event_every_five_minutes():
    now = [START]
    correlator = ec.EventCorrelator(lambda: now[0])
    ref = make_ref("Pod", "p", "default")
    sent = 0
    for i in range(30):
        result = correlator.correlate(make_event(f"r{i}", "m", ref))  # distinct reasons: no aggregation
        sent += not result.skip
    assert sent == 25
    now[0] += 299
    assert correlator.correlate(make_event("late", "m", ref)).skip
    now[0] += 1
    assert not correlator.correlate(make_event("later", "m", ref)).skip


def test_lru_refreshes_on_get_and_evicts_the_least_recently_used():
    """groupcache's lru.Cache, kept in a plain dict's order."""
    lru = ec.LRU(3)
    for k in "abc":
        lru.add(k, k.upper())
    assert lru.get("a") == "A"  # a is now the most recent
    lru.add("b", "B2")  # so is b, replaced
    lru.add("d", "D")  # c goes
    assert (lru.get("c"), len(lru)) == (None, 3)
    lru.add("e", "E")  # then a
    assert [lru.get(k) for k in "abde"] == [None, "B2", "D", "E"]


def test_an_aggregate_record_holds_one_message_until_a_second_comes():
    record = ec._AggregateRecord("m1", None)
    assert record.add("m1") == 1 and record.local_keys == "m1"
    assert record.add("m2") == 2 and record.local_keys == {"m1", "m2"}
    record.pop_any()
    assert len(record.local_keys) == 1
