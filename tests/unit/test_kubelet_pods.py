"""Kubelet simulator: pod phases as a function of time, admission, DRA prepare and
unprepare, graceful deletion, leases and the node lifecycle controller."""

import asyncio

import pytest

from mockkube.client.client import Client, clone
from mockkube.config.profile import load
from mockkube.kubelet import admission, lifecycle
from mockkube.kubelet.cluster import ClusterRuntime
from mockkube.testing.cluster import running_server


def _pod(annotations=None, containers=("app",), init=(), policy="Always"):
    return {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1", "annotations": annotations or {}},
        "spec": {
            "restartPolicy": policy,
            "containers": [{"name": n, "image": "nginx"} for n in containers],
            "initContainers": [{"name": n, "image": "busybox"} for n in init],
        },
    }


@pytest.mark.parametrize(
    "annotations,policy,at,phase,ready,wake",
    [
        ({}, "Always", 0, "Running", True, None),
        ({"mockkube.io/ready-after": "5s"}, "Always", 1, "Running", False, 5),
        ({"mockkube.io/ready-after": "5s"}, "Always", 6, "Running", True, None),
        ({"mockkube.io/exit-after": "10s"}, "Never", 3, "Running", True, 10),
        ({"mockkube.io/exit-after": "10s"}, "Never", 10, "Succeeded", False, None),
        ({"mockkube.io/exit-after": "1s", "mockkube.io/exit-code": "3"}, "Never", 2, "Failed", False, None),
        ({"mockkube.io/exit-after": "1s", "mockkube.io/exit-code": "3"}, "Always", 2, "Running", False, None),
        ({"mockkube.io/fail-start": "ErrImagePull"}, "Always", 50, "Pending", False, None),
    ],
)
def test_compute_status_over_time(annotations, policy, at, phase, ready, wake):
    st, nxt = lifecycle.compute_status(_pod(annotations, policy=policy), 100.0, 100.0 + at, "10.0.0.5", "172.18.0.2")
    assert st["phase"] == phase
    assert st["containerStatuses"][0]["ready"] is ready
    assert (nxt - 100.0 if nxt is not None else None) == wake
    assert st["podIP"] == "10.0.0.5" and st["hostIPs"] == [{"ip": "172.18.0.2"}]


def test_init_containers_run_first_and_crashloop_and_waiting_reasons():
    pod = _pod({"mockkube.io/exit-after.init": "4s"}, init=("init",))
    st, nxt = lifecycle.compute_status(pod, 0.0, 1.0, "ip", "host")
    assert st["phase"] == "Pending" and nxt == 4.0
    assert st["initContainerStatuses"][0]["state"]["running"]
    assert st["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert {c["type"]: c["status"] for c in st["conditions"]}["Initialized"] == "False"
    st, _ = lifecycle.compute_status(pod, 0.0, 4.0, "ip", "host")
    assert st["phase"] == "Running"
    assert st["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    crash = _pod({"mockkube.io/exit-after": "1s", "mockkube.io/exit-code": "2"})
    st, _ = lifecycle.compute_status(crash, 0.0, 5.0, "ip", "host")
    cs = st["containerStatuses"][0]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["lastState"]["terminated"]["exitCode"] == 2 and cs["restartCount"] == 1


def _req(cpu="", mem=""):
    r = {}
    if cpu:
        r["cpu"] = cpu
    if mem:
        r["memory"] = mem
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": r}}]}}


def test_admission_counts_running_pods_and_dra_node_allocatable():
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert admission.admit(_req("2"), alloc, [_req("2")]) is None
    reason, msg = admission.admit(_req("3"), alloc, [_req("2")])
    assert reason == "OutOfcpu"
    assert msg == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 2000, capacity: 4000"
    )
    dra = _req("1")
    dra["status"] = {
        "nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "c", "resources": {"cpu": "2", "memory": "8Gi"}}]
    }
    assert admission.admit(dra, alloc, []) is None
    assert admission.admit(dra, alloc, [_req("", "1Gi")])[0] == "OutOfmemory"
    assert admission.admit(_req("1"), {"cpu": "4", "pods": "1"}, [_req()])[0] == "OutOfpods"


def test_admission_ignores_extended_resources_the_node_does_not_advertise():
    """Upstream removeMissingExtendedResources: a DRA-backed extended resource (KEP-5004)
    is allocated by the scheduler, not advertised by the node, so the kubelet admits it."""
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/nic": "1"}
    gpu = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]}}
    assert admission.admit(gpu, alloc, []) is None
    nic = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"example.com/nic": "2"}}}]}}
    assert admission.admit(nic, alloc, [])[0] == "OutOfexample.com/nic"
    hp = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"hugepages-2Mi": "2Mi"}}}]}}
    assert admission.admit(hp, alloc, [])[0] == "OutOfhugepages-2Mi"


