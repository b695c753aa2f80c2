"""The components' event recorder against the API (client-go's recordToSink): a repeat is a
strategic-merge patch of the first event, similar events aggregate, a deleted event is
created again under its name; what a client reads over HTTP."""

from __future__ import annotations

from mockkube.client import recorder
from mockkube.client.client import Client
from mockkube.machinery import meta

T0 = 1_700_000_000.0
POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}}


def _record(client, reason: str, message: str, now: float) -> None:
    recorder.record(client, POD, "v1", "Pod", "Warning", reason, message, "kubelet", now)


async def _events(api, reason: str) -> list[dict]:
    code, body, _ = await api.get(
        "/api/v1/namespaces/default/events", params={"fieldSelector": f"involvedObject.name=p,reason={reason}"}
    )
    assert code == 200
    return body["items"]


async def test_eight_retries_in_25_seconds_are_one_event_counted_eight_times(api):
    client = Client(api.server.resources, "kubelet")
    for i in range(8):
        _record(client, "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: busy", T0 + i * 25 / 7)
    (ev,) = await _events(api, "FailedPrepareDynamicResources")
    assert ev["count"] == 8
    assert ev["firstTimestamp"] == meta.rfc3339(T0) and ev["lastTimestamp"] == meta.rfc3339(T0 + 25)
    # deleted meanwhile (or the cluster was reset): the next repeat is created again, counted on
    name = ev["metadata"]["name"]
    assert (await api.delete(f"/api/v1/namespaces/default/events/{name}"))[0] == 200
    _record(client, "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: busy", T0 + 30)
    (ev,) = await _events(api, "FailedPrepareDynamicResources")
    assert ev["metadata"]["name"] == name and ev["count"] == 9 and ev["lastTimestamp"] == meta.rfc3339(T0 + 30)


async def test_similar_events_aggregate_after_ten(api):
    client = Client(api.server.resources, "kube-controller-manager")
    for i in range(12):
        _record(client, "SuccessfulCreate", f"Created pod: p-{i}", T0 + i)
    items = await _events(api, "SuccessfulCreate")
    plain = sorted(e["message"] for e in items if not e["message"].startswith("(combined"))
    combined = [e for e in items if e["message"].startswith("(combined from similar events): ")]
    assert plain == sorted(f"Created pod: p-{i}" for i in range(9))
    assert len(combined) == 1 and combined[0]["count"] == 3
    assert combined[0]["message"] == "(combined from similar events): Created pod: p-11"


async def test_each_component_has_its_own_correlator(api):
    a, b = Client(api.server.resources, "kubelet"), Client(api.server.resources, "kubelet")
    _record(a, "Same", "m", T0)
    _record(b, "Same", "m", T0 + 1)  # another recorder knows nothing of the first event
    assert sorted(e["count"] for e in await _events(api, "Same")) == [1, 1]


# -- events.k8s.io/v1: one store with core/v1, and the series recorder -----------------------

EV1 = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE = "/api/v1/namespaces/default/events"


def _v1_event(name: str, **extra) -> dict:
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2026-01-02T03:04:05.000006Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Acting",
        "reason": "Acted",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u-1", "apiVersion": "v1"},
        "note": "did it",
        "type": "Normal",
    }
    ev.update(extra)
    return ev


