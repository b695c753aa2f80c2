"""ResourceClaim controller: claims from templates, status, cleanup."""

from __future__ import annotations

import pytest

from mockkube.controllers.resourceclaim import generate_name
from tests.unit._sched_helpers import G, env


@pytest.mark.parametrize(
    "pod,claim,want",
    [
        ("web", "gpu", "web-gpu-"),
        ("p" * 40, "c" * 30, "p" * 31 + "-" + "c" * 23),
    ],
)
def test_generate_name(pod, claim, want):
    assert generate_name(pod, claim) == want


async def test_claim_from_template_naming_owner_annotations_and_status():
    async with env(scheduler=False) as e:
        e.device_class()
        e.template("t", labels={"team": "ml"}, annotations={"note": "x"})
        pod = e.pod("web", template="t")
        st = await e.wait(lambda: (e.get_pod("web").get("status") or {}).get("resourceClaimStatuses"))
        assert st[0]["name"] == "gpu" and st[0]["resourceClaimName"].startswith("web-gpu-")
        assert len(st[0]["resourceClaimName"]) == len("web-gpu-") + 5
        claim = e.claim_of("web")
        m = claim["metadata"]
        assert m["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "web",
                "uid": pod["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert m["annotations"] == {"note": "x", "resource.kubernetes.io/pod-claim-name": "gpu"}
        assert m["labels"] == {"team": "ml"}
        assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
        await e.settle()
        assert len(e.c.list(e.rt("resourceclaims", G), "default")) == 1  # no duplicates


async def test_template_created_later_then_claim_appears():
    async with env(scheduler=False) as e:
        e.pod("web", template="late")
        await e.settle()
        assert not (e.get_pod("web").get("status") or {}).get("resourceClaimStatuses")
        e.template("late")
        await e.wait(lambda: (e.get_pod("web").get("status") or {}).get("resourceClaimStatuses"))


async def test_cleanup_after_pod_deletion_deallocates_and_deletes():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.device_class()
        e.template("t")
        e.pod("web", template="t")
        await e.wait(lambda: e.node_of("web"))
        name = e.claim_of("web")["metadata"]["name"]
        e.c.delete(e.rt("pods"), "default", "web", {"gracePeriodSeconds": 0})
        e.c.finalize_delete(e.rt("pods"), "default", "web")
        await e.wait(lambda: e.c.get(e.rt("resourceclaims", G), "default", name) is None)


async def test_finished_pod_releases_shared_claim_but_keeps_it():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.device_class()
        e.claim("shared")
        e.pod("a", claim="shared")
        await e.wait(lambda: e.node_of("a"))
        pod = e.get_pod("a")
        e.c.patch(e.rt("pods"), "default", "a", {"status": {"phase": "Succeeded"}}, "merge", "status")

        def released():
            c = e.c.get(e.rt("resourceclaims", G), "default", "shared")
            return c if not (c.get("status") or {}).get("reservedFor") and "finalizers" not in c["metadata"] else None

        c = await e.wait(released)
        assert "allocation" not in c["status"]  # deallocated when the last consumer went
        assert pod["metadata"]["uid"]


async def test_scheduled_pod_gets_reserved_by_controller():
    async with env(scheduler=False) as e:
        e.claim("pre")
        e.c.update_status(
            e.rt("resourceclaims", G),
            {
                **e.c.get(e.rt("resourceclaims", G), "default", "pre"),
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
                            ]
                        }
                    }
                },
            },
        )
        e.pod("p", claim="pre", nodeName="n1")
        c = await e.wait(
            lambda: (e.c.get(e.rt("resourceclaims", G), "default", "pre").get("status") or {}).get("reservedFor")
        )
        assert c[0]["name"] == "p"
