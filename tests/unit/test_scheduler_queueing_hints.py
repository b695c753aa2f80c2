"""Queueing hints: the scheduling queue's requeue decisions and each plugin's hint
functions, on upstream v1.36's test tables (scheduling_queue_test.go and the plugins'
``Test_isSchedulableAfter...`` tables), as pure functions."""

from __future__ import annotations

import asyncio

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.plugins import interpodaffinity as ipa
from mockkube.scheduler.plugins import nodeports, noderesources, nodes
from mockkube.scheduler.plugins import podtopologyspread as pts
from mockkube.scheduler.plugins.dynamicresources import dra_after_claim_change, dra_after_pod_change
from mockkube.scheduler.plugins.volumebinding import volume_after_claim_change, volume_after_class_change
from mockkube.scheduler.queue import INITIAL_BACKOFF, SchedulingQueue, build_hint_map

Q, SKIP = fw.QUEUE, fw.QUEUE_SKIP
NODE_ADD = fw.ClusterEvent(fw.NODE, fw.ADD)


# -- builders (st.MakePod / st.MakeNode) ------------------------------------------------------
def pod(name="p", uid=None, ns="default", node="", labels=None, **spec) -> dict:
    s = dict(spec)
    if node:
        s["nodeName"] = node
    s.setdefault("containers", [{"name": "c", "image": "i"}])
    return {"metadata": {"name": name, "namespace": ns, "uid": uid or name, "labels": labels or {}}, "spec": s}


def node(name="node-a", labels=None, taints=None, unschedulable=False, allocatable=None) -> dict:
    spec: dict = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"allocatable": allocatable or {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def affinity_in(key, topology, values, anti=False) -> dict:
    term = {
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": values}]},
        "topologyKey": topology,
    }
    kind = "podAntiAffinity" if anti else "podAffinity"
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def affinity_exists(*keys, topology="hostname") -> dict:
    terms = [
        {"labelSelector": {"matchExpressions": [{"key": k, "operator": "Exists"}]}, "topologyKey": topology}
        for k in keys
    ]
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}


def spread(*constraints) -> list:
    return [
        {"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
        for k, sel in constraints
    ]


FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


# -- framework.MatchClusterEvents ----------------------------------------------------------------
@pytest.mark.parametrize(
    "registered,incoming,want",
    [
        (fw.ClusterEvent(fw.NODE, fw.UPDATE), fw.ClusterEvent(fw.NODE, fw.UPDATE_NODE_LABEL), True),
        (fw.ClusterEvent(fw.NODE, fw.UPDATE_NODE_LABEL), fw.ClusterEvent(fw.NODE, fw.UPDATE), False),
        (fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL), NODE_ADD, True),
        (fw.ClusterEvent(fw.NODE, fw.ADD), fw.ClusterEvent(fw.NODE, fw.DELETE), False),
        (fw.ClusterEvent(fw.POD, fw.DELETE), fw.EVENT_ASSIGNED_POD_DELETE, True),
        (fw.ClusterEvent(fw.POD, fw.ADD), fw.EVENT_UNSCHEDULED_POD_ADD, True),
        (fw.ClusterEvent(fw.POD, fw.ALL), NODE_ADD, False),
        (fw.ClusterEvent(fw.WILDCARD, fw.ALL), NODE_ADD, True),
        (fw.ClusterEvent(fw.NODE, fw.ALL), fw.EVENT_UNSCHEDULABLE_TIMEOUT, False),
    ],
)
def test_match_cluster_events(registered, incoming, want):
    assert fw.match_cluster_events(registered, incoming) is want


def test_event_labels_are_upstreams():
    assert NODE_ADD.label == "NodeAdd"
    assert fw.EVENT_ASSIGNED_POD_DELETE.label == "AssignedPodDelete"
    assert fw.EVENT_UNSCHEDULED_POD_ADD.label == "UnschedulablePodAdd"
    assert fw.ClusterEvent(fw.NODE, fw.UPDATE_NODE_TAINT).label == "NodeUpdateNodeTaint"
    assert fw.EVENT_UNSCHEDULABLE_TIMEOUT.label == "UnschedulableTimeout"


def test_node_scheduling_properties_change():
    old = node(labels={"a": "1"}, taints=[{"key": "k", "effect": "NoSchedule"}], unschedulable=True)
    new = node(labels={"a": "2"}, allocatable={"cpu": "8", "memory": "8Gi", "pods": "110"})
    got = [e.label for e in fw.node_scheduling_properties_change(new, old)]
    assert got == ["NodeUpdateNodeTaint", "NodeUpdateNodeAllocatable", "NodeUpdateNodeLabel", "NodeUpdateNodeTaint"]
    assert fw.node_scheduling_properties_change(node(), node()) == []


def test_pod_scheduling_properties_change():
    old = pod(labels={"a": "1"}, schedulingGates=[{"name": "g"}])
    new = pod(labels={"a": "2"}, tolerations=[{"key": "k", "operator": "Exists"}])
    got = [e.label for e in fw.pod_scheduling_properties_change(new, old)]
    assert got == [
        "UnschedulablePodUpdatePodLabel",
        "UnschedulablePodUpdatePodSchedulingGatesEliminated",
        "UnschedulablePodUpdatePodToleration",
    ]
    # nothing specific: the general Update, which no in-tree plugin registers
    assert [e.label for e in fw.pod_scheduling_properties_change(pod(node="n"), pod(node="n"))] == ["AssignedPodUpdate"]


# -- the queue -------------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_queue(hint, plugin="foo", event=NODE_ADD, clock=None) -> tuple[SchedulingQueue, Clock, list]:
    clock = clock or Clock()
    incoming: list = []
    q = SchedulingQueue(clock, hints={event: [(plugin, hint)]}, incoming=lambda qn, ev: incoming.append((qn, ev)))
    return q, clock, incoming


def where(q: SchedulingQueue, key: str) -> str:
    if key in q.unschedulable:
        return "unschedulable"
    if key in q._in_backoff:
        return "backoff"
    if key in q._in_active:
        return "active"
    return "none"


