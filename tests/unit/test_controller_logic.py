"""Pure logic of the Deployment, ReplicaSet and device-taint controllers."""

from __future__ import annotations

import pytest

from mockkube.controllers import deployment_util as du
from mockkube.controllers import devicetaint as dt
from mockkube.controllers import replicaset as rsc
from mockkube.dra import taints as dtaints
from mockkube.machinery import meta

NOW = 1_800_000_000.0


def _d(replicas: int, surge=None, unavailable=None, strategy: str = "RollingUpdate", ann: dict | None = None) -> dict:
    s: dict = {"type": strategy}
    if strategy == "RollingUpdate":
        s["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {
        "metadata": {"name": "d", "generation": 1, "annotations": ann or {}},
        "spec": {"replicas": replicas, "strategy": s, "template": {"metadata": {"labels": {"a": "b"}}}},
        "status": {},
    }


def _rs(
    name: str, replicas: int, created: str = "2026-01-01T00:00:00Z", ann: dict | None = None, available: int = 0
) -> dict:
    return {
        "metadata": {"name": name, "creationTimestamp": created, "annotations": ann or {}},
        "spec": {"replicas": replicas},
        "status": {"availableReplicas": available},
    }


@pytest.mark.parametrize(
    "surge,unavailable,replicas,want",
    [
        ("25%", "25%", 3, (1, 0)),
        ("25%", "25%", 10, (3, 2)),
        ("50%", "50%", 5, (3, 2)),
        (0, 0, 5, (0, 1)),
        ("0%", "0%", 5, (0, 1)),
        (2, "10%", 4, (2, 0)),
    ],
)
def test_fenceposts_round_surge_up_and_unavailable_down(surge, unavailable, replicas, want):
    assert du.resolve_fenceposts(surge, unavailable, replicas) == want


def test_max_unavailable_is_capped_and_zero_for_recreate():
    assert du.max_unavailable(_d(2, 0, 5)) == 2
    assert du.max_unavailable(_d(0, 0, 1)) == 0
    assert du.max_unavailable(_d(3, strategy="Recreate")) == 0
    assert du.max_surge(_d(3, strategy="Recreate")) == 0


def test_new_rs_grows_within_surge():
    d = _d(10, "30%", 0)  # surge 3: at most 13 pods
    old, new = _rs("old", 10), _rs("new", 0)
    assert du.new_rs_new_replicas(d, [old, new], new) == 3
    old["spec"]["replicas"] = 8
    new["spec"]["replicas"] = 3
    assert du.new_rs_new_replicas(d, [old, new], new) == 5
    assert du.new_rs_new_replicas(_d(4, strategy="Recreate"), [old, new], new) == 4


def test_proportional_scaling_spreads_and_gives_leftover_to_the_largest_newest():
    d = _d(20, 3, 0)
    ann = {du.MAX_REPLICAS: "13"}
    old = _rs("old", 5, "2026-01-01T00:00:00Z", ann)
    new = _rs("new", 5, "2026-01-02T00:00:00Z", ann)
    assert du.proportional_sizes(d, new, [old]) == {"new": 14, "old": 9}
    d = _d(4, 3, 0)  # shrinking 13 -> 7: same size, so the older one shrinks first
    assert du.proportional_sizes(d, new, [old]) == {"old": 3, "new": 4}


def test_find_active_or_latest():
    old1, old2 = _rs("o1", 0, "2026-01-01T00:00:00Z"), _rs("o2", 0, "2026-01-02T00:00:00Z")
    assert du.find_active_or_latest(None, [old1, old2])["metadata"]["name"] == "o2"
    new = _rs("n", 0)
    assert du.find_active_or_latest(new, [old1]) is new
    old1["spec"]["replicas"] = 2
    assert du.find_active_or_latest(new, [old1]) is old1
    new["spec"]["replicas"] = 1
    assert du.find_active_or_latest(new, [old1]) is None


def test_template_hash_is_stable_safe_and_varies_with_collisions():
    tpl = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    h = du.compute_hash(tpl, None)
    assert h == du.compute_hash({"spec": tpl["spec"], "metadata": {"labels": {"app": "x"}}}, None)
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(h) <= 10
    assert du.compute_hash(tpl, 1) != h and du.compute_hash(tpl, 1) != du.compute_hash(tpl, 2)
    other = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "j"}]}}
    assert du.compute_hash(other, None) != h


def test_equal_ignore_hash():
    a = {"metadata": {"labels": {"app": "x", du.HASH_LABEL: "abc"}}, "spec": {"x": 1}}
    b = {"metadata": {"labels": {"app": "x"}, "creationTimestamp": None}, "spec": {"x": 1}}
    assert du.equal_ignore_hash(a, b)
    assert not du.equal_ignore_hash(a, {"metadata": {"labels": {"app": "y"}}, "spec": {"x": 1}})


