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
