"""InterPodAffinity's PreFilter/Filter against upstream v1.36's tables
(pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go: TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes), case by case under upstream's names."""

from __future__ import annotations

import itertools

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins.interpodaffinity import (
    ERR_AFFINITY,
    ERR_ANTI_AFFINITY,
    ERR_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)

_uid = itertools.count()
REQ = "requiredDuringSchedulingIgnoredDuringExecution"


def term(key: str, topo: str, op: str = "In", values: list | None = None, **extra) -> dict:
    """st.PodAffinityIn/NotIn/Exists: one matchExpression on ``key``."""
    expr: dict = {"key": key, "operator": op}
    if values is not None:
        expr["values"] = values
    return {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topo, **extra}


def pod(ns: str = "", labels: dict | None = None, node: str = "", aff=None, anti=None, name: str = "") -> dict:
    """st.MakePod(): ``aff``/``anti`` are lists of required terms (None: no such affinity)."""
    spec: dict = {"containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    affinity: dict = {}
    if aff is not None:
        affinity["podAffinity"] = {REQ: aff}
    if anti is not None:
        affinity["podAntiAffinity"] = {REQ: anti}
    if affinity:
        spec["affinity"] = affinity
    uid = f"u{next(_uid)}"
    return {"metadata": {"name": name or uid, "namespace": ns, "uid": uid, "labels": labels or {}}, "spec": spec}


def create_pod_with_affinity_terms(ns, node, labels, affinity, anti_affinity) -> dict:
    """createPodWithAffinityTerms: both podAffinity and podAntiAffinity set (maybe to nil terms)."""
    p = pod(ns, labels, node)
    p["spec"]["affinity"] = {"podAffinity": {REQ: affinity}, "podAntiAffinity": {REQ: anti_affinity}}
    return p


def node(name: str, labels: dict) -> dict:
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": {"pods": "110"}}}


NAMESPACES = [
    {"metadata": {"name": "subteam1.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam2.team1", "labels": {"team": "team1"}}},
    {"metadata": {"name": "subteam1.team2", "labels": {"team": "team2"}}},
    {"metadata": {"name": "subteam2.team2", "labels": {"team": "team2"}}},
]


def plugin(pods: list[dict], nodes: list[dict], namespaces=NAMESPACES) -> tuple[InterPodAffinity, Cache]:
    cache = Cache()
    for n in nodes:
        cache.set_node(n)
    for p in pods:
        cache.set_pod(p)
    by_name = {n["metadata"]["name"]: n["metadata"].get("labels") for n in namespaces}
    return InterPodAffinity(cache, lambda: namespaces, by_name.get), cache


def run(pl: InterPodAffinity, cache: Cache, p: dict, nodes: list[dict]):
    state = fw.CycleState()
    pre = pl.pre_filter(state, p)
    if pre is not None and not pre.ok:
        return pre, None
    return pre, [pl.filter(state, p, cache.nodes[n["metadata"]["name"]]) for n in nodes]


def same(got: fw.Status | None, want: tuple | None) -> bool:
    if want is None:
        return got is None or got.ok
    return got is not None and (got.code, got.reasons) == (want[0], [want[1]])


SKIP = (fw.SKIP, None)
AFF = (fw.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY)
ANTI = (fw.UNSCHEDULABLE, ERR_ANTI_AFFINITY)
EXISTING = (fw.UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY)

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
EXISTING_POD = pod("", POD_LABEL, "node1")
BAD_VALUE_MSG = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label '
    "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
TEAM1 = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}
SEC_IN = {"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan", "value2"]}]}

