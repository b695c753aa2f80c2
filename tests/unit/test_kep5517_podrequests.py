"""KEP-5517 "Resource Calculation" as the shared PodRequests computes it from a pod and its
status.nodeAllocatableResourceClaimStatuses: one table per use case with the totals the
KEP states, the rules it spells out (claims once, unreferenced claims counted, pod-level
resources first, overhead on top), and the kubelet's admission counting the same."""

from __future__ import annotations

import pytest

from mockkube.kubelet import admission
from mockkube.machinery.podrequests import pod_requests
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins import nodeallocatable

GI = 1024**3
MI = 1024**2


def c(name: str, requests: dict | None = None, claims: tuple[str, ...] = (), **extra) -> dict:
    out: dict = {"name": name, "resources": {}, **extra}
    if requests:
        out["resources"]["requests"] = requests
    if claims:
        out["resources"]["claims"] = [{"name": n} for n in claims]
    return out


def st(claim: str, containers: list[str], **resources: str) -> dict:
    entry: dict = {"resourceClaimName": claim, "resources": resources}
    if containers:
        entry["containers"] = containers
    return entry


def p(containers: list[dict], statuses: list[dict] | None = None, **spec) -> dict:
    pod: dict = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
        "spec": {"containers": containers, **spec},
        "status": {},
    }
    if statuses is not None:
        pod["status"]["nodeAllocatableResourceClaimStatuses"] = statuses
    return pod


USE_CASE_1 = [
    (
        "without the claim",
        p([c("my-app1", {"cpu": "100m", "memory": "100Mi"}, ("m",)), c("my-app2", None, ("m",))]),
        {"cpu": 100, "memory": 100 * MI},
    ),
    (
        "with {cpu: 4, memory: 8Gi} from my-cpu-mem-claim",
        p(
            [c("my-app1", {"cpu": "100m", "memory": "100Mi"}, ("m",)), c("my-app2", None, ("m",))],
            [st("cpu-mem-claim", ["my-app1", "my-app2"], cpu="4", memory="8Gi")],
        ),
        {"cpu": 4100, "memory": 8 * GI + 100 * MI},
    ),  # "4100m, 8.1Gi"
]

USE_CASE_2 = [
    (
        "scenario A: GPU selected",
        p([c("my-app", {"cpu": "1", "memory": "1Gi"}, ("gpu-or-cpu",))], []),
        {"cpu": 1000, "memory": GI},
    ),
    (
        "scenario B: CPU selected",
        p([c("my-app", {"cpu": "1", "memory": "1Gi"}, ("gpu-or-cpu",))], [st("gpu-or-cpu", ["my-app"], cpu="30")]),
        {"cpu": 31000, "memory": GI},
    ),
]

_UC3 = [
    c("my-app1", {"cpu": "100m", "memory": "1Gi"}, ("my-cpu-claim", "my-gpu-claim")),
    c("my-app2", {"cpu": "200m", "memory": "2Gi"}, ("my-cpu-claim", "my-gpu-claim")),
]
USE_CASE_3 = [
    ("standard requests only", p(_UC3), {"cpu": 300, "memory": 3 * GI}),
    (
        "cpu-claim {cpu: 10} + gpu-claim {cpu: 2, memory: 4Gi}",
        p(
            _UC3,
            [
                st("cpu-claim", ["my-app1", "my-app2"], cpu="10"),
                st("gpu-claim", ["my-app1", "my-app2"], cpu="2", memory="4Gi"),
            ],
        ),
        {"cpu": 12300, "memory": 7 * GI},
    ),  # 12.3 CPU and 7Gi
]

_UC4 = dict(resources={"requests": {"cpu": "11", "memory": "10Gi"}, "limits": {"cpu": "11", "memory": "10Gi"}})
_UC4_CONTAINERS = [
    c("my-app1", None, ("cpu-req-10-cpus",)),
    c("my-app2", None, ("cpu-req-10-cpus",)),
    c("sidecar-container-1"),
    c("sidecar-container-2"),
]
USE_CASE_4 = [
    (
        "pod-level resources take precedence over the claim",
        p(_UC4_CONTAINERS, [st("cpu-req-10-cpus", ["my-app1", "my-app2"], cpu="10")], **_UC4),
        {"cpu": 11000, "memory": 10 * GI},
    ),
]

MULTIPLE_CLAIMS_PER_CONTAINER = [
    (
        "claim A counted once",
        p(
            [c("c1", {"cpu": "1"}, ("a", "b")), c("c2", {"cpu": "2"}, ("a",))],
            [st("claim-a", ["c1", "c2"], cpu="4"), st("claim-b", ["c1"], cpu="2")],
        ),
        {"cpu": 9000},
    ),
]

UNREFERENCED_CLAIMS = [
    (
        "a claim no container references still counts once",
        p([c("app", {"cpu": "1"})], [st("exclusive", [], cpu="4")]),
        {"cpu": 5000},
    ),
]


def _check(pod: dict, want: dict) -> None:
    got = {k: v for k, v in pod_requests(pod).items() if v}
    assert got == want
    # the kubelet admits against exactly the same demand
    cap = {"cpu": f"{want.get('cpu', 0)}m", "memory": str(want.get("memory", 0)), "pods": "10"}
    assert admission.admit(pod, cap, []) is None
    tighter = dict(cap, cpu=f"{want['cpu'] - 1}m")
    assert admission.admit(pod, tighter, [])[0] == "OutOfcpu"


