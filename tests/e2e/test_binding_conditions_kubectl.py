"""KEP-5007 device binding conditions end to end with kubectl: the scheduler holds an FPGA
pod in PreBind until the fabric controller (the reference external controller) sets the
binding condition, reschedules it on another device after a failure condition, and gives
up after the binding timeout. Time is the injected clock, moved by the test."""

from __future__ import annotations

import json

import pytest

from mockkube.testing.clock import FakeClock
from mockkube.testing.cluster import ThreadedCluster
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

ATTACHED = "fpga.example.com/attached"
FAILED = "fpga.example.com/attach-failed"

PROFILE = """
nodes:
- name: fpga-node
  count: 2
  labels: {example.com/fabric: fabric-a}
  drivers: {fpga.example.com: {}}
- name: plain-node
fabric:
- pool: fabric-a
  devices: 3
  nodeSelector: {example.com/fabric: fabric-a}
drivers:
  fpga.example.com: {attachDelay: %s, seed: 7%s}
"""

POD = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %(name)s}
spec:
  devices:
    requests:
    - name: fpga
      exactly: {deviceClassName: fpga.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  resourceClaims: [{name: fpga, resourceClaimName: %(name)s}]
  containers: [{name: app, image: bitstream:1, resources: {claims: [{name: fpga}]}}]
"""


def _cluster(tmp_path, extra: str = "", delay: str = "30s", **kw) -> ThreadedCluster:
    (tmp_path / "profile.yaml").write_text(PROFILE % (delay, extra))
    return ThreadedCluster(
        workdir=str(tmp_path), cluster=str(tmp_path / "profile.yaml"), clock=FakeClock(), **kw
    ).start()


def get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def claim_allocated(k, name: str):
    c = get(k, "resourceclaim", name)
    return c if (c.get("status") or {}).get("allocation") else None


def events(k, pod: str, reason: str) -> list[dict]:
    return [
        e for e in get(k, "events", "--field-selector", f"involvedObject.name={pod}")["items"] if e["reason"] == reason
    ]


def condition(claim: dict, typ: str) -> dict | None:
    for d in claim.get("status", {}).get("devices", []):
        for c in d.get("conditions", []):
            if c["type"] == typ:
                return c
    return None


def metrics(k) -> str:
    return k("get", "--raw", "/metrics").stdout


@pytest.fixture
def fabric(tmp_path):
    c = _cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def test_pod_binds_only_after_the_binding_condition_is_true(fabric):
    k = fabric.kubectl
    k("apply", "-f", "-", input=POD % {"name": "accel"})
    until(lambda: events(k, "accel", "BindingConditionsPending"), what="BindingConditionsPending event")
    ev = events(k, "accel", "BindingConditionsPending")[0]
    assert ev["type"] == "Normal" and ev["message"].startswith("waiting for binding conditions for device on node ")
    claim = claim_allocated(k, "accel")
    alloc = claim["status"]["allocation"]
    result = alloc["devices"]["results"][0]
    assert result["bindingConditions"] == [ATTACHED] and result["bindingFailureConditions"] == [FAILED]
    assert alloc["allocationTimestamp"]
    node = ev["message"].rsplit(" ", 1)[1]
    # bindsToNode: the selector names exactly the chosen node, for the controller to read
    terms = alloc["nodeSelector"]["nodeSelectorTerms"]
    assert [f["values"] for t in terms for f in t.get("matchFields", [])] == [[node]]
    assert claim["status"]["reservedFor"][0]["name"] == "accel"
    assert not get(k, "pod", "accel")["spec"].get("nodeName")  # still held in PreBind
    assert condition(claim, ATTACHED) is None

    fabric.advance(30)  # the fabric controller's attach delay passes
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/accel", "--timeout=30s")
    pod = get(k, "pod", "accel")
    assert pod["spec"]["nodeName"] == node
    assert condition(get(k, "resourceclaim", "accel"), ATTACHED)["status"] == "True"
    assert events(k, "accel", "Scheduled")
    text = metrics(k)
    assert (
        'scheduler_dra_bindingconditions_allocations_total{driver="fpga.example.com",'
        'profile="default-scheduler",status="success"} 1.0'
    ) in text
    assert (
        'scheduler_dra_bindingconditions_prebind_duration_seconds_count{requires_bindingconditions="true",'
        'status="success"} 1.0'
    ) in text
    assert 'scheduler_dra_bindingconditions_wait_duration_seconds_sum{driver="fpga.example.com"' in text


def test_failure_condition_clears_the_allocation_and_the_pod_lands_on_another_device(tmp_path):
    c = _cluster(tmp_path, ", faultyDevices: [fpga-0]")
    try:
        k = c.kubectl
        k("apply", "-f", "-", input=POD % {"name": "flaky"})
        first = until(lambda: claim_allocated(k, "flaky"), what="first allocation")
        assert first["status"]["allocation"]["devices"]["results"][0]["device"] == "fpga-0"
        c.advance(30)  # the attach of fpga-0 fails: failure condition True, device tainted
        failed = until(
            lambda: [e for e in events(k, "flaky", "FailedScheduling") if "binding failed" in e["message"]],
            what="FailedScheduling for the failure",
        )
        assert (
            'running PreBind plugin "DynamicResources": claim flaky binding failed: reason=AttachFailed'
            in failed[0]["message"]
        )
        c.advance(11)  # past the scheduler's backoff: the next attempt deallocates and allocates again

        def moved():
            cl = claim_allocated(k, "flaky")
            return cl if cl and cl["status"]["allocation"]["devices"]["results"][0]["device"] != "fpga-0" else None

        second = until(moved, what="reallocation on another device")
        assert condition(second, FAILED) is None  # the old device's status went with the old allocation
        slices = get(k, "resourceslices")["items"]
        taints = {
            d["name"]: d.get("taints")
            for s in slices
            if s["spec"]["driver"] == "fpga.example.com"
            for d in s["spec"]["devices"]
        }
        assert taints["fpga-0"] and not taints["fpga-1"]
        c.advance(30)
        k("wait", "--for=jsonpath={.status.phase}=Running", "pod/flaky", "--timeout=30s")
        assert 'status="failure"} 1.0' in metrics(k)
    finally:
        c.stop()


def test_timeout_clears_the_allocation_and_requeues(tmp_path):
    c = _cluster(tmp_path, "", delay="1h", binding_timeout=120)  # the controller never gets there
    try:
        k = c.kubectl
        k("apply", "-f", "-", input=POD % {"name": "slow"})
        first = until(lambda: claim_allocated(k, "slow"), what="allocation")
        until(lambda: events(k, "slow", "BindingConditionsPending"), what="waiting")
        c.advance(20)
        assert not get(k, "pod", "slow")["spec"].get("nodeName")
        c.advance(101)  # 121s after allocationTimestamp: over the 120s timeout
        msg = until(
            lambda: [e["message"] for e in events(k, "slow", "FailedScheduling") if "binding timeout" in e["message"]],
            what="timeout",
        )[0]
        assert msg == 'running PreBind plugin "DynamicResources": claim slow binding timeout'

        def reallocated():
            cl = claim_allocated(k, "slow")
            ts = first["status"]["allocation"]["allocationTimestamp"]
            return (
                cl
                if cl
                and (
                    cl["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
                    and cl["status"]["allocation"]["allocationTimestamp"] != ts
                )
                else None
            )

        # the next attempt deallocates (PostFilter) and allocates afresh, with a new timestamp
        c.advance(11)  # past the scheduler's backoff
        until(reallocated, what="a fresh allocation after the timeout")
        assert 'status="timeout"} 1.0' in metrics(k)
        assert not get(k, "pod", "slow")["spec"].get("nodeName")
    finally:
        c.stop()


def _restart_scheduler(c: ThreadedCluster) -> None:
    """Stop the scheduler and start a new one on the same cluster: nothing survives but
    what the API holds."""
    from mockkube.scheduler import binding_timeout
    from mockkube.scheduler.scheduler import Scheduler

    async def restart():
        comps = c.server.components
        i = next(n for n, x in enumerate(comps) if isinstance(x, Scheduler))
        await comps[i].stop()
        comps[i] = Scheduler(c.server, binding_timeout=binding_timeout(c.server))
        await comps[i].start()

    c.call(restart)


def test_scheduler_restart_resumes_waiting_from_the_claims(tmp_path):
    c = _cluster(tmp_path, "", delay="1h", binding_timeout=120)
    try:
        k = c.kubectl
        k("apply", "-f", "-", input=POD % {"name": "resume"} + "---\n" + POD % {"name": "attach"})
        for name in ("resume", "attach"):
            until(lambda: events(k, name, "BindingConditionsPending"), what=f"{name} waiting")
        before = {n: claim_allocated(k, n)["status"]["allocation"] for n in ("resume", "attach")}
        c.advance(100)
        _restart_scheduler(c)
        # the new scheduler finds the pods pending with claims allocated and reserved for
        # them, and waits again (a second BindingConditionsPending) on the same allocation
        until(
            lambda: sum(e.get("count", 1) for e in events(k, "attach", "BindingConditionsPending")) >= 2,
            what="waiting again after the restart",
        )
        assert {n: claim_allocated(k, n)["status"]["allocation"] for n in ("resume", "attach")} == before
        # an external controller reports success for one claim...
        claim = get(k, "resourceclaim", "attach")
        r = claim["status"]["allocation"]["devices"]["results"][0]
        claim["status"]["devices"] = [
            {
                "driver": r["driver"],
                "pool": r["pool"],
                "device": r["device"],
                "conditions": [
                    {
                        "type": ATTACHED,
                        "status": "True",
                        "reason": "Attached",
                        "message": "done by hand",
                        "lastTransitionTime": "2023-11-14T22:15:00Z",
                    }
                ],
            }
        ]
        k("replace", "--subresource=status", "-f", "-", input=json.dumps(claim))
        k("wait", "--for=jsonpath={.status.phase}=Running", "pod/attach", "--timeout=30s")
        # ...while the other times out 120s after its allocationTimestamp, 21s after the restart
        c.advance(21)
        until(
            lambda: [e for e in events(k, "resume", "FailedScheduling") if "binding timeout" in e["message"]],
            what="timeout measured from allocationTimestamp",
        )
    finally:
        c.stop()


PREFER = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic.example.org}
spec:
  selectors:
  - cel: {expression: 'device.driver == "nic.example.org"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: nic-pool}
spec:
  driver: nic.example.org
  pool: {name: nic-pool, generation: 1, resourceSliceCount: 1}
  allNodes: true
  devices:
  - name: nic-attach
    bindsToNode: true
    bindingConditions: [nic.example.org/attached]
    bindingFailureConditions: [nic.example.org/failed]
  - name: nic-plain
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: nic}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: nic.example.org}
"""

NIC_POD = """
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  resourceClaims: [{name: nic, resourceClaimTemplateName: nic}]
  containers: [{name: app, image: busybox, resources: {claims: [{name: nic}]}}]
"""


def test_devices_without_binding_conditions_are_preferred(fabric):
    k = fabric.kubectl
    k("apply", "-f", "-", input=PREFER + "---" + NIC_POD % "first")
    k("wait", "--for=jsonpath={.spec.nodeName}", "pod/first", "--timeout=30s")  # no wait in PreBind
    claim = get(k, "resourceclaim", get(k, "pod", "first")["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
    result = claim["status"]["allocation"]["devices"]["results"][0]
    assert result["device"] == "nic-plain" and "bindingConditions" not in result
    assert not events(k, "first", "BindingConditionsPending")
    # only the device with binding conditions is left: the next pod gets it and waits
    k("apply", "-f", "-", input=NIC_POD % "second")
    until(lambda: events(k, "second", "BindingConditionsPending"), what="second pod waiting")
    claim = get(k, "resourceclaim", get(k, "pod", "second")["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "nic-attach"
    assert 'requires_bindingconditions="false",status="success"} 1.0' in metrics(k)


def test_deleting_a_waiting_pod_ends_its_wait(fabric):
    k = fabric.kubectl
    k("apply", "-f", "-", input=POD % {"name": "gone"})
    until(lambda: events(k, "gone", "BindingConditionsPending"), what="waiting")
    k("delete", "pod", "gone", "--wait=true")
    until(lambda: not get(k, "resourceclaim", "gone")["status"].get("reservedFor"), what="reservation dropped")
    from mockkube.scheduler.scheduler import Scheduler

    sched = next(x for x in fabric.server.components if isinstance(x, Scheduler))
    assert fabric.call(lambda: len(sched.binding)) == 0