# -- integration: pre-bound pods, pre-allocated claims --------------------------------

PROFILE = """
nodes:
- name: gpu
  capacity: {cpu: "4", memory: 16Gi}
  drivers:
    gpu.example.com: {count: 2}
- name: plain
  capacity: {cpu: "2"}
"""


async def _until(pred, n: int = 600):
    for _ in range(n):
        if pred():
            return True
        await asyncio.sleep(0.005)
    return False


class Env:
    def __init__(self, server, rt):
        self.s, self.rt = server, rt
        self.c = Client(server.resources, "test")
        self.pods = self.c.rt("pods")
        self.claims = self.c.rt("resourceclaims", "resource.k8s.io")

    def pod(self, name="p"):
        return self.c.get(self.pods, "default", name)


async def _env(clock=None):
    kw = {"clock": clock} if clock else {}
    cm = running_server(**kw)
    server = await cm.__aenter__()
    rt = ClusterRuntime(server)
    await rt.start(load(PROFILE))
    return cm, Env(server, rt)


async def _close(cm, env):
    await env.rt.stop()
    await cm.__aexit__(None, None, None)


def _claim(env, name, pod=None, device="gpu-0"):
    claim = env.c.create(
        env.claims,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        },
    )
    new = clone(claim)
    new["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu", "device": device}]}
        }
    }
    if pod is not None:
        new["status"]["reservedFor"] = [
            {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
        ]
    return env.c.update_status(env.claims, new)


def _reserve(env, name, pod):
    claim = clone(env.c.get(env.claims, "default", name))
    claim["status"]["reservedFor"] = [
        {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
    ]
    env.c.update_status(env.claims, claim)


def _gpu_pod(env, name="p"):
    return env.c.create(
        env.pods,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": "gpu",
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}],
                "containers": [{"name": "app", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}],
            },
        },
    )


async def test_nodes_register_ready_with_leases():
    cm, env = await _env()
    try:
        node = env.c.get(env.c.rt("nodes"), "", "gpu")
        conds = {c["type"]: c["status"] for c in node["status"]["conditions"]}
        assert conds == {"MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False", "Ready": "True"}
        assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.36.")
        assert node["status"]["allocatable"]["cpu"] == "4"
        lease = env.c.get(env.c.rt("leases", "coordination.k8s.io"), "kube-node-lease", "gpu")
        assert lease["spec"]["holderIdentity"] == "gpu"
        assert lease["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]
    finally:
        await _close(cm, env)


async def test_a_kubelet_renews_its_lease_as_last_written_without_reading_it():
    """As upstream's lease controller (latestLease): a renewal PUTs the Lease this kubelet
    last wrote, with no GET, so a kubelet shard needs no Lease informer; a Lease changed or
    deleted by someone else meanwhile is read again (409) or created anew (404)."""
    now = [10000.0]
    cm, env = await _env(lambda: now[0])
    try:
        leases = env.c.rt("leases", "coordination.k8s.io")
        kubelet = env.rt.kubelet.client
        reads: list[str] = []
        real_get = kubelet.get
        kubelet.get = lambda rt, ns, name: (rt is leases and reads.append(name), real_get(rt, ns, name))[1]

        def renew_time():
            return env.c.get(leases, "kube-node-lease", "gpu")["spec"]["renewTime"]

        async def renewed(before):
            now[0] += 10
            env.rt.resync()
            assert await _until(lambda: renew_time() != before)

        first = renew_time()
        await renewed(first)
        assert reads == []  # renewed from the Lease it last wrote
        other = clone(env.c.get(leases, "kube-node-lease", "gpu"))
        other["metadata"]["labels"] = {"touched": "yes"}
        env.c.update(leases, other)  # someone else writes it: the kept one is stale (409)
        before = renew_time()
        await renewed(before)
        assert "gpu" in reads
        assert env.c.get(leases, "kube-node-lease", "gpu")["metadata"]["labels"] == {"touched": "yes"}
        env.c.delete(leases, "kube-node-lease", "gpu")  # gone (404): created anew
        now[0] += 10
        env.rt.resync()
        assert await _until(lambda: env.c.get(leases, "kube-node-lease", "gpu") is not None)
        assert env.c.get(leases, "kube-node-lease", "gpu")["spec"]["holderIdentity"] == "gpu"
    finally:
        await _close(cm, env)


async def test_claim_prepared_before_start_and_unprepared_on_delete():
    cm, env = await _env()
    try:
        pod = _gpu_pod(env)
        _claim(env, "c1")  # allocated but not reserved for the pod yet
        assert await _until(
            lambda: any(e["reason"] == "FailedPrepareDynamicResources" for e in env.c.list(env.c.rt("events")))
        )
        assert env.pod()["status"]["phase"] == "Pending"
        assert env.rt.kubelet.pod_resources("gpu") == {"podResources": []}
        _reserve(env, "c1", pod)
        assert await _until(lambda: env.pod()["status"].get("phase") == "Running")
        res = env.rt.kubelet.pod_resources("gpu")["podResources"][0]
        dyn = res["containers"][0]["dynamicResources"][0]
        assert dyn["claimName"] == "c1"
        assert dyn["claimResources"][0]["cdiDevices"] == [{"name": "gpu.example.com/gpu=gpu-0"}]
        assert any(
            e["reason"] == "ResourceClaimPrepared" and "gpu.example.com/gpu=gpu-0" in e["message"]
            for e in env.c.list(env.c.rt("events"))
        )
        claim_uid = env.c.get(env.claims, "default", "c1")["metadata"]["uid"]
        assert claim_uid in env.rt.drivers["gpu.example.com"].prepared
        env.c.delete(env.pods, "default", "p")
        assert await _until(lambda: env.pod() is None)
        assert claim_uid not in env.rt.drivers["gpu.example.com"].prepared
    finally:
        await _close(cm, env)


async def test_driver_missing_on_node_blocks_start():
    cm, env = await _env()
    try:
        pod = env.c.create(
            env.pods,
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {
                    "nodeName": "plain",
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}],
                    "containers": [{"name": "app", "image": "cuda"}],
                },
            },
        )
        _claim(env, "c1", pod)
        assert await _until(lambda: any("not registered" in e["message"] for e in env.c.list(env.c.rt("events"))))
        assert env.pod()["status"]["phase"] == "Pending"
    finally:
        await _close(cm, env)


