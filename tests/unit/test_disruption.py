"""PodDisruptionBudget arithmetic (pure): desired healthy from minAvailable/maxUnavailable,
disruptedPods pruning, and the eviction verdict."""

from __future__ import annotations

import pytest

from mockkube.machinery import errors
from mockkube.rules import disruption


def _pod(name: str, ready: bool = True, deleting: bool = False) -> dict:
    m = {"name": name, "namespace": "d", "labels": {"app": "a"}}
    if deleting:
        m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": m, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def _pdb(**spec) -> dict:
    return {
        "metadata": {"name": "b", "namespace": "d", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, **spec},
    }


@pytest.mark.parametrize(
    "spec,expected,desired,allowed",
    [
        ({"minAvailable": 1}, 4, 1, 1),
        ({"minAvailable": 2}, 4, 2, 0),
        ({"minAvailable": "25%"}, 4, 1, 1),
        ({"minAvailable": "60%"}, 4, 3, 0),  # rounded up
        ({"maxUnavailable": 3}, 4, 1, 1),
        ({"maxUnavailable": "60%"}, 4, 1, 1),  # 4 - ceil(2.4)
    ],
)
def test_compute_status(spec, expected, desired, allowed):
    pods = [_pod("a"), _pod("b"), _pod("c", ready=False), _pod("d", deleting=True)]
    st = disruption.compute_status(_pdb(**spec), pods, expected, "2026-01-01T00:00:00Z")
    assert (st["currentHealthy"], st["desiredHealthy"], st["disruptionsAllowed"], st["expectedPods"]) == (
        3 - 1,
        desired,
        allowed,
        expected,
    )
    assert st["conditions"][0]["reason"] == ("SufficientPods" if allowed else "InsufficientPods")


def test_disrupted_pods_count_as_unhealthy_until_gone():
    pdb = _pdb(minAvailable=1)
    pdb["status"] = {"disruptedPods": {"a": "t", "gone": "t"}}
    st = disruption.compute_status(pdb, [_pod("a"), _pod("b")], 2, "t")
    assert st["disruptedPods"] == {"a": "t"} and st["currentHealthy"] == 1 and st["disruptionsAllowed"] == 0


def test_eviction_verdicts():
    pdb = _pdb(minAvailable=1)
    pdb["status"] = {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1}
    assert disruption.check_eviction(pdb, _pod("a"))["disruptionsAllowed"] == 0
    pdb["status"]["disruptionsAllowed"] = 0
    with pytest.raises(errors.APIError) as ei:
        disruption.check_eviction(pdb, _pod("a"))
    assert ei.value.code == 429 and "Retry-After" not in ei.value.headers
    assert disruption.check_eviction(pdb, _pod("x", ready=False)) is None  # healthy budget: unready pods go
    pdb["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    pdb["status"]["currentHealthy"] = 0
    assert disruption.check_eviction(pdb, _pod("x", ready=False)) is None