@pytest.mark.parametrize("case", USE_CASE_1, ids=[x[0] for x in USE_CASE_1])
def test_use_case_1_standard_and_dra_cpu_memory(case):
    _check(case[1], case[2])


@pytest.mark.parametrize("case", USE_CASE_2, ids=[x[0] for x in USE_CASE_2])
def test_use_case_2_fungible_claim(case):
    _check(case[1], case[2])


@pytest.mark.parametrize("case", USE_CASE_3, ids=[x[0] for x in USE_CASE_3])
def test_use_case_3_native_and_auxiliary(case):
    _check(case[1], case[2])


@pytest.mark.parametrize("case", USE_CASE_4, ids=[x[0] for x in USE_CASE_4])
def test_use_case_4_pod_level_resources(case):
    _check(case[1], case[2])


@pytest.mark.parametrize("case", MULTIPLE_CLAIMS_PER_CONTAINER, ids=[x[0] for x in MULTIPLE_CLAIMS_PER_CONTAINER])
def test_multiple_claims_per_container(case):
    _check(case[1], case[2])


@pytest.mark.parametrize("case", UNREFERENCED_CLAIMS, ids=[x[0] for x in UNREFERENCED_CLAIMS])
def test_unreferenced_claims(case):
    _check(case[1], case[2])


def test_init_containers_sidecars_overhead_and_claims():
    pod = p(
        [c("app", {"cpu": "1", "memory": "1Gi"})],
        [st("x", ["app"], cpu="2", **{"hugepages-2Mi": "4Mi"})],
        initContainers=[c("init", {"cpu": "3"}), c("sidecar", {"cpu": "500m"}, restartPolicy="Always")],
        overhead={"cpu": "250m", "memory": "64Mi"},
    )
    # max(app + sidecar = 1.5, init = 3) + claim 2 + overhead 0.25
    assert pod_requests(pod) == {"cpu": 5250, "memory": GI + 64 * MI, "hugepages-2Mi": 4 * MI}
    assert pod_requests(pod, use_dra_status=False)["cpu"] == 3250
    # pod-level cpu replaces containers + claims; overhead still on top; memory untouched
    pod["spec"]["resources"] = {"requests": {"cpu": "6"}}
    assert pod_requests(pod) == {"cpu": 6250, "memory": GI + 64 * MI, "hugepages-2Mi": 4 * MI}
    assert pod_requests(pod, skip_pod_level=True)["cpu"] == 5250


def test_kubelet_admission_message_counts_running_pods_claims():
    running = p([c("a")], [st("held", ["a"], cpu="12")])
    newcomer = p([c("b", {"cpu": "8"})])
    reason, msg = admission.admit(newcomer, {"cpu": "16", "pods": "110"}, [running])
    assert (reason, msg) == (
        "OutOfcpu",
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 8000, used: 12000, capacity: 16000",
    )


def test_cache_ledger_adds_and_releases_claims_and_consumers():
    cache = Cache()
    cache.set_node({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "16"}}})
    pod = p([c("a", {"cpu": "1"})], [st("held", ["a"], cpu="12")])
    pod["spec"]["nodeName"] = "n"
    cache.set_pod(pod)
    info = cache.nodes["n"]
    assert info.requested == {"cpu": 13000} and info.claim_consumers == {("ns", "held"): {"u1"}}
    assert nodeallocatable.check_sharing({"metadata": {"namespace": "ns", "uid": "u2"}}, info, ["held"]).reasons == [
        "node allocatable resource claim held is already used by another pod"
    ]
    assert nodeallocatable.check_sharing({"metadata": {"namespace": "ns", "uid": "u1"}}, info, ["held"]) is None
    assert nodeallocatable.check_sharing({"metadata": {"namespace": "other", "uid": "u2"}}, info, ["held"]) is None
    twin = p([c("a")], [st("held", ["a"], cpu="12")])
    twin["metadata"]["uid"], twin["spec"]["nodeName"] = "u3", "n"
    cache.set_pod(twin)
    assert nodeallocatable.check_sharing({"metadata": {"namespace": "ns", "uid": "u1"}}, info, ["held"]).reasons == [
        "node allocatable resource claim held shared by multiple pods"
    ]
    cache.remove_pod("u3")
    cache.remove_pod("u1")
    assert info.requested == {"cpu": 0} and info.claim_consumers == {}


def test_fit_reasons_and_codes():
    cache = Cache()
    cache.set_node(
        {
            "metadata": {"name": "n"},
            "status": {
                "allocatable": {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "10Gi", "hugepages-1Gi": "2Gi"}
            },
        }
    )
    info = cache.nodes["n"]
    info.requested = {"cpu": 2000}
    st_ = nodeallocatable.fits(info, {"cpu": 3000, "hugepages-1Gi": 3 * GI})
    assert st_.reasons == ["Insufficient cpu", "Insufficient hugepages-1Gi"]
    assert st_.code == 3  # 3Gi of 1Gi pages exceed the whole node
    assert nodeallocatable.fits(info, {"cpu": 3000}).code == 2  # would fit an empty node
    assert nodeallocatable.fits(info, {"cpu": 2000, "memory": 8 * GI}) is None