async def test_events_k8s_io_and_core_events_are_the_same_objects(api):
    st, created, _ = await api.post(EV1, _v1_event("one"))
    assert st == 201, created
    assert created["note"] == "did it" and created["regarding"]["name"] == "p"
    assert created["deprecatedSource"] == {} and "deprecatedCount" not in created
    st, core, _ = await api.get(f"{CORE}/one")
    assert st == 200
    assert core["apiVersion"] == "v1" and core["message"] == "did it" and core["involvedObject"]["uid"] == "u-1"
    assert core["reportingComponent"] == "example.com/ctl" and core["action"] == "Acting"
    assert core["eventTime"] == "2026-01-02T03:04:05.000006Z" and core["source"] == {}
    assert core["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    # and the other way: a core/v1 event read through events.k8s.io/v1
    st, _, _ = await api.post(
        CORE,
        {
            "metadata": {"name": "two"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Old",
            "message": "m",
            "source": {"component": "kubelet", "host": "n1"},
            "count": 3,
            "firstTimestamp": "2026-01-02T03:04:05Z",
            "lastTimestamp": "2026-01-02T03:05:05Z",
            "type": "Warning",
        },
    )
    assert st == 201
    st, v1, _ = await api.get(f"{EV1}/two")
    assert st == 200 and v1["apiVersion"] == "events.k8s.io/v1"
    assert v1["note"] == "m" and v1["regarding"]["name"] == "p" and v1["deprecatedCount"] == 3
    assert v1["deprecatedSource"] == {"component": "kubelet", "host": "n1"}
    assert v1["deprecatedLastTimestamp"] == "2026-01-02T03:05:05Z" and v1["eventTime"] is None
    assert "message" not in v1 and "involvedObject" not in v1
    # both lists hold both; events.k8s.io's field selectors name its own fields
    for path in (EV1, CORE):
        st, lst, _ = await api.get(path)
        assert sorted(i["metadata"]["name"] for i in lst["items"]) == ["one", "two"]
    st, lst, _ = await api.get(EV1, params={"fieldSelector": "reportingController=example.com/ctl,regarding.name=p"})
    assert st == 200 and [i["metadata"]["name"] for i in lst["items"]] == ["one"]
    st, lst, _ = await api.get(CORE, params={"fieldSelector": "reportingComponent=example.com/ctl"})
    assert [i["metadata"]["name"] for i in lst["items"]] == ["one"]
    # a series patch through events.k8s.io/v1 shows as core/v1's series
    series = {"count": 2, "lastObservedTime": "2026-01-02T03:06:05.000000Z"}
    st, patched, _ = await api.patch(f"{EV1}/one", {"series": series}, ct="application/strategic-merge-patch+json")
    assert st == 200 and patched["series"] == series
    assert (await api.get(f"{CORE}/one"))[1]["series"] == series


async def test_events_k8s_io_create_is_validated_strictly(api):
    ev = _v1_event("bad", deprecatedCount=2, deprecatedSource={"component": "x"})
    del ev["eventTime"]
    st, body, _ = await api.post(EV1, ev)
    assert st == 422 and body["reason"] == "Invalid"
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("eventTime", "Required value") in causes
    assert ("count", 'Invalid value: "": needs to be unset') in causes
    assert ("source", 'Invalid value: "": needs to be unset') in causes
    st, body, _ = await api.post(EV1, _v1_event("bad2", type="Fatal", series={"count": 1, "lastObservedTime": None}))
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("type", 'Invalid value: "": has invalid value: Fatal') in causes
    assert ("series.count", 'Invalid value: "": should be at least 2') in causes
    # the legacy API stays lenient
    assert (await api.post(CORE, {"metadata": {"name": "loose"}, "involvedObject": {}}))[0] == 201


async def test_watching_events_k8s_io_sees_core_events(api):
    st, lst, _ = await api.get(EV1)
    rv = lst["metadata"]["resourceVersion"]
    await api.post(CORE, {"metadata": {"name": "w"}, "involvedObject": {"name": "p"}, "message": "hello"})
    st, body, _ = await api.get(EV1, params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"})
    assert st == 200
    import json

    lines = body.splitlines() if isinstance(body, str) else [json.dumps(body)]
    (ev,) = [json.loads(line) for line in lines if line.strip()]
    assert ev["type"] == "ADDED" and ev["object"]["apiVersion"] == "events.k8s.io/v1"
    assert ev["object"]["note"] == "hello" and ev["object"]["regarding"] == {"name": "p"}


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


async def _v1_events(api, reason: str) -> list[dict]:
    code, body, _ = await api.get(EV1, params={"fieldSelector": f"reason={reason}"})
    assert code == 200
    return body["items"]


async def test_series_recorder_as_client_go_tools_events(api):
    """The second occurrence makes a series (count 2, written at once); later ones count in
    the recorder only, and reach the API when the series finishes (6 min unseen) or is
    refreshed (every 30 min)."""
    clock = _Clock()
    rec = recorder.SeriesRecorder(Client(api.server.resources, "kube-scheduler"), clock, "default-scheduler", "i")
    pod = dict(POD)
    rec.event(pod, "Warning", "FailedScheduling", "0/3 nodes are available: a.", action="Scheduling")
    (ev,) = await _v1_events(api, "FailedScheduling")
    assert "series" not in ev and ev["eventTime"] == meta.rfc3339_micro(T0)
    assert ev["reportingController"] == "default-scheduler" and ev["reportingInstance"] == "i"
    assert ev["regarding"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "p",
        "uid": "u-1",
        "apiVersion": "v1",
        "resourceVersion": "7",
    }
    # the note is not part of the key: another message for the same pod is the same series
    clock.now = T0 + 10
    rec.event(pod, "Warning", "FailedScheduling", "0/3 nodes are available: b.", action="Scheduling")
    (ev,) = await _v1_events(api, "FailedScheduling")
    assert ev["series"] == {"count": 2, "lastObservedTime": meta.rfc3339_micro(T0 + 10)}
    assert ev["note"] == "0/3 nodes are available: a."
    for i in range(3):
        clock.now = T0 + 20 + i
        rec.event(pod, "Warning", "FailedScheduling", "0/3 nodes are available: a.", action="Scheduling")
    (ev,) = await _v1_events(api, "FailedScheduling")
    assert ev["series"]["count"] == 2  # counted in the recorder, not written yet
    # the same pod at another resourceVersion is another event, as upstream's key has it
    rec.event(
        dict(pod, metadata=dict(pod["metadata"], resourceVersion="8")), "Warning", "FailedScheduling", "x", "Scheduling"
    )
    assert len(await _v1_events(api, "FailedScheduling")) == 2
    # 6 min after its last occurrence the series is finished: final count written, key forgotten
    clock.now = T0 + 22 + 6 * 60 + 1
    rec.tick()
    series = [e for e in await _v1_events(api, "FailedScheduling") if e.get("series")]
    assert series[0]["series"] == {"count": 5, "lastObservedTime": meta.rfc3339_micro(T0 + 22)}
    assert rec.cache == {}
    # core/v1 readers (kubectl get events) see the same event and its series
    code, body, _ = await api.get(CORE, params={"fieldSelector": "reason=FailedScheduling"})
    assert sorted((e.get("series") or {}).get("count", 1) for e in body["items"]) == [1, 5]


async def test_series_refreshed_every_30_minutes(api):
    clock = _Clock()
    rec = recorder.SeriesRecorder(Client(api.server.resources, "kube-scheduler"), clock, "default-scheduler", "i")
    # an occurrence every 5 minutes keeps the series open; at 30 min it is written
    for i in range(6):
        clock.now = T0 + i * 300
        rec.event(POD, "Normal", "Waiting", "still", action="Scheduling")
    (ev,) = await _v1_events(api, "Waiting")
    assert ev["series"]["count"] == 2
    clock.now = T0 + 30 * 60 + 1
    rec.tick()
    (ev,) = await _v1_events(api, "Waiting")
    assert ev["series"] == {"count": 6, "lastObservedTime": meta.rfc3339_micro(T0 + 5 * 300)}
    # deleted meanwhile: the next write creates it again, series and all
    await api.delete(f"{EV1}/{ev['metadata']['name']}")
    clock.now = T0 + 31 * 60
    rec.event(POD, "Normal", "Waiting", "still", action="Scheduling")
    clock.now = T0 + 60 * 60 + 2
    rec.tick()
    (ev,) = await _v1_events(api, "Waiting")
    assert ev["series"]["count"] == 7 and rec.cache == {}
