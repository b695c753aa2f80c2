"""KEP-5004 in the scheduler: implicit names, class precedence, special claim shape."""

from __future__ import annotations

from tests.unit._sched_helpers import G, env


async def test_implicit_name_pod_is_scheduled():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 4)
        e.device_class()
        e.pod("p", requests={"deviceclass.resource.kubernetes.io/gpu": "2"})
        await e.wait(lambda: e.node_of("p") == "n1")
        st = e.get_pod("p")["status"]["extendedResourceClaimStatus"]
        claim = e.c.get(e.rt("resourceclaims", G), "default", st["resourceClaimName"])
        assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


async def test_unreserve_deletes_the_claim_prebind_created():
    """A PreBind failure after the special claim was created: Unreserve removes its
    finalizer and deletes it; the next attempt creates a fresh one."""
    from mockkube.machinery import errors

    async with env() as e:
        e.node("n1")
        e.slice("n1", 2)
        e.device_class(extendedResourceName="example.com/gpu")
        plugin = e.sched.dra_plugin
        real = plugin._record_pod_status
        failed: list[str] = []

        def fail_once(pod, s, node_name):
            if not failed:
                failed.append(s.ext_by_node["__created__"][0]["metadata"]["name"])
                raise errors.internal("pod status write failed")
            return real(pod, s, node_name)

        plugin._record_pod_status = fail_once
        e.pod("p", requests={"example.com/gpu": "1"})
        await e.wait(lambda: e.node_of("p") == "n1")
        st = e.get_pod("p")["status"]["extendedResourceClaimStatus"]
        assert failed and st["resourceClaimName"] != failed[0]
        assert e.c.get(e.rt("resourceclaims", G), "default", failed[0]) is None
        claims = e.c.list(e.rt("resourceclaims", G), "default")
        assert [c["metadata"]["name"] for c in claims] == [st["resourceClaimName"]]


async def test_node_resources_fit_leaves_dra_backed_resources_to_dynamic_resources():
    async with env() as e:
        e.node("plugin", extra={"example.com/gpu": "1"})
        e.device_class(extendedResourceName="example.com/gpu")
        e.pod("two", requests={"example.com/gpu": "2"})
        await e.wait(lambda: e.events("two"))
        msg = e.events("two")[-1]["message"]
        # the device-plugin node is too small; no node has DRA devices
        assert "Insufficient example.com/gpu" in msg
        e.node("dra")
        e.slice("dra", 2)
        await e.wait(lambda: e.node_of("two") == "dra")
