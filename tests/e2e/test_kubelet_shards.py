"""`mockkube serve --node-shards 2`: the simulated kubelets and their nodes' DRA drivers run in
two `mockkube kubelets --shard I/2` processes, clients of the API over HTTP, each with the
nodes whose name hashes to its shard. Pods claiming devices run on the nodes of both;
logs, exec and the node proxy answer for them (simulated containers, answered by the API
server from the pod); the shards survive a reset and stop with the server."""

from __future__ import annotations

import signal

import pytest
import yaml

import mockkube
from mockkube.kubelet.cluster import shard_of
from mockkube.testing.waiting import until
from tests.procs import child_processes

pytestmark = pytest.mark.e2e

NODES = [f"s-{i}" for i in range(6)]
PROFILE = """
nodes:
- name: s
  count: 6
  drivers:
    gpu.example.com: {count: 2}
"""
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu"},
    "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
}


def _pod(name: str, node: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            "containers": [
                {
                    "name": "app",
                    "image": "busybox",
                    "command": ["sh", "-c", f"echo hello from {name}; sleep 3600"],
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
    }


def shard_pids(cluster: mockkube.Cluster) -> dict[str, int]:
    """The server's `mockkube kubelets` children: {"I/M": pid}."""
    return {
        argv[argv.index("--shard") + 1]: k
        for k, argv in child_processes(cluster._proc.pid).items()
        if "kubelets" in argv
    }


@pytest.fixture(scope="module")
def cluster():
    with mockkube.Cluster(PROFILE, subprocess=True, node_shards=2) as c:
        yield c


def test_the_kubelets_run_in_shard_processes(cluster):
    assert set(shard_pids(cluster)) == {"0/2", "1/2"}
    assert {shard_of(n, 2) for n in NODES} == {0, 1}  # both shards have nodes here
    nodes = cluster.http.get(cluster.url + "/api/v1/nodes", timeout=30).json()["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == NODES
    for n in nodes:
        ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True"
        managers = {m["manager"] for m in n["metadata"]["managedFields"]}
        assert "kubelet" in managers
    ns = cluster.create_namespace("shards")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    docs = [_pod(f"p-{node}", node) for node in NODES]
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all(docs))
    cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod", "--all", "--timeout=60s")
    for node in NODES:
        pod = cluster.get("Pod", f"p-{node}", namespace=ns)
        assert pod["spec"]["nodeName"] == node and pod["status"]["phase"] == "Running"
        claim = cluster.get("ResourceClaim", pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"], ns)
        assert claim["status"]["reservedFor"][0]["name"] == pod["metadata"]["name"]
        # Running: the shard's kubelet prepared it through the node's driver first
        assert claim["status"]["allocation"]["devices"]["results"][0]["pool"] == node
    # logs, exec and the node proxy answer for the shards' simulated containers
    assert cluster.kubectl("logs", "-n", ns, f"p-{NODES[0]}").stdout.strip() == f"hello from p-{NODES[0]}"
    assert cluster.kubectl("exec", "-n", ns, f"p-{NODES[-1]}", "--", "echo", "hi").stdout.strip() == "hi"
    proxied = cluster.http.get(f"{cluster.url}/api/v1/nodes/{NODES[1]}/proxy/pods", timeout=30).json()
    assert [p["metadata"]["name"] for p in proxied["items"]] == [f"p-{NODES[1]}"]
    # mockkube's own node endpoints do not reach the shards: a clear Status
    r = cluster.http.post(f"{cluster.url}/mockkube/v1/nodes/{NODES[0]}/kubelet", json={"running": False}, timeout=30)
    assert r.status_code == 503 and "--node-shards" in r.json()["message"]


def test_the_shards_survive_a_reset_and_stop_with_the_server(cluster):
    pids = shard_pids(cluster)
    cluster.reset()
    assert shard_pids(cluster) == pids  # the same processes, their kubelets started again
    ns = cluster.create_namespace("shards")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(_pod("again", NODES[2])))
    cluster.wait_for_pod_phase("again", "Running", namespace=ns)
    cluster._proc.send_signal(signal.SIGTERM)
    cluster._proc.wait(10)
    for pid in pids.values():
        until(lambda pid=pid: _gone(pid), timeout=10, what=f"shard process {pid} gone")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True
