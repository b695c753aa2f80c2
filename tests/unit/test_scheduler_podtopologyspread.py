"""PodTopologySpread's PreFilter/Filter and Score against upstream's tables
(pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go TestSingleConstraint,
TestMultipleConstraints; scoring_test.go TestPodTopologySpreadScore), case by case under
upstream's names; status codes per node as upstream checks them."""

from __future__ import annotations

import itertools

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins.podtopologyspread import (
    ERR_CONSTRAINTS_NOT_MATCH,
    ERR_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
)

_uid = itertools.count()
OK, UNSCHED, UNRES = fw.SUCCESS, fw.UNSCHEDULABLE, fw.UNSCHEDULABLE_AND_UNRESOLVABLE


def exists(key: str) -> dict:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def spread(max_skew: int, key: str, when: str, selector: dict | None, **extra) -> dict:
    c = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if selector is not None:
        c["labelSelector"] = selector
    return c


def pod(labels: dict, *constraints: dict, ns: str = "", node_affinity: dict | None = None, **spec) -> dict:
    s: dict = {"containers": [{"name": "c"}], **spec}
    if constraints:
        s["topologySpreadConstraints"] = list(constraints)
    if node_affinity:
        s["affinity"] = {"nodeAffinity": node_affinity}
    return {"metadata": {"name": "p", "namespace": ns, "uid": f"u{next(_uid)}", "labels": labels}, "spec": s}


def existing(name: str, node: str, labels: dict | None = None, ns: str = "", terminating: bool = False) -> dict:
    m: dict = {"name": name, "namespace": ns, "uid": f"u{next(_uid)}", "labels": labels or {}}
    if terminating:
        m["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    return {"metadata": m, "spec": {"nodeName": node, "containers": [{"name": "c"}]}}


def node(name: str, taints: list | None = None, **labels: str) -> dict:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"pods": "110"}},
    }


def setup(pods: list[dict], nodes: list[dict]) -> tuple[PodTopologySpread, Cache]:
    cache = Cache()
    for n in nodes:
        cache.set_node(n)
    for p in pods:
        cache.set_pod(p)
    return PodTopologySpread(cache), cache


FOO = {"foo": ""}
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"


def four_nodes() -> list[dict]:
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


def spread_2_1_0_3() -> list[dict]:
    return [
        existing("p-a1", "node-a", FOO),
        existing("p-a2", "node-a", FOO),
        existing("p-b1", "node-b", FOO),
        existing("p-y1", "node-y", FOO),
        existing("p-y2", "node-y", FOO),
        existing("p-y3", "node-y", FOO),
    ]