def test_new_rs_annotations_copy_bump_revision_and_keep_history():
    d = _d(
        3, "25%", "25%", ann={"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}", du.REVISION: "7"}
    )
    rs = {"metadata": {"name": "r"}}
    assert du.set_new_rs_annotations(d, rs, 1, exists=False)
    assert rs["metadata"]["annotations"] == {
        "team": "a",
        du.REVISION: "1",
        du.DESIRED_REPLICAS: "3",
        du.MAX_REPLICAS: "4",
    }
    assert not du.set_new_rs_annotations(d, rs, 1, exists=True)
    assert du.set_new_rs_annotations(d, rs, 3, exists=True)  # rolled back to this template
    assert rs["metadata"]["annotations"][du.REVISION] == "3"
    assert rs["metadata"]["annotations"][du.REVISION_HISTORY] == "1"


def test_conditions_keep_transition_time_for_same_status():
    st: dict = {}
    du.set_condition(st, du.new_condition("Progressing", "True", du.NEW_RS_CREATED, "m", NOW))
    du.set_condition(st, du.new_condition("Progressing", "True", du.RS_UPDATED, "m2", NOW + 5))
    [c] = st["conditions"]
    assert c["lastTransitionTime"] == meta.rfc3339(NOW) and c["lastUpdateTime"] == meta.rfc3339(NOW + 5)
    du.set_condition(st, du.new_condition("Progressing", "True", du.RS_UPDATED, "m3", NOW + 9))
    assert st["conditions"][0]["message"] == "m2"  # same status and reason: no change


def test_rollout_times_out_after_the_progress_deadline():
    d = _d(2, "25%", "25%")
    d["spec"]["progressDeadlineSeconds"] = 600
    new = {"metadata": {"name": "d-1"}, "spec": {"replicas": 2}, "status": {"replicas": 2}}
    d["status"] = {
        "replicas": 2,
        "updatedReplicas": 2,
        "observedGeneration": 1,
        "conditions": [du.new_condition("Progressing", "True", du.RS_UPDATED, "x", NOW)],
    }
    st = du.rollout_status([new], new, d, NOW + 599)
    assert du.get_condition(st, "Progressing")["reason"] == du.RS_UPDATED
    st = du.rollout_status([new], new, d, NOW + 601)
    assert du.get_condition(st, "Progressing") | {} == {
        **du.new_condition(
            "Progressing", "False", du.TIMED_OUT, 'ReplicaSet "d-1" has timed out progressing.', NOW + 601
        )
    }


def _pod(
    name: str,
    node: str = "n1",
    phase: str = "Running",
    ready_at: float | None = None,
    created: float = NOW - 100,
    cost: int | None = None,
    restarts: int = 0,
) -> dict:
    st: dict = {"phase": phase, "containerStatuses": [{"restartCount": restarts}]}
    if ready_at is not None:
        st["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": meta.rfc3339(ready_at)}]
    m: dict = {"name": name, "uid": name, "creationTimestamp": meta.rfc3339(created)}
    if cost is not None:
        m["annotations"] = {rsc.DELETION_COST: str(cost)}
    return {"metadata": m, "spec": {"nodeName": node}, "status": st}


def test_deletion_ranking_follows_upstream_order():
    pods = [
        _pod("ready-old", ready_at=NOW - 10_000),
        _pod("ready-recent", ready_at=NOW - 10),
        _pod("unassigned", node="", phase="Pending"),
        _pod("pending", phase="Pending"),
        _pod("not-ready"),
        _pod("cheap", ready_at=NOW - 10_000, cost=-5),
        _pod("restarty", ready_at=NOW - 10_000, restarts=3, created=NOW - 100),
    ]
    order = [p["metadata"]["name"] for p in rsc.rank_for_deletion(pods, {}, NOW)]
    assert order[:5] == ["unassigned", "pending", "not-ready", "cheap", "ready-recent"]
    assert order[5:] == ["restarty", "ready-old"]


def test_doubled_up_pods_go_first():
    a, b = _pod("a", node="n1", ready_at=NOW - 50), _pod("b", node="n2", ready_at=NOW - 50)
    ranks = rsc.same_node_ranks([a, b], [a, b, _pod("sibling", node="n2")])
    assert ranks == {"a": 1, "b": 2}
    assert [p["metadata"]["name"] for p in rsc.rank_for_deletion([a, b], ranks, NOW)] == ["b", "a"]


def test_replicaset_status_counts_and_min_ready_seconds():
    rs = {
        "metadata": {"generation": 2},
        "spec": {"minReadySeconds": 30, "template": {"metadata": {"labels": {"a": "b"}}}},
        "status": {"observedGeneration": 1},
    }
    fresh, old = _pod("fresh", ready_at=NOW - 5), _pod("old", ready_at=NOW - 60)
    old["metadata"]["labels"] = fresh["metadata"]["labels"] = {"a": "b"}
    st = rsc.calculate_status(rs, [fresh, old, _pod("unready")], [_pod("gone")], NOW)
    assert st == {
        "replicas": 3,
        "fullyLabeledReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 1,
        "observedGeneration": 1,
        "terminatingReplicas": 1,
    }