def fail(q: SchedulingQueue, key: str, plugins=("foo",), p=None) -> None:
    q.add(key, pod=p or pod(key))
    assert q.pop_nowait() == key
    q.requeue_failed(key, rejected_by=frozenset(plugins))


def queue_hint(p, old, new):
    return Q


def skip_hint(p, old, new):
    return SKIP


# TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint (the PendingPlugins case
# does not apply: no mockkube plugin returns Pending)
@pytest.mark.parametrize(
    "name,hint,duration,want",
    [
        ("Queue queues pod to backoffQ if Pod is backing off", queue_hint, 0, "backoff"),
        ("Queue queues pod to activeQ if Pod is not backing off", queue_hint, INITIAL_BACKOFF, "active"),
        ("Skip queues pod to unschedulablePods", skip_hint, 0, "unschedulable"),
    ],
)
def test_move_all_with_queueing_hint(name, hint, duration, want):
    q, clock, _ = make_queue(hint)
    fail(q, "ns1/pod1")
    clock.now += duration
    q.move_all(NODE_ADD)
    assert where(q, "ns1/pod1") == want


def test_hint_not_called_for_a_pod_gated_by_a_plugin_not_interested_in_the_event():
    def must_not_run(p, old, new):
        raise AssertionError("QueueingHintFn should not be called as pod is gated")

    clock = Clock()
    hints = {NODE_ADD: [("foo", must_not_run)], fw.EVENT_UNSCHEDULED_POD_UPDATE: [("SchedulingGates", queue_hint)]}
    q = SchedulingQueue(clock, hints=hints)
    q.add("ns1/pod1", pod=pod("pod1"))
    assert q.pop_nowait() == "ns1/pod1"
    q.gate("ns1/pod1", "SchedulingGates")
    assert q.move_all(NODE_ADD) == 0
    assert where(q, "ns1/pod1") == "unschedulable"


@pytest.mark.parametrize("attempts,want", [(0, "active"), (1, "backoff")])
def test_hint_called_for_a_pod_gated_by_a_plugin_interested_in_the_event(attempts, want):
    # "...is gated by the plugin that is interested in the event" and "Pod that experienced
    # a scheduling failure before should be queued to backoffQ after un-gated"
    q, _, _ = make_queue(queue_hint)
    if attempts:
        fail(q, "ns1/pod1", ("bar",))
        q.add("ns1/pod1", pod=pod("pod1"))  # updated: into backoffQ, popped early (activeQ empty)
    else:
        q.add("ns1/pod1", pod=pod("pod1"))
    assert q.pop_nowait() == "ns1/pod1"
    q.gate("ns1/pod1", "foo")
    q.move_all(NODE_ADD)
    assert where(q, "ns1/pod1") == want


