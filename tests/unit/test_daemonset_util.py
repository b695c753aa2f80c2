"""Pure DaemonSet decisions (upstream pkg/controller/daemon)."""

from __future__ import annotations

from mockkube.controllers import daemonset_util as du


def node(name: str, labels: dict | None = None, taints: list | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def ds(spec_extra: dict | None = None, strategy: dict | None = None, gen: int = 1) -> dict:
    tpl_spec = {"containers": [{"name": "c", "image": "x"}], **(spec_extra or {})}
    d = {
        "metadata": {"name": "d", "namespace": "ns", "uid": "u1", "generation": gen},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": tpl_spec},
        },
    }
    if strategy is not None:
        d["spec"]["updateStrategy"] = strategy
    return d


def pod(name: str, node_name: str, hash_: str, ready: bool = True, since: str = "2020-01-01T00:00:00Z") -> dict:
    cond = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": since}
    return {
        "metadata": {
            "name": name,
            "uid": name,
            "labels": {du.REVISION_HASH: hash_},
            "creationTimestamp": "2020-01-01T00:00:00Z",
        },
        "spec": {"nodeName": node_name},
        "status": {"phase": "Running", "conditions": [cond]},
    }


def test_taints_selectors_and_default_tolerations():
    d = ds({"nodeSelector": {"os": "linux"}})
    assert du.node_should_run(node("n", {"os": "linux"}), d) == (True, True)
    assert du.node_should_run(node("n", {"os": "windows"}), d) == (False, False)
    no_sched = {"key": "gpu", "value": "x", "effect": "NoSchedule"}
    no_exec = {"key": "gpu", "value": "x", "effect": "NoExecute"}
    linux = {"os": "linux"}
    assert du.node_should_run(node("n", linux, [no_sched]), d) == (False, True)  # keeps running
    assert du.node_should_run(node("n", linux, [no_exec]), d) == (False, False)
    # what every daemon pod tolerates: an unschedulable or not-ready node still runs it
    for key, effect in (
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    ):
        assert du.node_should_run(node("n", linux, [{"key": key, "effect": effect}]), d) == (True, True)
    tol = ds({"tolerations": [{"key": "gpu", "operator": "Exists"}]})
    assert du.node_should_run(node("n", {}, [no_exec]), tol) == (True, True)


def test_daemon_pod_is_pinned_with_affinity_and_labelled_with_the_revision():
    d = ds(
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Exists"}]}}
                    ]
                }
            },
            "hostNetwork": True,
        }
    )
    p = du.daemon_pod(d, "node-1", "abc")
    assert p["metadata"]["generateName"] == "d-"
    assert p["metadata"]["labels"] == {"a": "b", du.REVISION_HASH: "abc", du.TEMPLATE_GENERATION: "1"}
    na = p["spec"]["affinity"]["nodeAffinity"]
    assert na["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]
    }
    assert na["preferredDuringSchedulingIgnoredDuringExecution"]  # kept
    keys = {(t["key"], t["effect"]) for t in p["spec"]["tolerations"]}
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") in keys and len(keys) == 7
    assert du.pod_node({"spec": p["spec"]}) == "node-1"
    assert p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"


def test_plan_creates_missing_deletes_extra_failed_and_misplaced():
    d = ds()
    nodes = [node("a"), node("b"), node("c", taints=[{"key": "x", "effect": "NoExecute"}])]
    failed = pod("f", "b", "h")
    failed["status"]["phase"] = "Failed"
    older, newer = pod("p1", "a", "h"), pod("p2", "a", "h")
    newer["metadata"]["creationTimestamp"] = "2021-01-01T00:00:00Z"
    plan = du.plan_nodes(
        d, nodes, {"a": [older, newer], "b": [failed], "c": [pod("pc", "c", "h")], "gone": [pod("pg", "gone", "h")]}
    )
    assert plan.create == []  # b's failed pod is deleted first, replaced on the next sync
    assert {p["metadata"]["name"] for p in plan.delete} == {"p2", "f", "pc", "pg"}
    assert du.plan_nodes(d, nodes, {}).create == ["a", "b"]


def test_rolling_update_respects_max_unavailable_and_surge():
    nodes = [node(f"n{i}") for i in range(4)]
    old = {f"n{i}": [pod(f"o{i}", f"n{i}", "old")] for i in range(4)}
    d = ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    plan = du.rolling_update(d, nodes, old, "new", now=2e9)
    assert len(plan.delete) == 2 and plan.create == []
    surge = ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}})
    plan = du.rolling_update(surge, nodes, old, "new", now=2e9)
    assert plan.delete == [] and len(plan.create) == 2  # new pods first, two at a time
    both = dict(old)
    both["n0"] = old["n0"] + [pod("new0", "n0", "new")]
    plan = du.rolling_update(surge, nodes, both, "new", now=2e9)
    assert [p["metadata"]["name"] for p in plan.delete] == ["o0"]  # the new pod is available: old one goes
    assert du.rolling_update(ds(strategy={"type": "OnDelete"}), nodes, old, "new", now=2e9).delete == []


def test_status_counts():
    d = ds()
    nodes = [node("a"), node("b"), node("c", taints=[{"key": "x", "effect": "NoSchedule"}])]
    st = du.status(
        d,
        nodes,
        {"a": [pod("p", "a", "h")], "b": [pod("q", "b", "old", ready=False)], "c": [pod("r", "c", "h")]},
        "h",
        now=2e9,
    )
    assert st == {
        "currentNumberScheduled": 2,
        "numberMisscheduled": 1,
        "desiredNumberScheduled": 2,
        "numberReady": 1,
        "observedGeneration": 1,
        "updatedNumberScheduled": 1,
        "numberAvailable": 1,
        "numberUnavailable": 1,
    }