def test_pod_from_template():
    rs = {
        "metadata": {"name": "web-abc", "namespace": "ns", "uid": "u1"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"x": "y"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            }
        },
    }
    pod = rsc.pod_from_template(rs)
    assert pod["metadata"] == {
        "generateName": "web-abc-",
        "namespace": "ns",
        "labels": {"app": "web"},
        "annotations": {"x": "y"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-abc",
                "uid": "u1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert pod["spec"] == rs["spec"]["template"]["spec"]


# --- device taints ------------------------------------------------------------------------------

TAINT = {"key": "k", "value": "v", "effect": "NoExecute", "timeAdded": meta.rfc3339(NOW)}


def _claim(tolerations: list[dict] | None = None) -> dict:
    res: dict = {"driver": "drv", "pool": "p", "device": "d0"}
    if tolerations is not None:
        res["tolerations"] = tolerations
    return {"metadata": {"name": "c", "namespace": "ns"}, "status": {"allocation": {"devices": {"results": [res]}}}}


def _devices(driver: str, pool: str) -> dict:
    return {"d0": {"name": "d0", "taints": [TAINT]}} if (driver, pool) == ("drv", "p") else {}


def _stamp(taint: dict, ident: tuple) -> float:
    return meta.parse_time(taint["timeAdded"])


@pytest.mark.parametrize(
    "tolerations,want",
    [
        (None, NOW),
        ([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}], NOW + 30),
        (
            [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
            ],
            NOW + 10,
        ),
        ([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}], NOW),
        ([{"key": "k", "operator": "Equal", "value": "other", "effect": "NoExecute"}], NOW),
        ([{"key": "k", "operator": "Exists"}], NOW),  # upstream counts only tolerations naming NoExecute
        ([{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}], None),
    ],
)
def test_claim_eviction_time_from_tolerations(tolerations, want):
    ev = dt.claim_eviction(_claim(tolerations), _devices, [], _stamp)
    assert (ev.when if ev else None) == want
    if ev:
        assert ev.reasons == [dt.Reason(driver="drv", pool="p", device="d0", index=0)]


def test_rules_select_by_driver_pool_device_and_none_without_selector():
    rule = {"metadata": {"name": "r", "uid": "u"}, "spec": {"taint": dict(TAINT)}}
    assert not dtaints.rule_selects(rule, "drv", "p", "d0")
    rule["spec"]["deviceSelector"] = {}
    assert dtaints.rule_selects(rule, "drv", "p", "d0")
    rule["spec"]["deviceSelector"] = {"driver": "drv", "device": "d1"}
    assert not dtaints.rule_selects(rule, "drv", "p", "d0")
    rule["spec"]["deviceSelector"] = {"pool": "p"}
    ev = dt.claim_eviction(_claim(), lambda drv, pool: {}, [rule], _stamp)
    assert ev.when == NOW and ev.reasons == [dt.Reason(rule="r", uid="u")]


def test_pool_devices_use_the_newest_generation_only():
    def sl(gen: int, dev: str) -> dict:
        return {"spec": {"driver": "drv", "pool": {"name": "p", "generation": gen}, "devices": [{"name": dev}]}}

    assert set(dt.pool_devices([sl(1, "old"), sl(2, "new")], "drv", "p")) == {"new"}


def test_pod_claim_names_cover_templates_and_extended_resources():
    pod = {
        "metadata": {"uid": "u"},
        "spec": {
            "resourceClaims": [
                {"name": "a", "resourceClaimName": "direct"},
                {"name": "b", "resourceClaimTemplateName": "t"},
                {"name": "c", "resourceClaimTemplateName": "t"},
            ]
        },
        "status": {
            "resourceClaimStatuses": [{"name": "b", "resourceClaimName": "pod-b-xyz"}],
            "extendedResourceClaimStatus": {"resourceClaimName": "pod-extended-resources-abc"},
        },
    }
    assert dt.pod_claim_names(pod) == [("direct", False), ("pod-b-xyz", True), ("pod-extended-resources-abc", True)]


@pytest.mark.parametrize(
    "pending,namespaces,evicted,want",
    [
        (2, 1, 0, ("True", "PodsPendingEviction", "2 pods need to be evicted in 1 namespace.")),
        (
            1,
            3,
            4,
            (
                "True",
                "PodsPendingEviction",
                "1 pod needs to be evicted in 3 different namespaces. 4 pods evicted since starting the controller.",
            ),
        ),
        (0, 0, 1, ("False", "Completed", "1 pod evicted since starting the controller.")),
        (0, 0, 0, ("False", "NotStarted", "")),
    ],
)
def test_rule_condition_wording(pending, namespaces, evicted, want):
    rule = {"metadata": {"generation": 3}, "spec": {"taint": {"effect": "NoExecute"}}}
    c = dt.rule_condition(rule, pending, namespaces, evicted)
    assert (c["status"], c["reason"], c["message"]) == want and c["observedGeneration"] == 3
