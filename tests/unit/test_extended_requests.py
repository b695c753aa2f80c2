"""KEP-5004 pure rules: class precedence, request names and mappings (upstream's
createRequestsAndMappings), and ResourceQuota counting (the KEP's adjusted example)."""

from __future__ import annotations

from mockkube.dra.extended import extended_resource_claim, extended_resource_classes
from mockkube.rules import quota


def dclass(name, ts="2026-01-01T00:00:00Z", ern=None):
    spec = {"extendedResourceName": ern} if ern else {}
    return {"metadata": {"name": name, "creationTimestamp": ts}, "spec": spec}


def ctr(name, restart=None, **req):
    c = {"name": name, "resources": {"requests": {k.replace("__", "/").replace("_", "."): v for k, v in req.items()}}}
    if restart:
        c["restartPolicy"] = restart
    return c


def pod(containers, init=(), ephemeral=()):
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {"containers": list(containers), "initContainers": list(init), "ephemeralContainers": list(ephemeral)},
    }


def test_newest_class_wins_ties_go_to_the_first_name():
    m = extended_resource_classes(
        [dclass("b", ern="x.com/g"), dclass("a", ern="x.com/g"), dclass("old", "2025-01-01T00:00:00Z", "x.com/g")]
    )
    assert m["x.com/g"] == "a"
    m = extended_resource_classes([dclass("a", ern="x.com/g"), dclass("z", "2026-02-01T00:00:00Z", "x.com/g")])
    assert m["x.com/g"] == "z" and m["deviceclass.resource.kubernetes.io/a"] == "a"


def test_init_containers_reuse_long_lived_requests_and_collapse_to_the_largest():
    classes = [dclass("gpu", ern="x.com/g")]
    p = pod(
        [ctr("main", x_com__g="2", cpu="1")],
        init=[ctr("i0", x_com__g="1"), ctr("i1", x_com__g="4"), ctr("side", "Always", x_com__g="1")],
    )
    claim, mappings = extended_resource_claim(p, classes)
    reqs = {r["name"]: r["exactly"]["count"] for r in claim["spec"]["devices"]["requests"]}
    # i0 fits in side's + main's devices; i1 reuses them (3) and needs 1 more
    assert reqs == {"container-1-request-0": 1, "container-2-request-0": 1, "container-3-request-1": 2}
    assert [(m["containerName"], m["requestName"]) for m in mappings] == [
        ("side", "container-2-request-0"),
        ("main", "container-3-request-1"),
        ("i0", "container-2-request-0"),
        ("i1", "container-2-request-0"),
        ("i1", "container-3-request-1"),
        ("i1", "container-1-request-0"),
    ]


def test_ephemeral_containers_and_zero_requests_do_not_count():
    classes = [dclass("gpu", ern="x.com/g")]
    p = pod([ctr("a", x_com__g="0")], ephemeral=[ctr("debug", x_com__g="3")])
    assert extended_resource_claim(p, classes) == (None, [])


def test_quota_counts_as_the_kep_adjusted_example():
    """gpu-0 device plugin, gpu-1 DRA explicit, gpu-2 DRA implicit, gpu-3 claim, gpu-4 template claim."""
    names = {"mygpuclass": "example.com/gpu"}
    hard = {
        "requests.example.com/gpu": "10",
        "requests.deviceclass.resource.kubernetes.io/mygpuclass": "10",
        "mygpuclass.deviceclass.resource.k8s.io/devices": "10",
    }
    p0 = pod([ctr("c", example_com__gpu="1")])
    p1 = pod([ctr("c", example_com__gpu="1")])
    p2 = pod([ctr("c", **{"deviceclass.resource.kubernetes.io/mygpuclass": "1"})])
    for i, p in enumerate((p0, p1, p2)):
        p["metadata"].update(name=f"p{i}", uid=f"u{i}")
    pods = {"p1": p1, "p2": p2}

    def claim(name, owner=None):
        meta = {"name": name, "namespace": "ns"}
        if owner:
            meta["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
            meta["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": owner,
                    "uid": pods[owner]["metadata"]["uid"],
                    "controller": True,
                }
            ]
        return {
            "metadata": meta,
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "container-0-request-0",
                            "exactly": {"deviceClassName": "mygpuclass", "allocationMode": "ExactCount", "count": 1},
                        }
                    ]
                }
            },
        }

    claims = [
        claim("p1-extended-resources-a", "p1"),
        claim("p2-extended-resources-b", "p2"),
        claim("gpu-3"),
        claim("p4-gpu-xyz"),
    ]
    owner = lambda c: pods.get(c["metadata"]["ownerReferences"][0]["name"])  # noqa: E731
    used = quota.total_usage(hard, [p0, p1, p2], claims, names, owner)
    assert used == {
        "requests.example.com/gpu": "5",
        "requests.deviceclass.resource.kubernetes.io/mygpuclass": "4",
        "mygpuclass.deviceclass.resource.k8s.io/devices": "4",
    }


def test_quota_exceeded_wording_and_unknown_status():
    q = {"metadata": {"name": "gpu"}, "spec": {"hard": {"requests.example.com/gpu": "2"}}}
    delta = quota.pod_usage(pod([ctr("c", example_com__gpu="2")]))
    assert (
        quota.exceeded(q, delta, quota.pod_matches)
        == "status unknown for quota: gpu, resources: requests.example.com/gpu"
    )
    q["status"] = {"hard": {"requests.example.com/gpu": "2"}, "used": {"requests.example.com/gpu": "1"}}
    assert quota.exceeded(q, delta, quota.pod_matches) == (
        "exceeded quota: gpu, requested: requests.example.com/gpu=2, used: requests.example.com/gpu=1, "
        "limited: requests.example.com/gpu=2"
    )
    q["status"]["used"]["requests.example.com/gpu"] = "0"
    assert quota.exceeded(q, delta, quota.pod_matches) is None
