"""Device taint eviction over the in-process API: NoExecute taints from slices and
DeviceTaintRules, tolerationSeconds against an injected clock, rule status."""

from __future__ import annotations

import pytest
from _lifecycle import eventually, settle

from mockkube.client.client import Client, clone
from mockkube.controllers import devicetaint
from mockkube.machinery import meta
from mockkube.testing.cluster import running_server

NOW = 1_800_000_000.0
DRIVER = "gpu.example.com"


@pytest.fixture
async def env():
    clock = [NOW]
    async with running_server(
        components=False,
        clock=lambda: clock[0],
        # DeviceTaintRules: beta in v1.36 and off by default, as their API version
        feature_gates={"DRADeviceTaintRules": True},
        runtime_config={"resource.k8s.io/v1beta2": True},
    ) as server:
        [ctrl] = await devicetaint.start(server)
        try:
            yield server, Client(server.resources, manager="test"), ctrl, clock
        finally:
            await ctrl.stop()


def _slice(c: Client, taints: list[dict] | None = None) -> dict:
    dev: dict = {"name": "gpu-0"}
    if taints:
        dev["taints"] = taints
    return c.create(
        c.rt("resourceslices", "resource.k8s.io"),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "node-1",
                "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                "devices": [dev, {"name": "gpu-1"}],
            },
        },
    )


def _pod_with_claim(
    c: Client,
    tolerations: list[dict] | None = None,
    name: str = "p",
    node: str = "node-1",
    reserved_uid: str | None = None,
) -> dict:
    """A scheduled pod using an allocated claim (reserved for it) on gpu-0."""
    claims = c.rt("resourceclaims", "resource.k8s.io")
    claim = c.create(
        claims,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"{name}-claim", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}},
        },
    )
    pod = c.create(
        c.rt("pods"),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                **({"nodeName": node} if node else {}),
                "containers": [{"name": "c", "image": "busybox"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-claim"}],
            },
        },
    )
    result: dict = {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": "gpu-0"}
    if tolerations:
        result["tolerations"] = tolerations
    claim = clone(claim)
    claim["status"] = {
        "allocation": {
            "devices": {"results": [result]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": name, "uid": reserved_uid or pod["metadata"]["uid"]}],
    }
    c.update_status(claims, claim)
    return pod


def _disruption(pod: dict | None) -> dict | None:
    for cond in ((pod or {}).get("status") or {}).get("conditions") or ():
        if cond["type"] == "DisruptionTarget":
            return cond
    return None


def _rule(c: Client, effect: str = "NoExecute", selector: dict | None = None) -> dict:
    return c.create(
        c.rt("devicetaintrules", "resource.k8s.io"),
        {
            "apiVersion": "resource.k8s.io/v1beta2",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "broken"},
            "spec": {
                "deviceSelector": selector
                if selector is not None
                else {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
                "taint": {"key": "example.com/broken", "value": "yes", "effect": effect},
            },
        },
    )


def _rule_condition(c: Client) -> dict | None:
    r = c.get(c.rt("devicetaintrules", "resource.k8s.io"), "", "broken")
    conds = (r.get("status") or {}).get("conditions") or []
    return conds[0] if conds else None


async def test_no_execute_slice_taint_evicts_pod(env):
    server, c, ctrl, clock = env
    pods = c.rt("pods")
    _pod_with_claim(c)
    _slice(c, [{"key": "example.com/unhealthy", "effect": "NoExecute"}])
    pod = await eventually(lambda: (p := c.get(pods, "default", "p")) and p["metadata"].get("deletionTimestamp") and p)
    cond = _disruption(pod)
    assert cond == {
        "type": "DisruptionTarget",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": meta.rfc3339(NOW),
        "reason": "DeletionByDeviceTaintManager",
        "message": "Device Taint manager: deleting due to NoExecute taint",
    }
    c.finalize_delete(pods, "default", "p")  # what the kubelet does once containers stopped
    assert c.get(pods, "default", "p") is None
    events = [e for e in c.list(c.rt("events"), "default") if e["involvedObject"]["name"] == "p"]
    assert [(e["reason"], e["message"]) for e in events] == [("DeviceTaintManagerEviction", "Marking for deletion")]


async def test_toleration_seconds_delays_eviction(env):
    server, c, ctrl, clock = env
    pods = c.rt("pods")
    _slice(c, [{"key": "example.com/unhealthy", "effect": "NoExecute", "timeAdded": meta.rfc3339(NOW)}])
    _pod_with_claim(
        c,
        tolerations=[
            {"key": "example.com/unhealthy", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
        ],
    )
    await eventually(lambda: ("default", "p") in ctrl.pending)
    assert ctrl.pending[("default", "p")][1].when == NOW + 60
    clock[0] = NOW + 59
    ctrl.resync()
    await settle(200)
    assert _disruption(c.get(pods, "default", "p")) is None
    clock[0] = NOW + 60
    ctrl.resync()
    pod = await eventually(lambda: (p := c.get(pods, "default", "p")) and p["metadata"].get("deletionTimestamp") and p)
    assert _disruption(pod)["lastTransitionTime"] == meta.rfc3339(NOW + 60)


@pytest.mark.parametrize(
    "taint,tolerations",
    [
        ({"key": "k", "effect": "NoSchedule"}, None),
        ({"key": "k", "effect": "None"}, None),
        (
            {"key": "k", "value": "v", "effect": "NoExecute"},
            [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}],
        ),
    ],
)
async def test_no_eviction_without_untolerated_no_execute(env, taint, tolerations):
    server, c, ctrl, clock = env
    pods = c.rt("pods")
    _slice(c, [taint])
    _pod_with_claim(c, tolerations=tolerations)
    await settle(300)
    pod = c.get(pods, "default", "p")
    assert pod is not None and not pod["metadata"].get("deletionTimestamp") and _disruption(pod) is None
    assert ctrl.pending == {}


@pytest.mark.parametrize("kwargs", [{"node": ""}, {"reserved_uid": "another-pod-uid"}])
async def test_unscheduled_or_unreserved_pods_are_left_alone(env, kwargs):
    server, c, ctrl, clock = env
    _slice(c, [{"key": "k", "effect": "NoExecute"}])
    _pod_with_claim(c, **kwargs)
    await settle(300)
    pod = c.get(c.rt("pods"), "default", "p")
    assert not pod["metadata"].get("deletionTimestamp") and _disruption(pod) is None


async def test_removing_the_taint_cancels_a_pending_eviction(env):
    server, c, ctrl, clock = env
    pods = c.rt("pods")
    sl = _slice(c, [{"key": "k", "effect": "NoExecute", "timeAdded": meta.rfc3339(NOW)}])
    _pod_with_claim(c, tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}])
    await eventually(lambda: ("default", "p") in ctrl.pending)
    sl = clone(c.get(c.rt("resourceslices", "resource.k8s.io"), "", sl["metadata"]["name"]))
    del sl["spec"]["devices"][0]["taints"]
    c.update(c.rt("resourceslices", "resource.k8s.io"), sl)
    await eventually(lambda: ("default", "p") not in ctrl.pending)
    clock[0] = NOW + 31
    ctrl.resync()
    await settle(200)
    assert not c.get(pods, "default", "p")["metadata"].get("deletionTimestamp")
    events = [e["message"] for e in c.list(c.rt("events"), "default") if e["involvedObject"]["name"] == "p"]
    assert events == ["Cancelling deletion"]


async def test_device_taint_rule_evicts_and_reports_status(env):
    server, c, ctrl, clock = env
    pods = c.rt("pods")
    _slice(c)
    _pod_with_claim(c)
    await settle(100)
    assert c.get(pods, "default", "p")["metadata"].get("deletionTimestamp") is None
    rule = _rule(c)
    await eventually(lambda: (p := c.get(pods, "default", "p")) and p["metadata"].get("deletionTimestamp"))
    cond = await eventually(lambda: _rule_condition(c))
    assert cond == {
        "type": "EvictionInProgress",
        "status": "True",
        "observedGeneration": rule["metadata"]["generation"],
        "lastTransitionTime": meta.rfc3339(NOW),
        "reason": "PodsPendingEviction",
        "message": "1 pod needs to be evicted in 1 namespace.",
    }
    clock[0] = NOW + devicetaint.RULE_STATUS_PERIOD
    ctrl.resync()
    cond = await eventually(lambda: (x := _rule_condition(c)) and x["status"] == "False" and x)
    assert cond["reason"] == "Completed"
    assert cond["message"] == "1 pod evicted since starting the controller."
    assert cond["lastTransitionTime"] == meta.rfc3339(NOW + devicetaint.RULE_STATUS_PERIOD)


async def test_rule_without_matching_device_reports_not_started(env):
    server, c, ctrl, clock = env
    _slice(c)
    _pod_with_claim(c)
    _rule(c, selector={"driver": "other.example.com"})
    cond = await eventually(lambda: _rule_condition(c))
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "NotStarted", "")
    assert c.get(c.rt("pods"), "default", "p")["metadata"].get("deletionTimestamp") is None


