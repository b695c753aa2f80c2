"""Plugins' score_nodes (one call over all feasible nodes) gives what score gives per node."""

from __future__ import annotations

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins.noderesources import NodeResourcesFit
from mockkube.scheduler.plugins.nodes import TaintToleration


def _cache() -> Cache:
    c = Cache()
    for i, (cpu, taints) in enumerate(
        [
            ("4", []),
            ("2", [{"key": "k", "effect": "PreferNoSchedule"}]),
            ("8", [{"key": "t", "value": "v", "effect": "NoSchedule"}]),
            ("0", []),
        ]
    ):
        c.set_node(
            {
                "metadata": {"name": f"n{i}"},
                "spec": {"taints": taints},
                "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
            }
        )
    c.set_pod(
        {
            "metadata": {"uid": "u1"},
            "spec": {
                "nodeName": "n0",
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}],
            },
        }
    )
    c.set_pod(
        {
            "metadata": {"uid": "u2"},
            "spec": {"nodeName": "n1", "containers": [{"name": "a", "resources": {"requests": {"cpu": "1900m"}}}]},
        }
    )
    return c


def _pod(requests: dict | None, tolerations: list | None = None) -> dict:
    c = {"name": "a"}
    if requests:
        c["resources"] = {"requests": requests}
    return {"metadata": {"name": "p", "uid": "p"}, "spec": {"containers": [c], "tolerations": tolerations or []}}


def test_score_nodes_is_score_per_node():
    nodes = _cache().node_list
    for pod in (
        _pod(None),
        _pod({"cpu": "500m"}),
        _pod({"cpu": "3", "memory": "7Gi"}),
        _pod(None, [{"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}]),
    ):
        for plugin in (NodeResourcesFit(), TaintToleration()):
            state = fw.CycleState()
            plugin.pre_filter(state, pod)
            want = {n.name: plugin.score(state, pod, n) for n in nodes}
            got = plugin.score_nodes(state, pod, nodes)
            assert got == want and list(got) == [n.name for n in nodes]
    untainted = [n for n in nodes if not n.taints]
    state = fw.CycleState()
    TaintToleration().pre_filter(state, _pod(None))
    assert TaintToleration().score_nodes(state, _pod(None), untainted) == {n.name: 0 for n in untainted}
