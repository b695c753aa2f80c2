"""Pure Job decisions (upstream pkg/controller/job)."""

from __future__ import annotations

from mockkube.controllers import job_util as ju


def job(**spec) -> dict:
    return {"metadata": {"name": "j", "namespace": "ns", "uid": "u"},
            "spec": {"template": {"metadata": {"labels": {"job-name": "j"}},
                                  "spec": {"subdomain": "svc", "containers": [{"name": "c", "image": "x"}]}}, **spec}}


def test_completed_indexes_round_trip_in_interval_form():
    assert ju.format_indexes({0, 1, 2, 4, 6, 7}) == "0-2,4,6-7"
    assert ju.parse_indexes("0-2,4,6-7") == {0, 1, 2, 4, 6, 7}
    assert ju.parse_indexes("") == set() and ju.format_indexes(set()) == ""


def test_indexed_pods_carry_their_index_everywhere_upstream_puts_it():
    p = ju.job_pod(job(completionMode="Indexed"), 3)
    m = p["metadata"]
    assert m["generateName"] == "j-3-" and m["annotations"][ju.INDEX_ANNOTATION] == "3"
    assert m["labels"][ju.INDEX_LABEL] == "3" and ju.TRACKING_FINALIZER in m["finalizers"]
    assert p["spec"]["hostname"] == "j-3"
    env = p["spec"]["containers"][0]["env"]
    assert env == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]
    assert ju.pod_index(p) == 3
    plain = ju.job_pod(job(), None)
    assert plain["metadata"]["generateName"] == "j-" and "annotations" not in plain["metadata"]


def failed_pod(code: int, conditions: list | None = None) -> dict:
    return {"metadata": {"name": "p", "namespace": "ns"},
            "status": {"phase": "Failed", "conditions": conditions or [],
                       "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": code}}}]}}


def test_pod_failure_policy_rules_in_order():
    j = job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0, 42]}}]})
    action, msg = ju.failure_policy_action(j, failed_pod(42))
    assert action == "FailJob"
    assert msg == "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    assert ju.failure_policy_action(j, failed_pod(1))[0] == "Count"
    assert ju.failure_policy_action(j, failed_pod(1, [{"type": "DisruptionTarget", "status": "True"}]))[0] == "Ignore"
    assert ju.failure_policy_action(job(), failed_pod(1)) == (None, "")
