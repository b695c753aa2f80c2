"""The GangScheduling plugin's PreEnqueue and Permit on upstream's table
(``plugins/gangscheduling/gangscheduling_test.go`` TestGangSchedulingFlow, v1alpha2), case by
case. Upstream's table has the Permit wait message of an earlier v1.36 development state
("... to be waiting on permit"); v1.36 releases say "... to be scheduled", which is what
the plugin returns."""

from __future__ import annotations

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.plugins.gangscheduling import (
    PERMIT_TIMEOUT,
    GangScheduling,
    PodGroupState,
)


def pod_group(name: str, min_count: int | None = None, ns: str = "ns1") -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"metadata": {"namespace": ns, "name": name}, "spec": {"schedulingPolicy": policy}}


def pod(name: str, group: str | None = None, ns: str = "ns1") -> dict:
    spec = {"schedulingGroup": {"podGroupName": group}} if group else {}
    return {"metadata": {"namespace": ns, "name": name, "uid": name}, "spec": spec}


PG1, PG2, PG3 = pod_group("pg1", 3), pod_group("pg2", 4), pod_group("pg3")
P1, P2, P3 = pod("p1", "pg1"), pod("p2", "pg1"), pod("p3", "pg1")
P4, P5 = pod("p4", "pg2"), pod("p5", "pg2")
BASIC = pod("basic-pod", "pg3")
NON_GANG = pod("non-gang")

CASES = [
    # name, pod, other pods, pod groups, pods waiting on Permit, PreEnqueue, Permit
    ("non-gang pod succeeds immediately", NON_GANG, [], [PG1, PG2, PG3], [], None, None),
    ("basic policy pod succeeds immediately", BASIC, [], [PG1, PG2, PG3], [], None, None),
    (
        "gang pod fails PreEnqueue when pod group is not yet created",
        P1,
        [P2, P3, P4, P5],
        [],
        [],
        (fw.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'),
        None,
    ),
    (
        "gang pod fails PreEnqueue when quorum is not met",
        P1,
        [P2, P4, P5],
        [PG1, PG2],
        [],
        (fw.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for minCount pods from a gang to appear in scheduling queue"),
        None,
    ),
    (
        "gang pod passes PreEnqueue, but waits at Permit",
        P1,
        [P2, P3, P4, P5],
        [PG1, PG2],
        [P2, P4, P5],
        None,
        (fw.WAIT, "waiting for minCount pods from a gang to be scheduled"),
    ),
    (
        "final gang pod arrives at Permit and allows all waiting pods from a gang",
        P1,
        [P2, P3, P4, P5],
        [PG1, PG2],
        [P2, P3, P4, P5],
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    "the_pod,others,groups,waiting,want_pre_enqueue,want_permit",
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_gang_scheduling_flow(the_pod, others, groups, waiting, want_pre_enqueue, want_permit):
    by_name = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in groups}
    states: dict[tuple[str, str], PodGroupState] = {}
    for p in [*others, the_pod]:
        g = (p.get("spec") or {}).get("schedulingGroup")
        if g:
            states.setdefault((p["metadata"]["namespace"], g["podGroupName"]), PodGroupState()).all.add(
                p["metadata"]["uid"]
            )
    pl = GangScheduling(lambda ns, n: by_name.get((ns, n)), lambda ns, n: states.get((ns, n), PodGroupState()))

    st = pl.pre_enqueue(the_pod)
    got = None if st is None else (st.code, st.message)
    assert got == want_pre_enqueue
    if st is not None:
        return
    # the pods already waiting at Permit are assumed; each of them had to wait
    for p in waiting:
        key = (p["metadata"]["namespace"], p["spec"]["schedulingGroup"]["podGroupName"])
        states[key].assumed.add(p["metadata"]["uid"])
        wst, _ = pl.permit(fw.CycleState(), p, "some-node")
        assert wst is not None and wst.code == fw.WAIT, p["metadata"]["name"]
    g = (the_pod.get("spec") or {}).get("schedulingGroup")
    if g:
        states[(the_pod["metadata"]["namespace"], g["podGroupName"])].assumed.add(the_pod["metadata"]["uid"])
    st, timeout = pl.permit(fw.CycleState(), the_pod, "some-node")
    got = None if st is None else (st.code, st.message)
    assert got == want_permit
    assert timeout == (PERMIT_TIMEOUT if want_permit else 0.0)


def test_permit_timeout_is_upstreams_five_minutes():
    assert PERMIT_TIMEOUT == 5 * 60


def test_scheduled_pods_count_counts_bound_and_assumed_once():
    st = PodGroupState()
    st.all |= {"a", "b", "c"}
    st.scheduled.add("a")
    st.assumed |= {"a", "b"}
    assert (st.all_pods_count(), st.scheduled_pods_count()) == (3, 2)
