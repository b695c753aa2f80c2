"""The kubelet endpoints the node proxy and a shard's kubelet port serve (kubelet/nodeproxy.py),
from a node and its pods: the stats summary, the kubelet's own metrics and cAdvisor's. Pods of
the simulated runtime use nothing, so their figures are 0; what a process uses is in
tests/e2e/test_node_proxy.py."""

from __future__ import annotations

from mockkube.kubelet.nodeproxy import cadvisor_metrics, kubelet_metrics, probe_metrics, summary
from mockkube.machinery import meta

NODE = {
    "metadata": {"name": "n-0", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "status": {"capacity": {"cpu": "8", "memory": "32Gi"}},
}


def _pod(name: str, containers: dict[str, str], phase: str = "Running") -> dict:
    """A pod whose containers are in the given states (running, terminated, waiting)."""
    statuses = []
    for c, state in containers.items():
        detail = {"startedAt": "2026-01-01T00:01:00Z"} if state == "running" else {}
        statuses.append({"name": c, "state": {state: detail}})
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"nodeName": "n-0", "containers": [{"name": c, "image": f"img-{c}"} for c in containers]},
        "status": {"phase": phase, "startTime": "2026-01-01T00:00:30Z", "containerStatuses": statuses},
    }


def test_the_summary_names_the_node_its_running_pods_and_their_containers():
    now = meta.parse_time("2026-01-01T01:00:00Z")
    pods = [_pod("b", {"app": "running", "side": "terminated"}), _pod("a", {"x": "waiting"}, "Pending")]
    s = summary(NODE, pods, now)
    node = s["node"]
    assert node["nodeName"] == "n-0" and node["startTime"] == "2026-01-01T00:00:00Z"
    assert node["cpu"] == {"time": "2026-01-01T01:00:00Z", "usageCoreNanoSeconds": 0}
    assert node["memory"]["availableBytes"] == 32 * 2**30 and node["memory"]["workingSetBytes"] == 0
    assert [c["name"] for c in node["systemContainers"]] == ["pods"]
    (pod,) = s["pods"]  # a pod with no running container has nothing to report
    assert pod["podRef"] == {"name": "b", "namespace": "ns", "uid": "uid-b"}
    assert pod["startTime"] == "2026-01-01T00:00:30Z"
    assert [(c["name"], c["startTime"]) for c in pod["containers"]] == [("app", "2026-01-01T00:01:00Z")]
    assert pod["containers"][0]["memory"]["usageBytes"] == 0


def test_the_kubelets_metrics_count_running_pods_and_containers_by_state():
    pods = [_pod("b", {"app": "running", "side": "terminated"}), _pod("a", {"x": "waiting"}, "Pending")]
    lines = kubelet_metrics("n-0", pods).splitlines()
    assert 'kubelet_node_name{node="n-0"} 1' in lines
    assert "kubelet_running_pods 1" in lines
    assert 'kubelet_running_containers{container_state="running"} 1' in lines
    assert 'kubelet_running_containers{container_state="exited"} 1' in lines
    assert "# TYPE kubelet_running_pods gauge" in lines


def test_cadvisor_metrics_give_each_running_container_and_the_machines_capacity():
    text = cadvisor_metrics(NODE, [_pod("b", {"app": "running", "side": "terminated"})])
    lines = text.splitlines()
    cpu = [line for line in lines if line.startswith("container_cpu_usage_seconds_total{")]
    assert len(cpu) == 1
    assert cpu[0].startswith(
        'container_cpu_usage_seconds_total{container="app",cpu="total",image="img-app",namespace="ns",pod="b"} 0 '
    )
    assert "machine_cpu_cores 8" in lines
    assert "machine_memory_bytes 3.4359738368e+10" in lines
    assert "# TYPE container_start_time_seconds gauge" in lines


def test_probe_metrics_of_simulated_pods_are_empty_families():
    text = probe_metrics([_pod("b", {"app": "running"})])
    assert text.splitlines() == [
        "# HELP prober_probe_total [ALPHA] Cumulative number of a liveness, readiness or startup probe "
        "for a container by result.",
        "# TYPE prober_probe_total counter",
    ]


def test_pods_on_a_node_come_from_the_node_name_index(monkeypatch):
    """A node's pods, in (namespace, name) order, without reading any other pod."""
    from mockkube.kubelet.nodeproxy import pods_on
    from mockkube.server.server import Server

    s = Server(port=0, components=False)
    s.open_store()
    try:
        rt = s.registry.get("", "v1", "pods")
        for ns in ("a", "b"):
            s.resources.create(s.registry.get("", "v1", "namespaces"), "", {"metadata": {"name": ns}})
        for ns, name, node in (("b", "p1", "n-0"), ("a", "p2", "n-0"), ("a", "p3", "n-1"), ("a", "p4", "")):
            spec = {"containers": [{"name": "c", "image": "busybox"}], **({"nodeName": node} if node else {})}
            s.resources.create(rt, ns, {"metadata": {"name": name, "namespace": ns}, "spec": spec})
        read = []
        cache = s.store.cache(rt)
        entries = cache.entries
        spy = type("Spy", (dict,), {"get": lambda d, k: read.append(k) or dict.get(d, k)})(entries)
        monkeypatch.setattr(cache, "entries", spy)
        got = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods_on(s, "n-0")]
        assert got == [("a", "p2"), ("b", "p1")]
        assert sorted(read) == [("a", "p2"), ("b", "p1")]  # the other node's pod and the unbound one are not read
        assert pods_on(s, "n-9") == []
    finally:
        s.store.close()