# name, pod, nodes, existing pods, want code per node
SINGLE = [
    (
        "no existing pods",
        pod(FOO, spread(1, "zone", DNS, exists("foo"))),
        four_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        pod(FOO, spread(1, "zone", DNS, exists("bar"))),
        four_nodes(),
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "existing pods in a different namespace do not count",
        pod(FOO, spread(1, "zone", DNS, exists("foo"))),
        four_nodes(),
        [
            existing("p-a1", "node-a", FOO, ns="ns1"),
            existing("p-b1", "node-a", FOO, ns="ns2"),
            existing("p-x1", "node-x", FOO),
            existing("p-y1", "node-y", FOO),
        ],
        {"node-a": OK, "node-b": OK, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        pod(FOO, spread(1, "zone", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod(FOO, spread(1, "zone", DNS, exists("foo"))),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zon="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [
            existing("p-a1", "node-a", FOO),
            existing("p-b1", "node-b", FOO),
            existing("p-x1", "node-x", FOO),
            existing("p-y1", "node-y", FOO),
        ],
        {"node-a": OK, "node-b": UNRES, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        pod(FOO, spread(1, "rack", DNS, exists("foo"))),
        [node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")],
        [],
        {"node-a": UNRES, "node-x": UNRES},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        pod(FOO, spread(1, "node", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod(FOO, spread(2, "node", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod({"bar": ""}, spread(1, "node", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod(
            FOO,
            spread(1, "node", DNS, exists("foo")),
            node_affinity={
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "node", "operator": "In", "values": ["node-a", "node-y"]}]}
                    ]
                }
            },
        ),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "terminating Pods should be excluded",
        pod(FOO, spread(1, "node", DNS, exists("foo"))),
        [node("node-a", node="node-a"), node("node-b", node="node-b")],
        [existing("p-a", "node-a", FOO, terminating=True), existing("p-b", "node-b", FOO)],
        {"node-a": OK, "node-b": UNSCHED},
    ),
    # mockkube's own cases (not upstream's fixtures): minDomains, node inclusion policies
    (
        "mockkube: pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third "
        "node fits",
        pod(FOO, spread(2, "node", DNS, exists("foo"), minDomains=4)),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        [
            existing("p-a1", "node-a", FOO),
            existing("p-a2", "node-a", FOO),
            existing("p-b1", "node-b", FOO),
            existing("p-b2", "node-b", FOO),
            existing("p-c1", "node-c", FOO),
        ],
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK},
    ),
    (
        "mockkube: pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
        "nodes fit",
        pod(FOO, spread(2, "node", DNS, exists("foo"), minDomains=2)),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        [
            existing("p-a1", "node-a", FOO),
            existing("p-a2", "node-a", FOO),
            existing("p-b1", "node-b", FOO),
            existing("p-b2", "node-b", FOO),
            existing("p-c1", "node-c", FOO),
        ],
        {"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    (
        "mockkube: NodeTaintsPolicy honored with tolerated taints",
        pod(
            FOO,
            spread(1, "node", DNS, exists("foo"), nodeTaintsPolicy="Honor"),
            tolerations=[{"key": "foo", "operator": "Exists"}],
        ),
        [
            node("node-a", [{"key": "foo", "value": "", "effect": "NoSchedule"}], node="node-a"),
            node("node-b", node="node-b"),
        ],
        [existing("p-a", "node-a", FOO), existing("p-b1", "node-b", FOO), existing("p-b2", "node-b", FOO)],
        {"node-a": OK, "node-b": UNSCHED},
    ),
    (
        "mockkube: NodeTaintsPolicy honored with untolerated taints",
        pod(FOO, spread(1, "node", DNS, exists("foo"), nodeTaintsPolicy="Honor")),
        [
            node("node-a", [{"key": "foo", "value": "", "effect": "NoSchedule"}], node="node-a"),
            node("node-b", node="node-b"),
        ],
        [existing("p-a", "node-a", FOO), existing("p-b1", "node-b", FOO), existing("p-b2", "node-b", FOO)],
        {"node-a": OK, "node-b": OK},
    ),
    (
        "mockkube: NodeTaintsPolicy ignored",
        pod(FOO, spread(1, "node", DNS, exists("foo"))),
        [
            node("node-a", [{"key": "foo", "value": "", "effect": "NoSchedule"}], node="node-a"),
            node("node-b", node="node-b"),
        ],
        [existing("p-a", "node-a", FOO), existing("p-b1", "node-b", FOO), existing("p-b2", "node-b", FOO)],
        {"node-a": OK, "node-b": UNSCHED},
    ),
    (
        "mockkube: NodeAffinityPolicy ignored with nodeAffinity, pods spread as 2/1/0/3, only node-x fits",
        pod(
            FOO,
            spread(1, "node", DNS, exists("foo"), nodeAffinityPolicy="Ignore"),
            node_affinity={
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "node", "operator": "In", "values": ["node-a", "node-y"]}]}
                    ]
                }
            },
        ),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED},
    ),
]