def test_move_all_to_active_or_backoff_queue():
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue: pods rejected by fooPlugin move on
    NodeAdd, one with no plugin goes to backoff at once, one rejected by barPlugin stays."""
    q, clock, _ = make_queue(queue_hint, plugin="fooPlugin")
    fail(q, "ns/unschedulable", ("fooPlugin",))
    fail(q, "ns/high", ("fooPlugin",))
    fail(q, "ns/hpp1", ())
    assert where(q, "ns/hpp1") == "backoff"
    fail(q, "ns/hpp2", ("barPlugin",))
    q.move_all(NODE_ADD)
    assert [where(q, k) for k in ("ns/unschedulable", "ns/high", "ns/hpp1", "ns/hpp2")] == [
        "backoff",
        "backoff",
        "backoff",
        "unschedulable",
    ]
    # after the backoff every moved pod is active; hpp2 stays regardless of its timer
    clock.now += 10
    q._flush_backoff()
    q.move_all(NODE_ADD)
    assert len(q._in_active) == 3 and q.unschedulable == {"ns/hpp2"}


def test_an_event_seen_while_the_pod_was_in_flight_is_replayed():
    """In-flight events (upstream's inFlightEvents): an event of interest that arrived
    during the attempt sends the pod to backoff, an uninteresting one leaves it waiting."""
    seen = []

    def hint(p, old, new):
        seen.append((p["metadata"]["name"], new["metadata"]["name"]))
        return Q if new["metadata"]["name"] == "good" else SKIP

    for n, want in (("good", "backoff"), ("bad", "unschedulable")):
        q, _, incoming = make_queue(hint)
        q.add("ns/p", pod=pod("p"))
        assert q.pop_nowait() == "ns/p"
        q.move_all(NODE_ADD, None, node(n))  # nobody unschedulable: kept for the pod in flight
        q.requeue_failed("ns/p", rejected_by=frozenset(("foo",)))
        assert where(q, "ns/p") == want
        assert incoming[-1] == (want, "ScheduleAttemptFailure")
        assert q.in_flight_events == {}
    assert seen == [("p", "good"), ("p", "bad")]


def test_events_before_the_pop_are_not_replayed():
    q, _, _ = make_queue(queue_hint)
    fail(q, "ns/other", ("bar",))  # someone unschedulable, so events are processed
    q.move_all(NODE_ADD)
    q.add("ns/p", pod=pod("p"))
    assert q.pop_nowait() == "ns/p"
    q.requeue_failed("ns/p", rejected_by=frozenset(("foo",)))
    assert where(q, "ns/p") == "unschedulable"


def test_errors_and_ownerless_failures_go_to_backoff():
    q, _, _ = make_queue(skip_hint)
    q.add("ns/e", pod=pod("e"))
    q.pop_nowait()
    q.requeue_failed("ns/e", error=True, rejected_by=frozenset(("foo",)))
    assert where(q, "ns/e") == "backoff"


def test_a_hint_that_fails_counts_as_queue():
    def boom(p, old, new):
        raise ValueError("x")

    q, _, _ = make_queue(boom)
    fail(q, "ns/p")
    assert q.move_all(NODE_ADD) == 1


def test_unschedulable_timeout_flushes_after_five_minutes():
    """TestPriorityQueue_FlushUnschedulablePodsLeftover: after podMaxInUnschedulablePodsDuration."""
    q, clock, incoming = make_queue(skip_hint)
    fail(q, "ns/old")
    clock.now += 200
    fail(q, "ns/new")
    clock.now += 101  # "ns/old" waited 301 s, "ns/new" 101 s
    q.flush_stale()
    assert where(q, "ns/old") == "active" and where(q, "ns/new") == "unschedulable"
    assert ("active", "UnschedulableTimeout") in incoming


def test_an_unscheduled_pods_own_update_is_judged_by_the_hints():
    hints = build_hint_map([nodes.TaintToleration()])
    q = SchedulingQueue(Clock(), hints=hints)
    old = pod("p")
    q.add("default/p", pod=old)
    q.pop_nowait()
    q.requeue_failed("default/p", rejected_by=frozenset(("TaintToleration",)))
    relabelled = pod("p", labels={"x": "y"})
    q.update("default/p", 0, old, relabelled, fw.pod_scheduling_properties_change(relabelled, old))
    assert where(q, "default/p") == "unschedulable"  # UpdatePodLabel: TaintToleration does not care
    tolerant = pod("p", tolerations=[{"operator": "Exists"}])
    q.update("default/p", 0, relabelled, tolerant, fw.pod_scheduling_properties_change(tolerant, relabelled))
    assert where(q, "default/p") == "backoff"


def test_gang_hints():
    from mockkube.scheduler.plugins import gangscheduling as gang

    member = pod("a", schedulingGroup={"podGroupName": "pg"})
    assert gang.gang_after_pod_added(member, None, pod("b", schedulingGroup={"podGroupName": "pg"})) == Q
    assert gang.gang_after_pod_added(member, None, pod("c", schedulingGroup={"podGroupName": "other"})) == SKIP
    assert gang.gang_after_pod_added(member, None, pod("d", ns="x", schedulingGroup={"podGroupName": "pg"})) == SKIP
    assert gang.gang_after_pod_group_change(member, None, {"metadata": {"name": "pg", "namespace": "default"}}) == Q
    assert gang.gang_after_pod_group_change(member, None, {"metadata": {"name": "x", "namespace": "default"}}) == SKIP


def test_pop_counts_incoming_pods_as_upstream():
    q, clock, incoming = make_queue(queue_hint)
    q.add("ns/p", pod=pod("p"))
    assert incoming == [("active", "UnschedulablePodAdd")]
    q.pop_nowait()
    q.requeue_failed("ns/p", rejected_by=frozenset(("foo",)))
    q.move_all(NODE_ADD)
    assert incoming[-2:] == [("unschedulable", "ScheduleAttemptFailure"), ("backoff", "NodeAdd")]
    assert q.pop_nowait() == "ns/p"  # activeQ empty: popped early from backoffQ
    assert incoming[-1] == ("active", "PopFromBackoffQ")


async def test_pop_waits_for_a_requeue():
    q, _, _ = make_queue(queue_hint)
    fail(q, "ns/p")
    waiter = asyncio.ensure_future(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.move_all(NODE_ADD)
    assert await asyncio.wait_for(waiter, 1) == "ns/p"


# -- InterPodAffinity: Test_isSchedulableAfterPodChange / Test_isSchedulableAfterNodeChange ---
SECSCAN = affinity_in("service", "region", ["securityscan", "value2"])
ANTI_SECSCAN = affinity_in("service", "region", ["securityscan", "value2"], anti=True)


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("add a pod which matches the pod affinity", pod(affinity=SECSCAN), None,
         pod("other", node="fake-node", labels={"service": "securityscan"}), Q),
        ("add an un-scheduled pod", pod(affinity=SECSCAN), None, pod("other", labels={"service": "securityscan"}), SKIP),
        ("add a pod which doesn't match the pod affinity", pod(affinity=SECSCAN), None,
         pod("other", node="fake-node", labels={"aaa": "a"}), SKIP),
        ("update a pod from non-match to match pod affinity", pod(affinity=SECSCAN),
         pod("other", node="fake-node", labels={"aaa": "a"}),
         pod("other", node="fake-node", labels={"service": "securityscan"}), Q),
        ("the updating pod matches target pod's affinity both before and after label changes", pod(affinity=SECSCAN),
         pod("other", node="fake-node", labels={"service": "value2"}),
         pod("other", node="fake-node", labels={"service": "securityscan"}), SKIP),
        ("update an un-scheduled pod", pod(affinity=SECSCAN), pod("other", labels={"aaa": "a"}),
         pod("other", labels={"service": "securityscan"}), SKIP),
        ("update a pod from match to non-match the pod affinity", pod(affinity=SECSCAN),
         pod("other", node="fake-node", labels={"service": "securityscan"}),
         pod("other", node="fake-node", labels={"aaa": "a"}), SKIP),
        ("update a pod from match to non-match pod's affinity - multiple terms case",
         pod(affinity=affinity_exists("aaa", "bbb")), pod("other", node="fake-node", labels={"aaa": "a"}),
         pod("other", node="fake-node", labels={"service": "securityscan"}), SKIP),
        ("update a pod from non-match to match pod's affinity - multiple terms case",
         pod(affinity=affinity_exists("aaa", "bbb")), pod("other", node="fake-node", labels={"aaa": "a"}),
         pod("other", node="fake-node", labels={"aaa": "", "bbb": ""}), Q),
        ("updated pod is the target pod", pod(labels={"foo": "baz"}), pod(labels={"foo": "bar"}),
         pod(labels={"foo": "baz"}), Q),
        ("modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
         pod(affinity=ANTI_SECSCAN), pod("other", node="fake-node", labels={"service": "securityscan"}),
         pod("other", node="fake-node", labels={"service": "aaaa"}), Q),
        ("modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
         pod(affinity=ANTI_SECSCAN), pod("other", node="fake-node", labels={"service": "bbb"}),
         pod("other", node="fake-node", labels={"service": "securityscan"}), SKIP),
        ("delete a pod which doesn't match pod's anti-affinity", pod(affinity=ANTI_SECSCAN),
         pod("other", node="fake-node", labels={"aaa": "a"}), None, SKIP),
        ("delete a pod which matches pod's anti-affinity", pod(affinity=ANTI_SECSCAN),
         pod("other", node="fake-node", labels={"service": "securityscan"}), None, Q),
        ("delete a pod with anti-affinity that matches pending pod", pod(labels={"service": "securityscan"}),
         pod("other", node="fake-node", affinity=ANTI_SECSCAN), None, Q),
        ("delete a pod with anti-affinity that doesn't match pending pod", pod(labels={"service": "foo"}),
         pod("other", node="fake-node", affinity=ANTI_SECSCAN), None, SKIP),
        ("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match "
         "pending pod", pod(labels={"service": "foo"}, affinity=ANTI_SECSCAN),
         pod("other", node="fake-node", labels={"service": "foo"}, affinity=ANTI_SECSCAN), None, SKIP),
    ],
)  # fmt: skip
def test_interpodaffinity_after_pod_change(name, target, old, new, want):
    assert ipa.affinity_after_pod_change(target, old, new) == want


ZONE_AFF = affinity_in("service", "zone", ["securityscan", "value2"])
ANTI_ZONE = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}
        ]
    }
}


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("add a new node with matched pod affinity topologyKey", pod(affinity=ZONE_AFF), None,
         node(labels={"zone": "zone1"}), Q),
        ("add a new node without matched topologyKey", pod(affinity=SECSCAN), None, node(labels={"zone": "zone1"}), SKIP),
        ("update node label but not topologyKey", pod(affinity=ZONE_AFF), node(labels={"aaa": "a"}),
         node(labels={"aaa": "b"}), SKIP),
        ("update node label that isn't related to the pod affinity", pod(affinity=ZONE_AFF),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone1", "unrelated-label": "unrelated"}), SKIP),
        ("update node with different affinity topologyKey value", pod(affinity=ZONE_AFF),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone2"}), Q),
        ("update node to have the affinity topology label", pod(affinity=ZONE_AFF), node(labels={"aaa": "a"}),
         node(labels={"zone": "zone1"}), Q),
        ("add a new node with matched pod anti-affinity topologyKey", pod(affinity=ANTI_ZONE), None,
         node(labels={"zone": "zone1"}), Q),
        ("add a new node without matched pod anti-affinity topologyKey", pod(affinity=ANTI_ZONE), None, node(), Q),
        ("update node label that isn't related to the pod anti-affinity", pod(affinity=ANTI_ZONE),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone1", "unrelated-label": "unrelated"}), SKIP),
        ("update node with different anti-affinity topologyKey value", pod(affinity=ANTI_ZONE),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone2"}), Q),
        ("update node to have the anti-affinity topology label", pod(affinity=ANTI_ZONE), node(labels={"aaa": "a"}),
         node(labels={"zone": "zone1"}), SKIP),
        ("update node label not to have anti-affinity topology label", pod(affinity=ANTI_ZONE),
         node(labels={"zone": "zone1"}), node(labels={"aaa": "a"}), Q),
    ],
)  # fmt: skip
def test_interpodaffinity_after_node_change(name, target, old, new, want):
    assert ipa.affinity_after_node_change(target, old, new) == want


# -- PodTopologySpread -------------------------------------------------------------------------------
def spread_hint(kind):
    plugin = pts.PodTopologySpread(cache=None)  # type: ignore[arg-type]
    (ev,) = [e for e in plugin.events_to_register() if e.event.resource == kind]
    return ev.hint


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("node updates label which matches topologyKey", pod(topologySpreadConstraints=spread(("zone", FOO))),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone2"}), Q),
        ("node that doesn't match topologySpreadConstraints updates non-related label",
         pod(topologySpreadConstraints=spread(("zone", FOO))), node(labels={"foo": "bar1"}),
         node(labels={"foo": "bar2"}), SKIP),
        ("create node with non-related labels", pod(topologySpreadConstraints=spread(("zone", FOO))), None,
         node(labels={"foo": "bar"}), SKIP),
        ("create node with related labels", pod(topologySpreadConstraints=spread(("zone", FOO))), None,
         node(labels={"zone": "zone1"}), Q),
        ("delete node with non-related labels", pod(topologySpreadConstraints=spread(("zone", FOO))),
         node(labels={"foo": "bar"}), None, SKIP),
        ("delete node with related labels", pod(topologySpreadConstraints=spread(("zone", FOO))),
         node(labels={"zone": "zone1"}), None, Q),
        ("add node with related labels that only match one of topologySpreadConstraints",
         pod(topologySpreadConstraints=spread(("zone", FOO), ("node", FOO))), None, node(labels={"zone": "zone1"}), SKIP),
        ("add node with related labels that match all topologySpreadConstraints",
         pod(topologySpreadConstraints=spread(("zone", FOO), ("node", FOO))), None,
         node(labels={"zone": "zone1", "node": "node1"}), Q),
        ("update node with related labels that only match one of topologySpreadConstraints",
         pod(topologySpreadConstraints=spread(("zone", FOO), ("node", FOO))), node(labels={"zone": "zone1"}),
         node(labels={"zone": "zone1"}), SKIP),
        ("update node with related labels that match all topologySpreadConstraints",
         pod(topologySpreadConstraints=spread(("zone", FOO), ("node", FOO))),
         node(labels={"zone": "zone1", "node": "node1"}), node(labels={"zone": "zone1", "node": "node2"}), Q),
        ("node that matches changes a taint (v1.36)", pod(topologySpreadConstraints=spread(("zone", FOO))),
         node(labels={"zone": "zone1"}), node(labels={"zone": "zone1"}, taints=[{"key": "k", "effect": "NoSchedule"}]),
         Q),
    ],
)  # fmt: skip
def test_podtopologyspread_after_node_change(name, target, old, new, want):
    assert spread_hint(fw.NODE)(target, old, new) == want


SPREAD_FOO = spread(("zone", FOO))
SPREAD_FOO_BAR = spread(("zone", FOO), ("node", BAR))


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("add pod with labels match topologySpreadConstraints selector", SPREAD_FOO, None,
         pod("o", node="fake-node", labels={"foo": ""}), Q),
        ("add un-scheduled pod", SPREAD_FOO, None, pod("o", labels={"foo": ""}), SKIP),
        ("update un-scheduled pod", SPREAD_FOO, pod("o", labels={"bar": ""}), pod("o", labels={"foo": ""}), SKIP),
        ("delete un-scheduled pod", SPREAD_FOO, pod("o", labels={"foo": ""}), None, SKIP),
        ("add pod with different namespace", SPREAD_FOO, None,
         pod("o", ns="fake-namespace", node="fake-node", labels={"foo": ""}), SKIP),
        ("add pod with labels don't match topologySpreadConstraints selector", SPREAD_FOO, None,
         pod("o", node="fake-node", labels={"bar": ""}), SKIP),
        ("delete pod with labels that match topologySpreadConstraints selector", SPREAD_FOO,
         pod("o", node="fake-node", labels={"foo": ""}), None, Q),
        ("delete pod with labels that don't match topologySpreadConstraints selector", SPREAD_FOO,
         pod("o", node="fake-node", labels={"bar": ""}), None, SKIP),
        ("update pod's non-related label", SPREAD_FOO, pod("o", node="fake-node", labels={"foo": "", "bar": "bar1"}),
         pod("o", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP),
        ("add pod's label that matches topologySpreadConstraints selector", SPREAD_FOO, pod("o", node="fake-node"),
         pod("o", node="fake-node", labels={"foo": ""}), Q),
        ("delete pod label that matches topologySpreadConstraints selector", SPREAD_FOO,
         pod("o", node="fake-node", labels={"foo": ""}), pod("o", node="fake-node"), Q),
        ("change pod's label that matches topologySpreadConstraints selector", SPREAD_FOO,
         pod("o", node="fake-node", labels={"foo": "foo1"}), pod("o", node="fake-node", labels={"foo": "foo2"}), SKIP),
        ("change pod's label that doesn't match topologySpreadConstraints selector", SPREAD_FOO,
         pod("o", node="fake-node", labels={"foo": "", "bar": "bar1"}),
         pod("o", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP),
        ("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
         SPREAD_FOO_BAR, pod("o", node="fake-node", labels={"foo": ""}),
         pod("o", node="fake-node", labels={"foo": "", "bar": "bar2"}), Q),
        ("change pod's label that doesn't match topologySpreadConstraints selector with multi "
         "topologySpreadConstraints", SPREAD_FOO_BAR, pod("o", node="fake-node", labels={"foo": ""}),
         pod("o", node="fake-node", labels={"foo": "", "baz": ""}), SKIP),
        ("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
         SPREAD_FOO_BAR, pod("o", node="fake-node", labels={"foo": "", "bar": ""}),
         pod("o", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP),
    ],
)  # fmt: skip
def test_podtopologyspread_after_pod_change(name, target, old, new, want):
    assert spread_hint(fw.POD)(pod(labels={"foo": ""}, topologySpreadConstraints=target), old, new) == want


def test_podtopologyspread_toleration_counts_only_with_node_taints_policy_honor():
    honor = [dict(c, nodeTaintsPolicy="Honor") for c in SPREAD_FOO]
    old = pod(topologySpreadConstraints=honor)
    new = pod(topologySpreadConstraints=honor, tolerations=[{"operator": "Exists"}])
    assert spread_hint(fw.POD)(old, old, new) == Q
    plain_old, plain_new = (
        pod(topologySpreadConstraints=SPREAD_FOO),
        pod(topologySpreadConstraints=SPREAD_FOO, tolerations=[{"operator": "Exists"}]),
    )
    assert spread_hint(fw.POD)(plain_old, plain_old, plain_new) == SKIP


# -- node plugins ---------------------------------------------------------------------------
NOSCHED = {"key": "foo", "value": "bar", "effect": "NoSchedule"}
TOLERATES = [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("skip-queue-on-add", pod(nodeSelector={"foo": "bar"}), None, node(labels={"foo": "baz"}), SKIP),
        ("queue-on-add", pod(nodeSelector={"foo": "bar"}), None, node(labels={"foo": "bar"}), Q),
        ("skip-unrelated-changes", pod(nodeSelector={"foo": "bar"}), node(), node(labels={"zoo": "bar"}), SKIP),
        ("skip-unrelated-changes-on-labels", pod(nodeSelector={"foo": "bar"}), node(labels={"foo": "bar"}),
         node(labels={"foo": "bar", "zoo": "bar"}), SKIP),
        ("queue-on-labels-change", pod(nodeSelector={"foo": "bar"}), node(labels={"foo": "baz"}),
         node(labels={"foo": "bar"}), Q),
        ("skip-after-labels-change-without-match", pod(nodeSelector={"foo": "bar"}), node(labels={"foo": "bar"}),
         node(labels={"foo": "baz"}), SKIP),
    ],
)  # fmt: skip
def test_nodeaffinity_after_node_change(name, target, old, new, want):
    assert nodes.node_affinity_after_node_change(target, old, new) == want


@pytest.mark.parametrize(
    "name,old,new,want",
    [
        ("node was added and schedulable", None, node(), Q),
        ("node was added but unschedulable", None, node(unschedulable=True), SKIP),
        ("node became schedulable", node(unschedulable=True), node(), Q),
        ("node stays unschedulable", node(unschedulable=True), node(unschedulable=True), SKIP),
        ("node stays schedulable", node(), node(labels={"a": "b"}), SKIP),
    ],
)
def test_nodeunschedulable_after_node_change(name, old, new, want):
    assert nodes.unschedulable_after_node_change(pod(), old, new) == want


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("the unschedulable pod now tolerates node.kubernetes.io/unschedulable", pod("p"), pod("p"),
         pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                "effect": "NoSchedule"}]), Q),
        ("the unschedulable pod got an unrelated toleration", pod("p"), pod("p"),
         pod("p", tolerations=TOLERATES), SKIP),
        ("another pod got the toleration", pod("p"), pod("o"),
         pod("o", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]), SKIP),
    ],
)  # fmt: skip
def test_nodeunschedulable_after_toleration_change(name, target, old, new, want):
    assert nodes.unschedulable_after_toleration_change(target, old, new) == want


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("node with untolerated taint added", pod(), None, node(taints=[NOSCHED]), SKIP),
        ("node with tolerated taint added", pod(tolerations=TOLERATES), None, node(taints=[NOSCHED]), Q),
        ("node without taints added", pod(), None, node(), Q),
        ("taint removed", pod(), node(taints=[NOSCHED]), node(), Q),
        ("tolerated taint kept, others unchanged", pod(tolerations=TOLERATES), node(taints=[NOSCHED]),
         node(taints=[NOSCHED], labels={"a": "b"}), SKIP),
        ("another untolerated taint added", pod(), node(), node(taints=[NOSCHED]), SKIP),
    ],
)  # fmt: skip
def test_tainttoleration_after_node_change(name, target, old, new, want):
    assert nodes.taint_after_node_change(target, old, new) == want


def test_tainttoleration_after_toleration_change():
    assert nodes.taint_after_toleration_change(pod("p"), pod("p"), pod("p", tolerations=TOLERATES)) == Q
    assert nodes.taint_after_toleration_change(pod("p"), pod("o"), pod("o", tolerations=TOLERATES)) == SKIP


def test_nodename_after_node_add():
    assert nodes.node_name_after_node_add(pod(nodeName="n1"), None, node("n1")) == Q
    assert nodes.node_name_after_node_add(pod(nodeName="n1"), None, node("n2")) == SKIP


def test_schedulinggates_after_gates_eliminated():
    assert nodes.gates_eliminated_hint(pod("p"), pod("p"), pod("p")) == Q
    assert nodes.gates_eliminated_hint(pod("p"), pod("o"), pod("o")) == SKIP


# -- NodeResourcesFit ------------------------------------------------------------------------
def req(name="p", node_name="", uid=None, **requests) -> dict:
    p = pod(name, uid=uid, node=node_name)
    p["spec"]["containers"][0]["resources"] = {"requests": {k: str(v) for k, v in requests.items()}}
    return p


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("queue-on-deleted", req(cpu=1), req("o", node_name="n", cpu=1), None, Q),
        ("skip-queue-on-unscheduled-pod-deleted", req(cpu=1), req("o", cpu=1), None, SKIP),
        ("queue-on-other-pod-scaled-down", req(cpu=1), req("o", node_name="n", cpu=2), req("o", node_name="n", cpu=1),
         Q),
        ("skip-queue-on-other-unscheduled-pod-scaled-down", req(cpu=1), req("o", cpu=2), req("o", cpu=1), SKIP),
        ("skip-queue-on-other-pod-unrelated-resource-scaled-down", req(cpu=1),
         req("o", node_name="n", cpu=1, memory=2), req("o", node_name="n", cpu=1, memory=1), SKIP),
        ("queue-on-target-pod-scaled-down", req(cpu=2), req(cpu=2), req(cpu=1), Q),
    ],
)  # fmt: skip
def test_fit_after_pod_event(name, target, old, new, want):
    assert noderesources.fit_after_pod_event(target, old, new) == want


@pytest.mark.parametrize(
    "name,target,old,new,want",
    [
        ("queue-on-node-add", req(cpu=1), None, node(allocatable={"cpu": "2", "pods": "10"}), Q),
        ("skip-queue-on-node-add-too-small", req(cpu=4), None, node(allocatable={"cpu": "2", "pods": "10"}), SKIP),
        ("queue-on-node-changes", req(cpu=2), node(allocatable={"cpu": "1", "pods": "10"}),
         node(allocatable={"cpu": "2", "pods": "10"}), Q),
        ("skip-queue-on-node-unrelated-changes", req(cpu=1), node(allocatable={"cpu": "2", "memory": "1Gi", "pods": "10"}),
         node(allocatable={"cpu": "2", "memory": "2Gi", "pods": "10"}), SKIP),
        ("skip-queue-on-node-changes-from-suitable-to-unsuitable", req(cpu=2),
         node(allocatable={"cpu": "2", "pods": "10"}), node(allocatable={"cpu": "1", "pods": "10"}), SKIP),
        ("queue-on-allowed-pods-increase", req(), node(allocatable={"cpu": "1", "pods": "1"}),
         node(allocatable={"cpu": "1", "pods": "2"}), Q),
    ],
)  # fmt: skip
def test_fit_after_node_change(name, target, old, new, want):
    assert noderesources.fit_after_node_change(target, old, new) == want


# -- NodePorts -------------------------------------------------------------------------------
def ports(name="p", node_name="", *host_ports) -> dict:
    p = pod(name, node=node_name)
    p["spec"]["containers"][0]["ports"] = [{"containerPort": hp, "hostPort": hp} for hp in host_ports]
    return p


@pytest.mark.parametrize(
    "name,deleted,want",
    [
        ("skip-queue-on-unscheduled", ports("o", "", 8080), SKIP),
        ("skip-queue-on-non-hostport", ports("o", "n"), SKIP),
        ("skip-queue-on-unrelated-hostport", ports("o", "n", 8081), SKIP),
        ("queue-on-released-hostport", ports("o", "n", 8080), Q),
    ],
)
def test_nodeports_after_pod_deleted(name, deleted, want):
    assert nodeports.ports_after_pod_deleted(ports("p", "", 8080), deleted, None) == want


# -- VolumeBinding and DynamicResources --------------------------------------------------------
def test_volumebinding_hints():
    p = pod(volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
    claim = {"metadata": {"name": "data", "namespace": "default"}}
    other = {"metadata": {"name": "other", "namespace": "default"}}
    assert volume_after_claim_change(p, None, claim) == Q
    assert volume_after_claim_change(p, None, other) == SKIP
    sc = {"metadata": {"name": "sc"}}
    assert volume_after_class_change(p, None, sc) == Q
    assert volume_after_class_change(p, sc, dict(sc, parameters={"a": "b"})) == SKIP
    assert volume_after_class_change(p, sc, dict(sc, allowedTopologies=[{}])) == Q


def test_dynamicresources_hints():
    p = pod(resourceClaims=[{"name": "r", "resourceClaimName": "mine"}])
    mine = {"metadata": {"name": "mine", "namespace": "default"}, "status": {}}
    theirs = {"metadata": {"name": "theirs", "namespace": "default"}, "status": {}}
    allocated = dict(theirs, status={"allocation": {"devices": {}}})
    assert dra_after_claim_change(p, None, mine) == Q  # created for the pod
    assert dra_after_claim_change(p, None, theirs) == SKIP
    assert dra_after_claim_change(p, allocated, theirs) == Q  # deallocated: devices free
    assert dra_after_claim_change(p, allocated, None) == Q  # an allocated claim deleted
    finalized = dict(mine, metadata=dict(mine["metadata"], finalizers=["x"]))
    assert dra_after_claim_change(p, mine, finalized) == SKIP  # status unchanged
    assert dra_after_claim_change(p, mine, dict(mine, status={"reservedFor": []})) == Q
    assert dra_after_pod_change(p, p, p) == Q
    assert dra_after_pod_change(p, pod("o"), pod("o")) == SKIP


def test_dra_claim_hint_follows_each_pod_version():
    """The claim names a pod uses are memoised per pod version: a newer version of the same
    pod (its template's claim now created) is answered for what it says, and a pod with no
    resourceVersion is never taken from the memo."""
    spec = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}
    v1 = dict(pod("w", uid="u-memo", **spec))
    v1["metadata"] = dict(v1["metadata"], resourceVersion="7")
    claim = {"metadata": {"name": "w-gpu-abc", "namespace": "default"}, "status": {}}
    assert dra_after_claim_change(v1, None, claim) == SKIP  # its claim not created yet
    v2 = dict(v1, metadata=dict(v1["metadata"], resourceVersion="8"))
    v2["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "w-gpu-abc"}]}
    assert dra_after_claim_change(v2, None, claim) == Q
    assert dra_after_claim_change(v1, None, claim) == SKIP
    bare = dict(v2, metadata={k: v for k, v in v2["metadata"].items() if k != "resourceVersion"})
    assert dra_after_claim_change(bare, None, claim) == Q
    bare["status"] = {}
    assert dra_after_claim_change(bare, None, claim) == SKIP  # changed in place: not memoised


def test_claim_narrowing_moves_what_asking_every_pod_moves():
    """mockkube's Narrowing for claim events spares hint calls only: a queue with it and one
    asking every parked pod (as upstream) move the same pods, over a seeded random run of
    pods parked by DynamicResources (some gated, some with claims named in spec or status, in
    two namespaces, changing version) and claims added, updated, deallocated and deleted."""
    import random

    from mockkube.scheduler.plugins.dynamicresources import DynamicResources
    from mockkube.scheduler.queue import build_narrowings

    plugins = [DynamicResources.__new__(DynamicResources), nodes.TaintToleration()]
    hints = build_hint_map(plugins)
    narrowings = build_narrowings(plugins)
    assert narrowings  # the claim events are narrowed
    rnd = random.Random(5)
    clocks = [Clock(), Clock()]
    queues = [SchedulingQueue(clocks[0], hints=hints, narrowings=narrowings), SchedulingQueue(clocks[1], hints=hints)]
    names = [f"c{i}" for i in range(8)]
    rv = iter(range(1, 10**6))

    def a_pod(i: int) -> dict:
        ns = "a" if i % 3 else "b"
        claims, statuses = [], []
        for j in range(rnd.randint(0, 2)):
            if rnd.random() < 0.4:
                claims.append({"name": f"r{j}", "resourceClaimName": rnd.choice(names)})
            else:
                claims.append({"name": f"r{j}", "resourceClaimTemplateName": "t"})
                if rnd.random() < 0.7:
                    statuses.append({"name": f"r{j}", "resourceClaimName": rnd.choice(names)})
        p = pod(f"p{i}", uid=f"u{i}", ns=ns, resourceClaims=claims)
        p["metadata"]["resourceVersion"] = str(next(rv))
        p["status"] = {"resourceClaimStatuses": statuses}
        return p

    def a_claim() -> dict:
        c = {"metadata": {"name": rnd.choice(names), "namespace": rnd.choice("ab")}, "status": {}}
        if rnd.random() < 0.3:
            c["status"] = {"allocation": {"devices": {"results": []}}}
        if rnd.random() < 0.3:
            c["status"]["reservedFor"] = [{"resource": "pods", "name": "x", "uid": "x"}]
        return c

    for step in range(3000):
        i = rnd.randrange(40)
        key = f"{'a' if i % 3 else 'b'}/p{i}"
        op = rnd.random()
        if op < 0.35:
            p = a_pod(i)
            rejector = rnd.choice(["DynamicResources", "DynamicResources", "TaintToleration", ""])
            how = rnd.random()
            for q in queues:
                q.add(key, pod=p)
                if q.pop_nowait() is None:
                    continue
                if rejector == "" and how < 0.5:
                    q.gate(key)  # gated by no plugin: only a wildcard event moves it
                elif how < 0.3:
                    q.gate(key, rejector or "DynamicResources")
                else:
                    q.requeue_failed(key, rejected_by=frozenset((rejector,)) if rejector else frozenset(), pod=p)
        elif op < 0.4:
            for q in queues:
                q.delete(key)
        elif op < 0.45:
            for q in queues:
                if key in q.entries:
                    q.entries[key].pod = a_pod(i)  # a newer version, as the scheduler assigns it
        else:
            old = a_claim() if rnd.random() < 0.6 else None
            new = a_claim() if rnd.random() < 0.9 else None
            if old is not None and new is not None:
                new["metadata"] = old["metadata"]
            action = fw.ADD if old is None else (fw.DELETE if new is None else fw.UPDATE)
            if old is None and new is None:
                continue
            ev = fw.ClusterEvent(fw.RESOURCE_CLAIM, action)
            moved = [q.move_all(ev, old, new) for q in queues]
            assert moved[0] == moved[1], step
        states = [{k: where(q, k) for k in q.entries} for q in queues]
        assert states[0] == states[1], step
        tick = rnd.random()
        for c in clocks:
            c.now += tick
    for key in list(queues[0].entries):
        queues[0].delete(key)
    assert not queues[0]._keyed and not queues[0]._keys_of  # a deleted pod leaves the index


def test_narrowing_holds_where_its_keys_cannot():
    """Hints set again over a queue that holds pods index them; a pod whose keys cannot be
    had (here a claim name that is not a string) is asked at every event, as asking every
    pod would; a plugin that registers an event twice gets no narrowing for it."""
    from mockkube.scheduler.plugins.dynamicresources import CLAIM_NARROWING
    from mockkube.scheduler.queue import build_narrowings

    ev = fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.ADD | fw.UPDATE | fw.DELETE)
    hints = {ev: [("DynamicResources", dra_after_claim_change)]}
    added = fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.ADD)
    claim = {"metadata": {"name": "c", "namespace": "default"}, "status": {}}
    uses = dict(pod("a", resourceClaims=[{"name": "r", "resourceClaimName": "c"}]))
    broken = dict(pod("b", resourceClaims=[{"name": "r", "resourceClaimName": ["c"]}]))
    q = SchedulingQueue(Clock(), hints=hints)
    for p in (uses, broken):
        key = "default/" + p["metadata"]["name"]
        q.add(key, pod=p)
        q.pop_nowait()
        q.requeue_failed(key, rejected_by=frozenset(("DynamicResources",)), pod=p)
    q.set_hints(hints, {(ev, "DynamicResources"): CLAIM_NARROWING})
    assert q.move_all(added, None, claim) == 2  # both indexed (b as unkeyed), both moved
    assert where(q, "default/a") == where(q, "default/b") == "backoff"

    class Twice(fw.Plugin):
        name = "Twice"

        def events_to_register(self):
            return [fw.ClusterEventWithHint(ev, dra_after_claim_change, CLAIM_NARROWING), fw.ClusterEventWithHint(ev)]

    assert build_narrowings([Twice()]) == {}


def test_events_to_register_as_upstream():
    """TestEventsToRegister: the registrations with SchedulerQueueingHints on."""
    got = {
        type(p).__name__: sorted((e.event.resource, e.event.action) for e in p.events_to_register())
        for p in (
            nodes.NodeAffinity(),
            nodes.NodeName(),
            nodes.NodeUnschedulable(),
            nodes.TaintToleration(),
            nodes.SchedulingGates(),
            nodeports.NodePorts(),
            ipa.InterPodAffinity(cache=None),  # type: ignore[arg-type]
            pts.PodTopologySpread(cache=None),  # type: ignore[arg-type]
        )
    }
    assert got == {
        "NodeAffinity": [(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL)],
        "NodeName": [(fw.NODE, fw.ADD)],
        "NodeUnschedulable": [(fw.NODE, fw.ADD | fw.UPDATE_NODE_TAINT), (fw.POD, fw.UPDATE_POD_TOLERATION)],
        "TaintToleration": [(fw.NODE, fw.ADD | fw.UPDATE_NODE_TAINT), (fw.POD, fw.UPDATE_POD_TOLERATION)],
        "SchedulingGates": [(fw.POD, fw.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)],
        "NodePorts": [(fw.NODE, fw.ADD), (fw.POD, fw.DELETE)],
        "InterPodAffinity": [
            (fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL),
            (fw.POD, fw.ADD | fw.UPDATE_POD_LABEL | fw.DELETE),
        ],
        "PodTopologySpread": [
            (fw.NODE, fw.ADD | fw.DELETE | fw.UPDATE_NODE_LABEL | fw.UPDATE_NODE_TAINT),
            (fw.POD, fw.ADD | fw.UPDATE_POD_LABEL | fw.UPDATE_POD_TOLERATION | fw.DELETE),
        ],
    }
    fit = noderesources.NodeResourcesFit()
    assert [(e.event.resource, e.event.action) for e in fit.events_to_register()][:2] == [
        (fw.POD, fw.DELETE | fw.UPDATE_POD_SCALE_DOWN),
        (fw.NODE, fw.ADD | fw.UPDATE_NODE_ALLOCATABLE),
    ]


def test_a_failure_no_plugin_owns_is_not_popped_early_from_backoff():
    """Upstream keeps such pods (no UnschedulablePlugins: counted as errors) apart from the
    backoffQ that SchedulerPopFromBackoffQ pops early, so an empty cluster does not spin."""
    q, clock, _ = make_queue(queue_hint)
    q.add("ns/p", pod=pod("p"))
    q.pop_nowait()
    q.requeue_failed("ns/p", rejected_by=frozenset())
    assert where(q, "ns/p") == "backoff" and q.pop_nowait() is None
    clock.now += INITIAL_BACKOFF
    assert q.pop_nowait() == "ns/p"


def test_a_gated_pod_is_counted_as_unschedulable_under_the_event_that_brought_it():
    q, _, incoming = make_queue(queue_hint)
    q.add("ns/g", pod=pod("g"))
    q.pop_nowait()
    q.gate("ns/g", "SchedulingGates")
    assert incoming == [("active", "UnschedulablePodAdd"), ("unschedulable", "UnschedulablePodAdd")]