# name, pod, existing pods, want PreFilter (None = success), want Filter
SINGLE_NODE = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod(),
        [],
        SKIP,
        None,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
        pod("", POD_LABEL2, aff=[term("service", "region", "In", ["securityscan", "value2"])]),
        [EXISTING_POD],
        None,
        None,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator "
        "in labelSelector that matches the existing pod",
        pod("", POD_LABEL2, aff=[term("service", "region", "NotIn", ["securityscan3", "value3"])]),
        [EXISTING_POD],
        None,
        None,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        create_pod_with_affinity_terms(
            "", "", POD_LABEL2, [{"labelSelector": SEC_IN, "namespaces": ["DiffNameSpace"]}], None
        ),
        [pod("ns", {"service": "securityscan"}, "node1")],
        None,
        AFF,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod("", POD_LABEL, aff=[term("service", "", "In", ["antivirusscan", "value2"])]),
        [EXISTING_POD],
        None,
        AFF,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        create_pod_with_affinity_terms(
            "",
            "",
            POD_LABEL2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
            None,
        ),
        [EXISTING_POD],
        None,
        None,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
        "because one of the matchExpression item don't match.",
        create_pod_with_affinity_terms(
            "",
            "",
            POD_LABEL2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan2"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
            None,
        ),
        [EXISTING_POD],
        None,
        AFF,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        pod(
            "",
            POD_LABEL2,
            aff=[term("service", "region", "In", ["securityscan", "value2"])],
            anti=[term("service", "node", "In", ["antivirusscan", "value2"])],
        ),
        [EXISTING_POD],
        None,
        None,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        pod(
            "",
            POD_LABEL2,
            aff=[term("service", "region", "In", ["securityscan", "value2"])],
            anti=[term("service", "node", "In", ["antivirusscan", "value2"])],
        ),
        [pod("", POD_LABEL, "node1", anti=[term("service", "node", "In", ["antivirusscan", "value2"])])],
        None,
        None,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod(
            "",
            POD_LABEL2,
            aff=[term("service", "region", "In", ["securityscan", "value2"])],
            anti=[term("service", "zone", "In", ["securityscan", "value2"])],
        ),
        [EXISTING_POD],
        None,
        ANTI,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
        pod(
            "",
            POD_LABEL,
            aff=[term("service", "region", "In", ["securityscan", "value2"])],
            anti=[term("service", "node", "In", ["antivirusscan", "value2"])],
        ),
        [pod("", POD_LABEL, "node1", anti=[term("service", "zone", "In", ["securityscan", "value2"])])],
        None,
        EXISTING,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod("", POD_LABEL, aff=[term("service", "region", "NotIn", ["securityscan", "value2"])]),
        [pod("", {"service": "securityscan"}, "node2")],
        None,
        AFF,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod("", POD_LABEL),
        [pod("", POD_LABEL, "node1", anti=[term("service", "zone", "In", ["securityscan", "value2"])])],
        None,
        EXISTING,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
        pod("", POD_LABEL),
        [pod("", POD_LABEL, "node1", anti=[term("service", "zone", "NotIn", ["securityscan", "value2"])])],
        SKIP,
        None,
    ),
    (
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
        pod("", POD_LABEL, anti=[term("service", "region", "Exists"), term("security", "region", "Exists")]),
        [pod("", POD_LABEL2, "node1", anti=[term("security", "zone", "Exists")])],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod("", POD_LABEL, anti=[term("service", "zone", "Exists"), term("security", "zone", "Exists")]),
        [pod("", POD_LABEL2, "node1", anti=[term("security", "zone", "Exists")])],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod("", POD_LABEL2, anti=[term("security", "zone", "Exists")]),
        [pod("", POD_LABEL, "node1", anti=[term("service", "zone", "Exists"), term("security", "zone", "Exists")])],
        None,
        EXISTING,
    ),
    (
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod("", {"abc": "", "xyz": ""}, anti=[term("abc", "zone", "Exists"), term("def", "zone", "Exists")]),
        [pod("", {"def": "", "xyz": ""}, "node1", anti=[term("abc", "zone", "Exists"), term("def", "zone", "Exists")])],
        None,
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod("", {"def": "", "xyz": ""}, anti=[term("abc", "zone", "Exists"), term("def", "zone", "Exists")]),
        [pod("", {"abc": "", "xyz": ""}, "node1", anti=[term("abc", "zone", "Exists"), term("def", "zone", "Exists")])],
        None,
        ANTI,
    ),
    (
        "PodAffinity fails PreFilter with an invalid affinity label syntax",
        pod(
            "",
            POD_LABEL,
            aff=[
                term("service", "region", "In", ["{{.bad-value.}}"]),
                term("service", "node", "In", ["antivirusscan", "value2"]),
            ],
        ),
        [],
        (fw.UNSCHEDULABLE_AND_UNRESOLVABLE, BAD_VALUE_MSG),
        None,
    ),
    (
        "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        pod(
            "",
            POD_LABEL,
            aff=[term("service", "region", "In", ["foo"]), term("service", "node", "In", ["{{.bad-value.}}"])],
        ),
        [],
        (fw.UNSCHEDULABLE_AND_UNRESOLVABLE, BAD_VALUE_MSG),
        None,
    ),
    (
        "affinity with NamespaceSelector",
        create_pod_with_affinity_terms(
            "", "", POD_LABEL2, [{"labelSelector": SEC_IN, "namespaceSelector": TEAM1, "topologyKey": "region"}], None
        ),
        [pod("subteam1.team1", POD_LABEL, "node1")],
        None,
        None,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        create_pod_with_affinity_terms(
            "", "", POD_LABEL2, [{"labelSelector": SEC_IN, "namespaceSelector": TEAM1, "topologyKey": "region"}], None
        ),
        [pod("subteam1.team2", POD_LABEL, "node1")],
        None,
        AFF,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            None,
            [{"labelSelector": SEC_IN, "namespaceSelector": TEAM1, "topologyKey": "zone"}],
        ),
        [pod("subteam2.team1", POD_LABEL, "node1")],
        None,
        ANTI,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            None,
            [{"labelSelector": SEC_IN, "namespaceSelector": {}, "topologyKey": "zone"}],
        ),
        [pod("subteam2.team1", POD_LABEL, "node1")],
        None,
        ANTI,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            POD_LABEL2,
            None,
            [{"labelSelector": SEC_IN, "namespaceSelector": TEAM1, "topologyKey": "zone"}],
        ),
        [pod("subteam1.team2", POD_LABEL, "node1")],
        None,
        None,
    ),
]