async def test_rule_with_effect_none_simulates(env):
    server, c, ctrl, clock = env
    _slice(c)
    _pod_with_claim(c)
    _rule(c, effect="None", selector={"driver": DRIVER})
    cond = await eventually(lambda: _rule_condition(c))
    assert (cond["status"], cond["reason"]) == ("False", "NoEffect")
    assert cond["message"] == (
        "2 published devices selected. 1 allocated device selected. 1 pod would be evicted "
        "in 1 namespace if the effect was NoExecute. This information will not be updated "
        "again. Recreate the DeviceTaintRule to trigger an update."
    )
    await settle(100)
    assert c.get(c.rt("pods"), "default", "p")["metadata"].get("deletionTimestamp") is None


async def test_no_schedule_rule_reports_other_effect(env):
    server, c, ctrl, clock = env
    _slice(c)
    _pod_with_claim(c)
    _rule(c, effect="NoSchedule")
    cond = await eventually(lambda: _rule_condition(c))
    assert (cond["reason"], cond["message"]) == ("OtherEffect", "Eviction only happens for the NoExecute effect.")
    await settle(100)
    assert c.get(c.rt("pods"), "default", "p")["metadata"].get("deletionTimestamp") is None


async def test_idle_without_taints_pods_and_claims_are_not_even_queued(env):
    """Nothing tainted and no DeviceTaintRule: the controller spends nothing on pods and
    claims (issue 8, point 4); the first taint brings the reserved pods in."""
    server, c, ctrl, clock = env
    seen: list = []
    real = ctrl.reconcile
    ctrl.reconcile = lambda key: (seen.append(key), real(key))[1]
    _slice(c)
    for i in range(5):
        _pod_with_claim(c, name=f"p{i}")
    await settle()
    assert seen == [] and ctrl._idle()
    s = c.get(c.rt("resourceslices", "resource.k8s.io"), "", "node-1-gpu")
    s = clone(s)
    s["spec"]["devices"][0]["taints"] = [{"key": "example.com/unhealthy", "effect": "NoExecute"}]
    c.update(c.rt("resourceslices", "resource.k8s.io"), s)
    await eventually(lambda: {("pod", "default", f"p{i}") for i in range(5)} <= set(seen))
    assert not ctrl._idle()
