"""NodePorts against upstream's node_ports_test.go TestNodePorts, case by case."""

from __future__ import annotations

import itertools

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins.nodeports import ERR_REASON, NodePorts

_uid = itertools.count()


def new_pod(host: str, *infos: str) -> dict:
    ports = []
    for info in infos:
        proto, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": proto, "containerPort": int(port)})
    c: dict = {"name": "c"}
    if ports:
        c["ports"] = ports
    spec: dict = {"containers": [c]}
    if host:
        spec["nodeName"] = host
    return {"metadata": {"name": "p", "namespace": "", "uid": f"u{next(_uid)}"}, "spec": spec}


U = (fw.UNSCHEDULABLE, ERR_REASON)
CASES = [
    ("skip filter", {"metadata": {"name": "p"}, "spec": {}}, [], "skip"),
    ("other port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/9090")], None),
    ("same udp port", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "UDP/127.0.0.1/8080")], U),
    ("same tcp port", new_pod("m1", "TCP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.1/8080")], U),
    ("different host ip", new_pod("m1", "TCP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.2/8080")], None),
    ("different protocol", new_pod("m1", "UDP/127.0.0.1/8080"), [new_pod("m1", "TCP/127.0.0.1/8080")], None),
    (
        "second udp port conflict",
        new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        [new_pod("m1", "UDP/127.0.0.1/8080")],
        U,
    ),
    (
        "first tcp port conflict",
        new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        [new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")],
        U,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/0.0.0.0/8001"),
        [new_pod("m1", "TCP/127.0.0.1/8001")],
        U,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        [new_pod("m1", "TCP/127.0.0.1/8001")],
        U,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        new_pod("m1", "TCP/127.0.0.1/8001"),
        [new_pod("m1", "TCP/0.0.0.0/8001")],
        U,
    ),
    ("second different protocol", new_pod("m1", "UDP/127.0.0.1/8001"), [new_pod("m1", "TCP/0.0.0.0/8001")], None),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        new_pod("m1", "UDP/127.0.0.1/8001"),
        [new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")],
        U,
    ),
]


@pytest.mark.parametrize("name,p,on_node,want", CASES, ids=[c[0] for c in CASES])
def test_node_ports(name, p, on_node, want):
    cache = Cache()
    cache.set_node({"metadata": {"name": "m1"}, "status": {"allocatable": {"pods": "110"}}})
    for q in on_node:
        cache.set_pod(q)
    pl = NodePorts()
    state = fw.CycleState()
    pre = pl.pre_filter(state, p)
    if want == "skip":
        assert pre is not None and pre.code == fw.SKIP
        return
    assert pre is None
    st = pl.filter(state, p, cache.nodes["m1"])
    if want is None:
        assert st is None
    else:
        assert (st.code, st.reasons) == (want[0], [want[1]])