async def test_rejected_pod_fails_with_out_of_cpu():
    cm, env = await _env()
    try:
        env.c.create(
            env.pods,
            {
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {
                    "nodeName": "plain",
                    "containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "3"}}}],
                },
            },
        )
        assert await _until(lambda: env.pod()["status"].get("phase") == "Failed")
        assert env.pod()["status"]["reason"] == "OutOfcpu"
    finally:
        await _close(cm, env)


async def test_graceful_deletion_waits_for_termination_delay():
    now = [5000.0]
    cm, env = await _env(lambda: now[0])
    try:
        env.c.create(
            env.pods,
            {
                "metadata": {
                    "name": "p",
                    "namespace": "default",
                    "annotations": {"mockkube.io/termination-delay": "20s"},
                },
                "spec": {"nodeName": "plain", "containers": [{"name": "a", "image": "x"}]},
            },
        )
        assert await _until(lambda: env.pod()["status"].get("phase") == "Running")
        env.c.delete(env.pods, "default", "p")
        await _until(lambda: False, 20)
        assert env.pod() is not None and env.pod()["metadata"]["deletionTimestamp"]
        now[0] += 20
        env.rt.resync()
        assert await _until(lambda: env.pod() is None)
    finally:
        await _close(cm, env)


async def test_stopped_kubelet_makes_node_unreachable_and_restart_recovers():
    now = [10000.0]
    cm, env = await _env(lambda: now[0])
    try:
        nodes = env.c.rt("nodes")

        def ready():
            return {c["type"]: c["status"] for c in env.c.get(nodes, "", "gpu")["status"]["conditions"]}["Ready"]

        def taints():
            return sorted((t["key"], t["effect"]) for t in env.c.get(nodes, "", "gpu")["spec"].get("taints") or [])

        env.rt.stop_kubelet("gpu")
        now[0] += 30
        env.rt.resync()
        await _until(lambda: False, 20)
        assert ready() == "True"  # the plain node kept renewing; gpu still within the grace period
        now[0] += 30
        env.rt.resync()
        assert await _until(lambda: ready() == "Unknown" and taints())
        assert taints() == [
            ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/unreachable", "NoSchedule"),
        ]
        plain = {c["type"]: c["status"] for c in env.c.get(nodes, "", "plain")["status"]["conditions"]}
        assert plain["Ready"] == "True"
        env.rt.start_kubelet("gpu")
        assert await _until(lambda: ready() == "True" and not taints())
    finally:
        await _close(cm, env)


def test_container_log_waits_for_start_and_tails():
    import pytest

    from mockkube.kubelet.logs import container_log
    from mockkube.machinery.errors import APIError

    pod = {
        "metadata": {"name": "p", "annotations": {"mockkube.io/log": "a\nb\nc"}},
        "status": {"containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}]},
    }
    with pytest.raises(APIError) as e:
        container_log(pod, "c")
    assert e.value.code == 400 and e.value.message == 'container "c" in pod "p" is waiting to start: ContainerCreating'
    pod["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": "2026-11-22T00:00:00Z"}}
    assert container_log(pod, "c") == "a\nb\nc\n"
    assert container_log(pod, "c", tail_lines=2) == "b\nc\n"
    assert container_log(pod, "c", tail_lines=0) == ""
    assert container_log(pod, "c", timestamps=True).startswith("2026-11-22T00:00:00.000000000Z a\n")