def _codes(pl, cache, p, nodes):
    state = fw.CycleState()
    pre = pl.pre_filter(state, p)
    assert pre is None or pre.ok, pre
    out = {}
    for n in nodes:
        st = pl.filter(state, p, cache.nodes[n["metadata"]["name"]])
        out[n["metadata"]["name"]] = st.code if st is not None else OK
        if st is not None:
            assert st.reasons == [ERR_NODE_LABEL_NOT_MATCH if st.code == UNRES else ERR_CONSTRAINTS_NOT_MATCH]
    return out


@pytest.mark.parametrize("name,p,nodes,pods,want", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_constraint(name, p, nodes, pods, want):
    pl, cache = setup(pods, nodes)
    assert _codes(pl, cache, p, nodes) == want


MULTIPLE = [
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod(FOO, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        pod(FOO, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("foo"))),
        four_nodes(),
        spread_2_1_0_3() + [existing("p-y4", "node-y", FOO)],
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        pod({"foo": "", "bar": ""}, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("bar"))),
        four_nodes(),
        [existing("p-a1", "node-a", FOO), existing("p-y1", "node-y", {"bar": ""})],
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        pod({"foo": "", "bar": ""}, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("bar"))),
        four_nodes(),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-x1", "node-x", {"bar": ""}),
            existing("p-y1", "node-y", {"bar": ""}),
        ],
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        pod({"foo": "", "bar": ""}, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("bar"))),
        four_nodes(),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-a2", "node-a", {"foo": "", "bar": ""}),
            existing("p-y1", "node-y", FOO),
            existing("p-y2", "node-y", {"foo": "", "bar": ""}),
            existing("p-y3", "node-y", FOO),
        ],
        {"node-a": UNSCHED, "node-b": OK, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        pod({"bar": ""}, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("bar"))),
        four_nodes(),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-x1", "node-x", {"bar": ""}),
            existing("p-y1", "node-y", {"bar": ""}),
        ],
        {"node-a": OK, "node-b": OK, "node-x": UNSCHED, "node-y": UNSCHED},
    ),
    (
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        pod(FOO, spread(1, "zone", DNS, exists("foo")), spread(1, "node", DNS, exists("foo"))),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [existing("p-a1", "node-a", FOO), existing("p-y3", "node-y", FOO)],
        {"node-a": UNSCHED, "node-b": OK, "node-x": UNRES, "node-y": UNSCHED},
    ),
]


@pytest.mark.parametrize("name,p,nodes,pods,want", MULTIPLE, ids=[c[0] for c in MULTIPLE])
def test_multiple_constraints(name, p, nodes, pods, want):
    pl, cache = setup(pods, nodes)
    assert _codes(pl, cache, p, nodes) == want


def test_prefilter_skips_pods_without_hard_constraints():
    pl, cache = setup(spread_2_1_0_3(), four_nodes())
    for n in cache.nodes.values():
        n.pods = None  # any walk would fail
    state = fw.CycleState()
    assert pl.pre_filter(state, pod(FOO)).code == fw.SKIP
    assert pl.pre_filter(state, pod(FOO, spread(1, "zone", SA, exists("foo")))).code == fw.SKIP
    assert pl.skip_score(state, pod(FOO))  # no constraints and nothing selects it


# -- Score: scoring_test.go TestPodTopologySpreadScore ------------------------------------------

H = "kubernetes.io/hostname"


def hn(name: str, **labels: str) -> dict:
    return node(name, **{H: name}, **labels)


def foo_pods(spec: str) -> list[dict]:
    """ "a2,b1" -> p-a1, p-a2 on node-a and p-b1 on node-b, all labelled foo."""
    out = []
    for part in spec.split(","):
        letter, n = part[0], int(part[1:])
        out += [existing(f"p-{letter}{i + 1}", f"node-{letter}", FOO) for i in range(n)]
    return out


def _hostname(max_skew: int = 1, selector: dict | None = None) -> dict:
    return spread(max_skew, H, SA, exists("foo") if selector is None else selector)


