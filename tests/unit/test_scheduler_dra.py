"""Scheduler with DRA over the in-process API: devices are exclusive, pods wait for
freed devices, firstAvailable, constraints, All mode, FailedScheduling text."""

from __future__ import annotations

from tests.unit._sched_helpers import DRIVER, G, env


async def test_two_pods_never_share_an_exclusive_device():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 2)
        e.device_class()
        e.template("t")
        for i in range(3):
            e.pod(f"p{i}", template="t")
        await e.wait(lambda: e.node_of("p0") and e.node_of("p1"))
        await e.wait(lambda: e.events("p2"))
        assert sorted(e.devices_of("p0") + e.devices_of("p1")) == ["gpu-0", "gpu-1"]
        assert e.node_of("p2") is None
        claim = e.claim_of("p0")
        assert claim["status"]["reservedFor"] == [
            {"resource": "pods", "name": "p0", "uid": e.get_pod("p0")["metadata"]["uid"]}
        ]
        assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]
        assert claim["status"]["allocation"]["devices"]["results"][0]["driver"] == DRIVER


async def test_pod_waits_then_is_scheduled_when_a_device_is_freed():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.device_class()
        e.template("t")
        e.pod("a", template="t")
        await e.wait(lambda: e.node_of("a"))
        e.pod("b", template="t")
        await e.wait(lambda: e.events("b"))
        cond = e.condition("b")
        assert cond["status"] == "False" and cond["reason"] == "Unschedulable"
        assert e.node_of("b") is None
        old_claim = e.claim_of("a")["metadata"]["name"]
        e.c.delete(e.rt("pods"), "default", "a", {"gracePeriodSeconds": 0})
        # the claim controller drops the reservation, deallocates and deletes the claim
        await e.wait(lambda: e.c.get(e.rt("resourceclaims", G), "default", old_claim) is None)
        await e.wait(lambda: e.node_of("b") == "n1")
        assert e.devices_of("b") == ["gpu-0"]


async def test_first_available_falls_back_and_scores_prefer_first():
    async with env() as e:
        e.node("n1")
        e.node("n2")
        e.slice("n1", [{"name": "small", "attributes": {"size": {"string": "small"}}}])
        e.slice("n2", [{"name": "big", "attributes": {"size": {"string": "big"}}}])
        e.device_class()
        big = f'device.attributes["{DRIVER}"].size == "big"'
        small = f'device.attributes["{DRIVER}"].size == "small"'
        reqs = [
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "selectors": [{"cel": {"expression": big}}]},
                    {"name": "small", "deviceClassName": "gpu", "selectors": [{"cel": {"expression": small}}]},
                ],
            }
        ]
        e.template("t", reqs)
        e.pod("p1", template="t")
        await e.wait(lambda: e.node_of("p1"))
        assert e.node_of("p1") == "n2"  # the preferred subrequest wins the score
        assert e.claim_of("p1")["status"]["allocation"]["devices"]["results"][0]["request"] == "gpu/big"
        e.pod("p2", template="t")
        await e.wait(lambda: e.node_of("p2"))
        assert e.node_of("p2") == "n1"
        assert e.claim_of("p2")["status"]["allocation"]["devices"]["results"][0]["request"] == "gpu/small"


async def test_match_attribute_constraint_picks_gpus_on_one_node_with_same_model():
    async with env() as e:
        e.node("n1")
        e.node("n2")
        e.slice(
            "n1",
            [
                {"name": "a", "attributes": {"model": {"string": "x"}}},
                {"name": "b", "attributes": {"model": {"string": "y"}}},
            ],
        )
        e.slice(
            "n2",
            [
                {"name": "c", "attributes": {"model": {"string": "y"}}},
                {"name": "d", "attributes": {"model": {"string": "y"}}},
            ],
        )
        e.device_class()
        e.template(
            "t",
            [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}],
            constraints=[{"matchAttribute": f"{DRIVER}/model"}],
        )
        e.pod("p", template="t")
        await e.wait(lambda: e.node_of("p"))
        assert e.node_of("p") == "n2"
        assert sorted(e.devices_of("p")) == ["c", "d"]


async def test_all_mode_takes_every_matching_device():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 3)
        e.device_class()
        e.template("t", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}])
        e.pod("p", template="t")
        await e.wait(lambda: e.node_of("p"))
        assert sorted(e.devices_of("p")) == ["gpu-0", "gpu-1", "gpu-2"]


async def test_failed_scheduling_event_text_for_claims():
    async with env() as e:
        for n in ("n1", "n2", "n3"):
            e.node(n)
        e.device_class()
        e.template("t")
        e.pod("p", template="t")
        evs = await e.wait(lambda: e.events("p"))
        expected = (
            "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        )
        assert evs[0]["message"] == expected
        # recorded through events.k8s.io/v1 as kube-scheduler does, read back as core/v1
        assert evs[0]["source"] == {} and not evs[0].get("count")
        assert evs[0]["reportingComponent"] == "default-scheduler"
        assert evs[0]["action"] == "Scheduling" and evs[0]["eventTime"]
        assert evs[0]["type"] == "Warning"
        assert e.condition("p")["message"] == expected
        # a slice appearing makes the pod schedulable
        e.slice("n2", 1)
        await e.wait(lambda: e.node_of("p") == "n2")
        assert e.events("p", "Scheduled")[0]["message"] == "Successfully assigned default/p to n2"


async def test_claim_by_name_and_allocated_claim_node_selector():
    async with env() as e:
        e.node("n1")
        e.node("n2")
        e.slice("n2", 1)
        e.device_class()
        e.claim("shared")
        e.pod("a", claim="shared")
        await e.wait(lambda: e.node_of("a") == "n2")
        # a second pod sharing the allocated claim must go where the claim's devices are
        e.pod("b", claim="shared")
        await e.wait(lambda: e.node_of("b") == "n2")
        uids = {r["name"] for r in e.claim_of("b")["status"]["reservedFor"]}
        assert uids == {"a", "b"}


async def test_pod_waits_for_missing_claim_without_events():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.device_class()
        e.pod("p", claim="later")
        await e.settle()
        assert e.node_of("p") is None and e.events("p") == []
        e.claim("later")
        await e.wait(lambda: e.node_of("p") == "n1")


async def test_extended_resource_backed_by_dra():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 2)
        e.device_class(extendedResourceName="example.com/gpu")
        e.pod(
            "p",
            requests={"example.com/gpu": "1"},
            containers=[
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}},
                }
            ],
        )
        await e.wait(lambda: e.node_of("p") == "n1")
        st = e.get_pod("p")["status"]["extendedResourceClaimStatus"]
        claim = e.c.get(e.rt("resourceclaims", G), "default", st["resourceClaimName"])
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
        assert st["requestMappings"] == [
            {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}
        ]
        assert len(claim["status"]["allocation"]["devices"]["results"]) == 1
