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