# name, pod, existing pods, candidate nodes, failed nodes, services, want scores
SCORE = [
    (
        "one constraint on node, no existing pods",
        pod(FOO, _hostname()),
        [],
        [hn("node-a"), hn("node-b")],
        [],
        [],
        [100, 100],
    ),
    (
        "one constraint on node, only one node is candidate",
        pod(FOO, _hostname()),
        foo_pods("a2,b1"),
        [hn("node-a")],
        [hn("node-b")],
        [],
        [100],
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        pod(FOO, _hostname()),
        foo_pods("a1,b1"),
        [hn("node-a"), hn("node-b")],
        [],
        [],
        [100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        pod(FOO, _hostname()),
        foo_pods("a2,b1,d3"),
        [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
        [],
        [],
        [20, 60, 100, 0],
    ),
    (
        "one constraint on node, null selector",
        pod(FOO, spread(1, H, SA, None)),
        foo_pods("a2,b1,d3"),
        [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
        [],
        [],
        [100, 100, 100, 100],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod(FOO, _hostname(2)),
        foo_pods("a2,b1,d3"),
        [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
        [],
        [],
        [33, 66, 100, 16],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod(FOO, _hostname(3)),
        foo_pods("a4,b3,c2,d1"),
        [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
        [],
        [],
        [44, 66, 77, 100],
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        pod(FOO),
        foo_pods("a4,b3,c2,d1"),
        [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
        [],
        [{"foo": ""}],
        [44, 66, 77, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        pod(FOO, _hostname()),
        foo_pods("a4,b2,x1,y3"),
        [hn("node-a"), hn("node-b"), hn("node-x")],
        [hn("node-y")],
        [],
        [33, 83, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        pod(FOO, _hostname()),
        foo_pods("a4,b2,x1,y3"),
        [hn("node-a"), node("node-b", n="node-b"), hn("node-x")],
        [hn("node-y")],
        [],
        [16, 0, 100],
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        pod(FOO, spread(1, "zone", SA, exists("foo"))),
        foo_pods("a4,b2,x1,y3"),
        [hn("node-a", zone="zone1"), hn("node-b", zone="zone1"), hn("node-x", zone="zone2")],
        [hn("node-y", zone="zone2")],
        [],
        [75, 75, 100],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        pod({"foo": "", "bar": ""}, spread(1, "zone", SA, exists("foo")), _hostname(1, exists("bar"))),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-b1", "node-b", {"foo": "", "bar": ""}),
            existing("p-y1", "node-y", FOO),
            existing("p-y2", "node-y", {"bar": ""}),
        ],
        [
            hn(n, zone=z)
            for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))
        ],
        [],
        [],
        [60, 20, 100, 60],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod({"foo": "", "bar": ""}, spread(1, "zone", SA, exists("foo")), _hostname(1, exists("bar"))),
        [
            existing("p-b1", "node-b", {"bar": ""}),
            existing("p-x1", "node-x", FOO),
            existing("p-y1", "node-y", {"foo": "", "bar": ""}),
        ],
        [
            hn(n, zone=z)
            for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))
        ],
        [],
        [],
        [100, 60, 40, 0],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        pod({"foo": "", "bar": ""}, spread(1, "zone", SA, exists("foo")), _hostname(1, exists("bar"))),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-b1", "node-b", {"foo": "", "bar": ""}),
            existing("p-y1", "node-y", FOO),
            existing("p-y2", "node-y", {"bar": ""}),
        ],
        [hn(n, zone=z) for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"))],
        [hn("node-y", zone="zone2")],
        [],
        [50, 25, 100],
    ),
    (
        "existing pods in a different namespace do not count",
        pod(FOO, _hostname()),
        [
            existing("p-a1", "node-a", FOO, ns="ns1"),
            existing("p-a2", "node-a", FOO),
            existing("p-b1", "node-b", FOO),
            existing("p-b2", "node-b", FOO),
        ],
        [hn("node-a"), hn("node-b")],
        [],
        [],
        [100, 33],
    ),
    (
        "terminating Pods should be excluded",
        pod(FOO, _hostname()),
        [existing("p-a", "node-a", FOO, terminating=True), existing("p-b", "node-b", FOO)],
        [hn("node-a"), hn("node-b")],
        [],
        [],
        [100, 0],
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        pod(FOO, spread(2, "node", SA, exists("foo"), minDomains=10)),
        foo_pods("a2,b2,c1"),
        [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")],
        [],
        [],
        [75, 75, 100],
    ),
    (
        "NodeAffinityPolicy honoed with labelSelectors",
        pod(FOO, spread(1, "node", SA, exists("foo")), nodeSelector={"foo": ""}),
        foo_pods("a2,b1,c1"),
        [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""), node("node-c", node="node-c")],
        [],
        [],
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        pod(FOO, spread(1, "node", SA, exists("foo"), nodeAffinityPolicy="Ignore"), nodeSelector={"foo": ""}),
        foo_pods("a2,b1,c1"),
        [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""), node("node-c", node="node-c")],
        [],
        [],
        [66, 100, 100],
    ),
    (
        "NodeAffinityPolicy honoed with nodeAffinity",
        pod(
            FOO,
            spread(1, "node", SA, exists("foo")),
            node_affinity={
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]
                }
            },
        ),
        foo_pods("a2,b1,c1"),
        [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""), node("node-c", node="node-c")],
        [],
        [],
        [0, 33, 100],
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod(
            FOO,
            spread(1, "node", SA, exists("foo"), nodeAffinityPolicy="Ignore"),
            node_affinity={
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]
                }
            },
        ),
        foo_pods("a2,b1,c1"),
        [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""), node("node-c", node="node-c")],
        [],
        [],
        [66, 100, 100],
    ),
    (
        "NodeTaintsPolicy honored",
        pod(FOO, spread(1, "node", SA, exists("foo"), nodeTaintsPolicy="Honor")),
        foo_pods("a2,b1,c1"),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], node="node-c"),
        ],
        [],
        [],
        [0, 33, 100],
    ),
    (
        "NodeTaintsPolicy ignored",
        pod(FOO, spread(1, "node", SA, exists("foo"))),
        foo_pods("a2,b1,c1"),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], node="node-c"),
        ],
        [],
        [],
        [66, 100, 100],
    ),
    # mockkube's scheduler never merges matchLabelKeys (the API server does at creation), so
    # a pod that did not come through the API is scored as with upstream's gate off
    (
        "matchLabelKeys ignored when feature gate disabled",
        pod(
            {"foo": "", "bar": "", "baz": ""},
            spread(1, "zone", SA, exists("foo"), matchLabelKeys=["baz"]),
            spread(1, H, SA, exists("bar"), matchLabelKeys=["baz"]),
        ),
        [
            existing("p-a1", "node-a", FOO),
            existing("p-b1", "node-b", {"foo": "", "bar": ""}),
            existing("p-y1", "node-c", FOO),
            existing("p-y2", "node-c", {"bar": ""}),
        ],
        [
            hn(n, zone=z)
            for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-c", "zone2"), ("node-d", "zone2"))
        ],
        [],
        [],
        [60, 20, 60, 100],
    ),
]


@pytest.mark.parametrize("name,p,pods,nodes,failed,services,want", SCORE, ids=[c[0] for c in SCORE])
def test_pod_topology_spread_score(name, p, pods, nodes, failed, services, want):
    from mockkube.machinery.selectors import selector_from_set

    def default_selector(q):
        merged: dict = {}
        for sel in services:
            merged.update(sel)
        return selector_from_set(merged) if merged else None

    cache = Cache()
    for n in nodes + failed:
        cache.set_node(n)
    for q in pods:
        cache.set_pod(q)
    pl = PodTopologySpread(cache, default_selector)
    state = fw.CycleState()
    assert not pl.skip_score(state, p)
    infos = [cache.nodes[n["metadata"]["name"]] for n in nodes]
    scores = pl.score_nodes(state, p, infos)
    pl.normalize(state, p, scores)
    assert list(scores.values()) == want