@pytest.mark.parametrize("name,p,pods,want_pre,want_filter", SINGLE_NODE, ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(name, p, pods, want_pre, want_filter):
    pl, cache = plugin(pods, [NODE1])
    pre, filters = run(pl, cache, p, [NODE1])
    if want_pre is None:
        assert pre is None or pre.ok, pre
    elif want_pre[1] is None:
        assert pre is not None and pre.code == want_pre[0] and not pre.reasons
    else:
        assert pre is not None and (pre.code, pre.reasons) == (want_pre[0], [want_pre[1]])
    if filters is not None:
        assert same(filters[0], want_filter), filters[0]


RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _abc(zone_b: str = "z2", zone_c: str | None = None, region_b: str = "r1") -> list[dict]:
    out = [
        node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
        node("nodeB", {"region": region_b, "zone": zone_b, "hostname": "nodeB"}),
    ]
    if zone_c:
        out.append(node("nodeC", {"region": "r1", "zone": zone_c, "hostname": "nodeC"}))
    return out


def exists(key: str, topo: str) -> dict:
    return term(key, topo, "Exists")


# name, pod, existing pods, nodes, want PreFilter, want Filter per node
MULTIPLE_NODES = [
    (
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
        "has an existing pod that matches the affinity rules",
        pod("", aff=[term("foo", "region", "In", ["bar"])]),
        [pod("", {"foo": "bar"}, "node1", name="p1")],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        None,
        [None, None, AFF],
    ),
    (
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
        "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
        "matches the rule anywhere.",
        pod(
            "",
            {"foo": "bar", "service": "securityscan"},
            aff=[term("foo", "zone", "In", ["bar"]), term("service", "zone", "In", ["securityscan"])],
        ),
        [pod("", {"foo": "bar"}, "nodeA", name="p1")],
        [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
        None,
        [None, None],
    ),
    (
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        pod(
            "",
            {"foo": "bar", "service": "securityscan"},
            aff=[term("foo", "zone", "In", ["bar"]), term("service", "zone", "In", ["securityscan"])],
        ),
        [pod("", {"foo": "bar"}, "nodeA", name="p1")],
        [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
        None,
        [AFF, AFF],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod("", anti=[term("foo", "region", "In", ["abc"])]),
        [pod("", {"foo": "abc"}, "nodeA")],
        [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
        None,
        [ANTI, ANTI],
    ),
    (
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        pod("", anti=[term("foo", "region", "In", ["abc"]), term("service", "zone", "In", ["securityscan"])]),
        [pod("", {"foo": "abc", "service": "securityscan"}, "nodeA")],
        [
            node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
        ],
        None,
        [ANTI, ANTI],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        pod("", anti=[term("foo", "region", "In", ["abc"])]),
        [pod("", {"foo": "abc"}, "nodeA")],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None,
        [ANTI, ANTI, None],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
        "existing pod that match the inter pod affinity rule but in different namespace)",
        pod("NS1", {"foo": "123"}, anti=[term("foo", "region", "In", ["bar"])]),
        [pod("NS1", {"foo": "bar"}, "nodeA"), pod("NS2", None, "nodeC", anti=[term("foo", "region", "In", ["123"])])],
        [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
        None,
        [ANTI, ANTI, None],
    ),
    (
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of "
        "the term is firstly checked, and then topologyKey of the term is also checked",
        pod("", {"foo": ""}),
        [pod("", None, "nodeA", anti=[exists("foo", "invalid-node-label")])],
        _abc(zone_b="z1"),
        SKIP,
        [None, None],
    ),
    (
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        pod("", None, "nodeA", anti=[exists("foo", "invalid-node-label")]),
        [pod("", {"foo": ""}, "nodeA")],
        _abc(zone_b="z1"),
        None,
        [None, None],
    ),
    (
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        pod("", {"foo": "", "bar": ""}),
        [pod("", None, "nodeA", anti=[exists("foo", "zone")]), pod("", None, "nodeA", anti=[exists("bar", "region")])],
        _abc(),
        None,
        [EXISTING, EXISTING],
    ),
    (
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
        "anti-affinity rule of existingPod",
        pod("", anti=[exists("foo", "zone"), exists("bar", "region")]),
        [pod("", {"foo": ""}, "nodeA"), pod("", {"bar": ""}, "nodeB")],
        _abc(),
        None,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        pod("", {"foo": "", "bar": ""}),
        [pod("", None, "nodeA", anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")])],
        _abc(),
        None,
        [EXISTING, None],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        pod("", anti=[exists("foo", "invalid-node-label"), exists("bar", "zone")]),
        [pod("", {"foo": "", "bar": ""}, "nodeA", name="podA")],
        _abc(),
        None,
        [ANTI, None],
    ),
    (
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        pod("", {"foo": "", "bar": ""}),
        [pod("", None, "nodeA", anti=[exists("foo", "region"), exists("bar", "zone")])],
        _abc(),
        None,
        [EXISTING, EXISTING],
    ),
    (
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        pod("", anti=[exists("foo", "region"), exists("bar", "zone")]),
        [pod("", {"foo": "", "bar": ""}, "nodeA")],
        _abc(),
        None,
        [ANTI, ANTI],
    ),
    (
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
        pod("", {"foo": "", "bar": ""}),
        [
            pod("", None, "nodeA", anti=[exists("foo", "zone"), exists("labelA", "zone")]),
            pod("", None, "nodeB", anti=[exists("bar", "zone"), exists("labelB", "zone")]),
        ],
        _abc(zone_c="z3"),
        None,
        [EXISTING, EXISTING, None],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match",
        pod("", aff=[exists("foo", "region"), exists("bar", "zone")]),
        [pod("", {"foo": "", "bar": ""}, "nodeA", name="pod1")],
        _abc(zone_b="z1"),
        None,
        [None, None],
    ),
    (
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match, and the match logic should be satisfied on the same pod",
        pod("", aff=[exists("foo", "region"), exists("bar", "zone")]),
        [pod("", {"foo": ""}, "nodeA", name="pod1"), pod("", {"bar": ""}, "nodeB", name="pod2")],
        _abc(),
        None,
        [AFF, AFF],
    ),
]


@pytest.mark.parametrize("name,p,pods,nodes,want_pre,want_filters", MULTIPLE_NODES, ids=[c[0] for c in MULTIPLE_NODES])
def test_required_affinity_multiple_nodes(name, p, pods, nodes, want_pre, want_filters):
    pl, cache = plugin(pods, nodes, [{"metadata": {"name": "NS1"}}])
    pre, filters = run(pl, cache, p, nodes)
    if want_pre is None:
        assert pre is None or pre.ok, pre
        assert [same(f, w) for f, w in zip(filters, want_filters)] == [True] * len(nodes), filters
    else:
        assert pre is not None and pre.code == fw.SKIP


def test_prefilter_skips_without_walking_pods():
    """No affinity anywhere: Skip from the cache's counters alone."""
    pl, cache = plugin([pod("", {"a": "b"}, "node1") for _ in range(3)], [NODE1])
    for n in cache.nodes.values():
        n.pods = None  # any walk would fail
    state = fw.CycleState()
    assert pl.pre_filter(state, pod("", {"a": "b"})).code == fw.SKIP
    assert pl.skip_score(state, pod("", {"a": "b"}))


# -- Score: upstream's scoring_test.go (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight)

PREF = "preferredDuringSchedulingIgnoredDuringExecution"


def _in(key, values):
    return {"key": key, "operator": "In", "values": values}


def pref(weight: int, exprs: list, topo: str, **extra) -> dict:
    return {
        "weight": weight,
        "podAffinityTerm": {"labelSelector": {"matchExpressions": exprs}, "topologyKey": topo, **extra},
    }


TEAM1_SEL = {"matchExpressions": [_in("team", ["team1"])]}
STAY_WITH_S1_IN_REGION = {"podAffinity": {PREF: [pref(5, [_in("security", ["S1"])], "region")]}}
STAY_WITH_S2_IN_REGION = {"podAffinity": {PREF: [pref(6, [_in("security", ["S2"])], "region")]}}
AFFINITY3 = {
    "podAffinity": {
        PREF: [
            pref(8, [{"key": "security", "operator": "NotIn", "values": ["S1"]}, _in("security", ["S2"])], "region"),
            pref(
                2,
                [{"key": "security", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                "region",
            ),
        ]
    }
}
HARD_AFFINITY = {
    "podAffinity": {
        REQ: [
            {"labelSelector": {"matchExpressions": [_in("security", ["S1", "value2"])]}, "topologyKey": "region"},
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "security", "operator": "Exists"},
                        {"key": "wrongkey", "operator": "DoesNotExist"},
                    ]
                },
                "topologyKey": "region",
            },
        ]
    }
}
AWAY_FROM_S1_IN_AZ = {"podAntiAffinity": {PREF: [pref(5, [_in("security", ["S1"])], "az")]}}
AWAY_FROM_S2_IN_AZ = {"podAntiAffinity": {PREF: [pref(5, [_in("security", ["S2"])], "az")]}}
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    "podAffinity": {PREF: [pref(8, [_in("security", ["S1"])], "region")]},
    "podAntiAffinity": {PREF: [pref(5, [_in("security", ["S2"])], "az")]},
}
AFFINITY_NAMESPACE_SELECTOR = {
    "podAffinity": {
        PREF: [
            pref(
                5,
                [_in("security", ["S1"])],
                "region",
                namespaces=["subteam2.team2"],
                namespaceSelector=TEAM1_SEL,
            )
        ]
    }
}
ANTI_AFFINITY_NAMESPACE_SELECTOR = {
    "podAntiAffinity": {
        PREF: [
            pref(
                5,
                [_in("security", ["S1"])],
                "region",
                namespaces=["subteam2.team2"],
                namespaceSelector=TEAM1_SEL,
            )
        ]
    }
}
INVALID_AFFINITY_LABELS = {"podAffinity": {PREF: [pref(8, [_in("security", ["{{.bad-value.}}"])], "region")]}}
INVALID_ANTI_AFFINITY_LABELS = {"podAntiAffinity": {PREF: [pref(5, [_in("security", ["{{.bad-value.}}"])], "az")]}}

S1 = {"security": "S1"}
S2 = {"security": "S2"}
RG_CHINA_N = {"region": "China"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}


def spod(node: str = "", labels: dict | None = None, affinity: dict | None = None, ns: str = "") -> dict:
    p = pod(ns, labels, node)
    if affinity:
        p["spec"]["affinity"] = affinity
    return p


def nodes_(*labels: dict) -> list[dict]:
    return [node(f"node{i + 1}", lb) for i, lb in enumerate(labels)]


M = fw.MAX_NODE_SCORE
XFAIL_PRESCORE_ERROR = pytest.mark.xfail(
    strict=True,
    reason="mockkube's PreScore has no Error status (skip_score returns a bool); such selectors are rejected by "
    "the API's validation before a pod reaches the scheduler",
)

# name, pod, pods, nodes, expected scores (None: Skip), ignorePreferredTermsOfExistingPods
PREFERRED = [
    (
        "all nodes are same priority as Affinity is nil",
        spod("", S1),
        [],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        None,
        False,
    ),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't "
        "match either pods in nodes or in topology key",
        spod("", S1, STAY_WITH_S1_IN_REGION),
        [spod("node1", S1), spod("node2", S2), spod("node3", S1)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [M, 0, 0],
        False,
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an existing pod that match "
        "the affinity rules, have the same score",
        spod("", None, STAY_WITH_S1_IN_REGION),
        [spod("node1", S1)],
        nodes_(RG_CHINA_N, RG_CHINA_AZ1, RG_INDIA),
        [M, M, 0],
        False,
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has "
        "more matches will get high score",
        spod("", S1, STAY_WITH_S2_IN_REGION),
        [
            spod("node1", S2),
            spod("node1", S2),
            spod("node2", S2),
            spod("node3", S2),
            spod("node4", S2),
            spod("node5", S2),
        ],
        nodes_(RG_CHINA_N, RG_INDIA, RG_CHINA_N, RG_CHINA_N, RG_INDIA),
        [M, 0, M, M, 0],
        False,
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
        "failures ",
        spod("", S1, AFFINITY3),
        [spod("node1", S1), spod("node2", S2), spod("node3", S1)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [20, M, 0],
        False,
    ),
    (
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
        spod("", S2),
        [spod("node1", S1, STAY_WITH_S1_IN_REGION), spod("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [0, M, 0],
        False,
    ),
    (
        "Affinity symmetry with namespace selector",
        spod("", S1, ns="subteam1.team1"),
        [spod("node1", S1, AFFINITY_NAMESPACE_SELECTOR), spod("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [M, 0, 0],
        False,
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        spod("", S1, ns="subteam1.team1"),
        [spod("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), spod("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [0, M, M],
        False,
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        spod("", S1),
        [spod("node1", S1, HARD_AFFINITY), spod("node2", S2, HARD_AFFINITY)],
        nodes_(RG_CHINA_N, RG_INDIA, AZ1),
        [M, M, 0],
        False,
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        spod("", S1, AWAY_FROM_S1_IN_AZ),
        [spod("node1", S1), spod("node2", S2)],
        nodes_(AZ1, RG_CHINA_N),
        [0, M],
        False,
    ),
    (
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
        spod("", S1, AWAY_FROM_S1_IN_AZ),
        [spod("node1", S1), spod("node2", S1)],
        nodes_(AZ1, RG_CHINA_N),
        [0, M],
        False,
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more "
        "unmatches will get high score",
        spod("", S1, AWAY_FROM_S1_IN_AZ),
        [spod("node1", S1), spod("node1", S1), spod("node2", S2)],
        nodes_(AZ1, RG_INDIA),
        [0, M],
        False,
    ),
    (
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        spod("", S2),
        [spod("node1", S1, AWAY_FROM_S2_IN_AZ), spod("node2", S2, AWAY_FROM_S1_IN_AZ)],
        nodes_(AZ1, AZ2),
        [0, M],
        False,
    ),
    (
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
        spod("", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [spod("node1", S1), spod("node2", S1)],
        nodes_(RG_CHINA_N, AZ1),
        [M, 0],
        False,
    ),
    (
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
        "pods have the same labels",
        spod("", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            spod("node1", S1),
            spod("node1", S1),
            spod("node2", S1),
            spod("node3", S1),
            spod("node3", S1),
            spod("node4", S1),
            spod("node5", S1),
        ],
        nodes_(RG_CHINA_AZ1, RG_INDIA, RG_CHINA_N, RG_CHINA_N, RG_INDIA),
        [M, 0, M, M, 0],
        False,
    ),
    (
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
        "both pod affinity & anti affinity & symmetry",
        spod("", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        [
            spod("node1", S1),
            spod("node2", S2),
            spod("node3", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            spod("node4", None, AWAY_FROM_S1_IN_AZ),
        ],
        nodes_(RG_CHINA_N, AZ1, RG_INDIA, AZ2),
        [M, 0, M, 0],
        False,
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        spod("", S1),
        [spod("node1", S1), spod("node2", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
        nodes_(RG_CHINA_N, RG_CHINA_N),
        [0, 0],
        False,
    ),
    pytest.param(
        "invalid Affinity fails PreScore",
        spod("", None, INVALID_AFFINITY_LABELS),
        [],
        nodes_(RG_CHINA_N, RG_CHINA_N),
        "error",
        False,
        marks=XFAIL_PRESCORE_ERROR,
    ),
    pytest.param(
        "invalid AntiAffinity fails PreScore",
        spod("", None, INVALID_ANTI_AFFINITY_LABELS),
        [],
        nodes_(RG_CHINA_N, RG_CHINA_N),
        "error",
        False,
        marks=XFAIL_PRESCORE_ERROR,
    ),
    (
        "Affinity with pods matching NamespaceSelector",
        spod("", S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team2"),
            spod("node2", S1, ns="subteam2.team1"),
        ],
        nodes_(RG_CHINA_N, RG_INDIA),
        [M, 0],
        False,
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        spod("", S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam2.team2"),
            spod("node2", S1, ns="subteam2.team1"),
        ],
        nodes_(RG_CHINA_N, RG_INDIA),
        [M, 0],
        False,
    ),
    (
        "Affinity with pods matching NamespaceSelector (anti-affinity)",
        spod("", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team2"),
            spod("node2", S1, ns="subteam2.team1"),
        ],
        nodes_(RG_CHINA_N, RG_INDIA),
        [0, M],
        False,
    ),
    (
        "Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
        spod("", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"),
        [
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam1.team1"),
            spod("node1", S1, ns="subteam2.team2"),
            spod("node2", S1, ns="subteam2.team1"),
        ],
        nodes_(RG_CHINA_N, RG_INDIA),
        [0, M],
        False,
    ),
    (
        "Ignore preferred terms of existing pods",
        spod("", S2),
        [spod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), spod("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes_(RG_CHINA_N, RG_INDIA),
        None,
        True,
    ),
    (
        "Do not ignore preferred terms of existing pods",
        spod("", S2),
        [spod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), spod("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes_(RG_CHINA_N, RG_INDIA),
        [0, M],
        False,
    ),
    ("No nodes to score", spod("", S2), [], [], None, False),
]


def _ids(cases) -> list[str]:
    return [c.values[0] if hasattr(c, "values") else c[0] for c in cases]


def score_all(pl: InterPodAffinity, cache: Cache, p: dict, nodes: list[dict]):
    state = fw.CycleState()
    if pl.skip_score(state, p):
        return None
    infos = [cache.nodes[n["metadata"]["name"]] for n in nodes]
    scores = {n.name: pl.score(state, p, n) for n in infos}
    pl.normalize(state, p, scores)
    return list(scores.values())


@pytest.mark.parametrize("name,p,pods,nodes,want,ignore_existing", PREFERRED, ids=_ids(PREFERRED))
def test_preferred_affinity(name, p, pods, nodes, want, ignore_existing):
    pl, cache = plugin(pods, nodes)
    pl.ignore_existing_preferred = ignore_existing
    got = score_all(pl, cache, p, nodes)
    if want == "error":
        pytest.fail("PreScore gave no Error status")
    assert got == want


HARD_POD_AFFINITY = {
    "podAffinity": {
        REQ: [
            {
                "labelSelector": {"matchExpressions": [_in("service", ["S1"])]},
                "namespaces": ["", "subteam2.team2"],
                "namespaceSelector": TEAM1_SEL,
                "topologyKey": "region",
            }
        ]
    }
}
SERVICE_S1 = {"service": "S1"}
HARD_WEIGHT = [
    ("with default weight", "", 1, [M, M, 0]),
    ("with zero weight", "", 0, None),
    ("with no matching namespace", "subteam1.team2", 1, None),
    ("with matching NamespaceSelector", "subteam1.team1", 1, [M, M, 0]),
    ("with matching Namespaces", "subteam2.team2", 1, [M, M, 0]),
]


@pytest.mark.parametrize("name,ns,weight,want", HARD_WEIGHT, ids=[c[0] for c in HARD_WEIGHT])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(name, ns, weight, want):
    nodes = nodes_(RG_CHINA_N, RG_INDIA, AZ1)
    pl, cache = plugin([spod("node1", None, HARD_POD_AFFINITY), spod("node2", None, HARD_POD_AFFINITY)], nodes)
    pl.hard_weight = weight
    assert score_all(pl, cache, spod("", SERVICE_S1, ns=ns), nodes) == want


# -- PreFilterExtensions and the incoming pod's counts (TestPreFilterStateAddRemovePod,
#    TestGetTPMapMatchingIncomingAffinityAntiAffinity)

SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = {REQ: [{"labelSelector": {"matchExpressions": [_in("foo", ["bar"])]}, "topologyKey": "region"}]}
_COMPLEX_TERMS = [
    {"labelSelector": {"matchExpressions": [_in("foo", ["bar", "buzz"])]}, "topologyKey": "region"},
    {
        "labelSelector": {
            "matchExpressions": [{"key": "service", "operator": "NotIn", "values": ["bar", "security", "test"]}]
        },
        "topologyKey": "zone",
    },
]
ANTI_COMPLEX = {REQ: _COMPLEX_TERMS}
AFFINITY_COMPLEX = {REQ: _COMPLEX_TERMS}
LABEL1, LABEL2, LABEL3 = (
    {"region": "r1", "zone": "z11"},
    {"region": "r1", "zone": "z12"},
    {"region": "r2", "zone": "z21"},
)


def apod(name: str, labels: dict | None, node: str = "", **affinity) -> dict:
    p = pod("", labels, node, name=name)
    if affinity:
        p["spec"]["affinity"] = affinity
    return p


ADD_REMOVE = [
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        apod("pending", SELECTOR1, podAntiAffinity=ANTI_FOO_BAR),
        [apod("p1", SELECTOR1, "nodeA"), apod("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR)],
        apod("addedPod", SELECTOR1, "nodeB", podAntiAffinity=ANTI_FOO_BAR),
        {("region", "r1"): 2},
        {},
    ),
    (
        "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
        apod("pending", SELECTOR1, podAntiAffinity=ANTI_COMPLEX),
        [apod("p1", SELECTOR1, "nodeA"), apod("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR)],
        apod("addedPod", SELECTOR1, "nodeA", podAntiAffinity=ANTI_COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
    ),
    (
        "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
        apod("pending", SELECTOR1, podAffinity=AFFINITY_COMPLEX),
        [
            apod("p1", SELECTOR1, "nodeA"),
            apod("p2", None, "nodeC", podAntiAffinity=ANTI_FOO_BAR, podAffinity=AFFINITY_COMPLEX),
        ],
        apod("addedPod", SELECTOR1, "nodeA", podAntiAffinity=ANTI_COMPLEX),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
    ),
]


@pytest.mark.parametrize(
    "name,pending,existing_pods,added,want_anti,want_aff", ADD_REMOVE, ids=[c[0] for c in ADD_REMOVE]
)
def test_prefilter_state_add_remove_pod(name, pending, existing_pods, added, want_anti, want_aff):
    nodes = [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]

    def state_for(pods):
        pl, cache = plugin(pods, nodes)
        state = fw.CycleState()
        assert pl.pre_filter(state, pending) is None
        return pl, cache, state

    _, _, all_state = state_for(existing_pods + [added])
    pl, cache, state = state_for(existing_pods)
    s = state[pl.name]
    original = (dict(s.existing_anti), dict(s.affinity), dict(s.anti_affinity))
    pl.add_pod(state, pending, added, cache.nodes[added["spec"]["nodeName"]])
    assert s.anti_affinity == want_anti and s.affinity == want_aff
    a = all_state[pl.name]
    assert (s.existing_anti, s.affinity, s.anti_affinity) == (a.existing_anti, a.affinity, a.anti_affinity)
    pl.remove_pod(state, pending, added, cache.nodes[added["spec"]["nodeName"]])
    assert (s.existing_anti, s.affinity, s.anti_affinity) == original


def _named(name: str, *labels: str) -> dict:
    return pod("", {k: "" for k in labels}, "nodeA", name=name)


INCOMING = [
    ("nil test", [], pod("", None, name="aaa-normal"), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [_named("normal", "aaa")], pod("", None), {}, {}),
    (
        "no pod has label that violates incoming pod's affinity and anti-affinity",
        [_named("normal", "bbb")],
        pod("", None, aff=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
        {},
        {},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        [_named("normal", "aaa")],
        pod("", None, aff=[exists("aaa", "hostname")], anti=[exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        [_named("normal", "aaa", "bbb")],
        pod("", None, aff=[exists("aaa", "hostname"), exists("bbb", "hostname")], anti=[exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
    ),
    (
        "existing pod not match incoming pod's affinity but matches anti-affinity",
        [_named("normal", "aaa")],
        pod(
            "",
            None,
            aff=[exists("aaa", "hostname"), exists("bbb", "hostname")],
            anti=[exists("aaa", "hostname"), exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        [_named("normal", "aaa", "bbb")],
        pod(
            "",
            None,
            aff=[exists("aaa", "hostname"), exists("ccc", "hostname")],
            anti=[exists("aaa", "hostname"), exists("ccc", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
    (
        "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        [_named("normal", "bbb")],
        pod(
            "",
            None,
            aff=[exists("aaa", "hostname"), exists("bbb", "hostname")],
            anti=[exists("aaa", "hostname"), exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
    ),
]


@pytest.mark.parametrize("name,pods,p,want_aff,want_anti", INCOMING, ids=[c[0] for c in INCOMING])
def test_get_tp_map_matching_incoming_affinity_anti_affinity(name, pods, p, want_aff, want_anti):
    pl, cache = plugin(pods, [node("nodeA", {"hostname": "nodeA"})])
    state = fw.CycleState()
    pre = pl.pre_filter(state, p)
    if pre is not None:  # no terms: Skip, nothing counted
        assert pre.code == fw.SKIP and want_aff == want_anti == {}
        return
    s = state[pl.name]
    assert (s.affinity, s.anti_affinity) == (want_aff, want_anti)
