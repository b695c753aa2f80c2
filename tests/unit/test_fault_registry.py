"""The fault registry: validation, scoping, seeded probability, count and end time."""

from __future__ import annotations

import pytest

from mockkube.machinery.faults import FaultError, Faults


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fire(faults: Faults, verb="create", resource="pods", sub="", ns="default", user="admin", resumes=False):
    return [f.id for f in faults.match_api(verb, resource, sub, ns, user, resumes)]


def test_scopes_match_verbs_resources_namespaces_and_users():
    faults = Faults(Clock())
    f = faults.add(
        {
            "kind": "error",
            "code": 503,
            "verbs": ["create"],
            "resources": ["pods"],
            "namespaces": ["team-a"],
            "users": ["alice"],
        }
    )
    assert fire(faults, ns="team-a", user="alice") == [f.id]
    assert fire(faults, ns="team-b", user="alice") == []
    assert fire(faults, ns="team-a", user="bob") == []
    assert fire(faults, verb="get", ns="team-a", user="alice") == []
    assert fire(faults, resource="configmaps", ns="team-a", user="alice") == []
    g = faults.add({"kind": "error", "resources": ["pods/status"]})
    assert fire(faults, resource="pods", sub="status", ns="x") == [g.id]
    assert fire(faults, resource="pods", ns="x") == []


def test_seeded_probability_is_reproducible():
    def run(seed):
        faults = Faults(Clock())
        faults.add({"kind": "error", "code": 500, "probability": 0.5, "seed": seed})
        return [bool(fire(faults)) for _ in range(40)]

    assert run(7) == run(7)
    assert run(7) != run(8)
    assert 5 < sum(run(7)) < 35


def test_count_and_duration_end_a_fault():
    clock = Clock()
    faults = Faults(clock)
    faults.add({"kind": "error", "code": 429, "count": 2})
    assert [bool(fire(faults)) for _ in range(3)] == [True, True, False]
    assert faults.list() == []
    f = faults.add({"kind": "latency", "delaySeconds": 0.1, "durationSeconds": 30})
    assert faults.list()[0]["remainingSeconds"] == 30 and faults.list()[0]["kind"] == "latency"
    clock.now += 29
    assert fire(faults) == [f.id]
    clock.now += 1
    assert fire(faults) == [] and faults.list() == []


def test_watch_faults_only_on_watches_and_gone_only_on_resume():
    faults = Faults(Clock())
    d = faults.add({"kind": "drop-watch", "afterSeconds": 1})
    g = faults.add({"kind": "gone"})
    assert fire(faults, verb="list") == []
    assert fire(faults, verb="watch") == [d.id]
    assert fire(faults, verb="watch", resumes=True) == [d.id, g.id]


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"kind": "explode"}, "kind"),
        ({"kind": "error", "code": 418}, "code"),
        ({"kind": "error", "probability": 2}, "probability"),
        ({"kind": "latency", "delaySeconds": -1}, "delaySeconds"),
        ({"kind": "error", "verbs": [3]}, "verbs"),
        ({"kind": "error", "count": 0}, "count"),
        ({"kind": "node-notready"}, "node"),
        ({"kind": "device-unhealthy", "driver": "gpu.example.com", "pool": "n"}, "device"),
    ],
)
def test_bad_specs_name_the_field(spec, field):
    with pytest.raises(FaultError, match=f"^{field}:"):
        Faults(Clock()).add(spec)


def test_429_gets_retry_after_and_clear_removes_everything():
    faults = Faults(Clock())
    faults.add({"kind": "error", "code": 429})
    faults.add({"kind": "latency"})
    [a, b] = faults.list()
    assert a["retryAfterSeconds"] == 1 and b["delaySeconds"] == 1.0
    assert faults.clear() == 2 and faults.list() == []


def test_cluster_faults_need_the_node_simulation_and_are_undone():
    faults = Faults(Clock())
    with pytest.raises(FaultError, match="node simulation"):
        faults.add({"kind": "node-notready", "node": "n1"})
    applied, reverted = [], []
    faults.on_apply, faults.on_revert = applied.append, reverted.append
    f = faults.add({"kind": "node-notready", "node": "n1"})
    assert applied == [f] and reverted == []
    faults.clear()
    assert reverted == [f]
    r = faults.add({"kind": "kubelet-restart", "node": "n1"})
    assert applied[-1] is r and reverted[-1] is r and faults.list() == []


def test_claim_faults_match_claims_and_devices():
    faults = Faults(Clock())
    faults.on_apply = faults.on_revert = lambda f: None
    f = faults.add({"kind": "prepare-failure", "claims": ["default/c1"]})
    claim = {"metadata": {"namespace": "default", "name": "c1"}}
    other = {"metadata": {"namespace": "default", "name": "c2"}}
    assert faults.match_claim("prepare-failure", "gpu.example.com", claim, []) is f
    assert faults.match_claim("prepare-failure", "gpu.example.com", other, []) is None
    g = faults.add({"kind": "unprepare-failure", "devices": ["gpu-1"]})
    assert faults.match_claim("unprepare-failure", "gpu.example.com", other, [("gpu.example.com", "n", "gpu-1")]) is g
    assert (
        faults.match_claim("unprepare-failure", "gpu.example.com", other, [("gpu.example.com", "n", "gpu-2")]) is None
    )
