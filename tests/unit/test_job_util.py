"""Pure Job decisions (upstream pkg/controller/job)."""

from __future__ import annotations

from mockkube.controllers import job_util as ju
from mockkube.controllers.ttlafterfinished import expire_at


def job(**spec) -> dict:
    return {
        "metadata": {"name": "j", "namespace": "ns", "uid": "u"},
        "spec": {
            "template": {
                "metadata": {"labels": {"job-name": "j"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
            **spec,
        },
    }


def test_indexes_round_trip_in_upstream_interval_form():
    # orderedIntervals.String: a pair is "a,b", three or more "a-b"
    assert ju.format_indexes({0, 1, 2, 4, 6, 7}) == "0-2,4,6,7"
    assert ju.parse_indexes("0-2,4,6,7") == {0, 1, 2, 4, 6, 7}
    assert ju.parse_indexes("") == set() and ju.format_indexes(set()) == ""
    # parseIndexesFromString: capped at completions, bad parts skipped
    assert ju.parse_indexes("1,x,3-9", 5) == {1, 3, 4}
    assert ju.parse_indexes("7-9", 5) == set()


def test_indexed_pods_carry_their_index_everywhere_upstream_puts_it():
    p = ju.job_pod(job(completionMode="Indexed", completions=4), 3)
    m = p["metadata"]
    assert m["generateName"] == "j-3-" and m["annotations"][ju.INDEX_ANNOTATION] == "3"
    assert m["labels"][ju.INDEX_LABEL] == "3" and m["finalizers"] == [ju.TRACKING_FINALIZER]
    assert p["spec"]["hostname"] == "j-3"
    env = p["spec"]["containers"][0]["env"]
    assert env == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}},
        }
    ]
    assert ju.pod_index(p) == 3
    plain = ju.job_pod(job(), None)
    assert plain["metadata"]["generateName"] == "j-" and "annotations" not in plain["metadata"]
    long = "x" * 60
    assert ju.generate_name(long, 12) == "x" * 54 + "-12-"


def failed_pod(code: int, conditions: list | None = None, anns: dict | None = None, name: str = "p") -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": name,
            "annotations": anns or {},
            "creationTimestamp": "2030-01-01T00:00:00Z",
        },
        "status": {
            "phase": "Failed",
            "conditions": conditions or [],
            "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": code, "finishedAt": "2030-01-01T00:00:10Z"}}}
            ],
        },
    }


def test_pod_failure_policy_rules_in_order():
    j = job(
        podFailurePolicy={
            "rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
                {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0, 42]}},
            ]
        }
    )
    msg, counts, action = ju.failure_policy_match(j, failed_pod(42))
    assert (counts, action) == (True, "FailJob")
    assert msg == "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    assert ju.failure_policy_match(j, failed_pod(1)) == (None, True, "Count")
    assert ju.failure_policy_match(j, failed_pod(1, [{"type": "DisruptionTarget", "status": "True"}])) == (
        None,
        False,
        "Ignore",
    )
    assert ju.failure_policy_match(job(), failed_pod(1)) == (None, True, None)
    # exit code 0 never matches, even NotIn
    notin = job(
        podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [1]}}]}
    )
    assert ju.failure_policy_match(notin, failed_pod(0)) == (None, True, None)


def test_deleted_pods_count_as_failed_unless_only_failed_pods_are_replaced():
    running = {"metadata": {"name": "p", "deletionTimestamp": "2030-01-01T00:00:00Z"}, "status": {"phase": "Running"}}
    assert ju.is_pod_failed(running, job())
    assert not ju.is_pod_failed(running, job(podReplacementPolicy="Failed"))
    assert not ju.is_pod_failed(running, job(podFailurePolicy={"rules": []}))


def test_backoff_limit_per_index_counts_and_fail_index():
    j = job(completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    first = failed_pod(1, anns={ju.INDEX_ANNOTATION: "0", ju.INDEX_FAILURE_COUNT: "0"})
    assert not ju.is_index_failed(j, first)  # one failure of a limit of 1: retried
    assert ju.new_index_failure_counts(j, first) == (1, 0)
    second = failed_pod(1, anns={ju.INDEX_ANNOTATION: "0", ju.INDEX_FAILURE_COUNT: "1"})
    assert ju.is_index_failed(j, second)
    replacement = ju.job_pod(j, 0, first)
    assert replacement["metadata"]["annotations"][ju.INDEX_FAILURE_COUNT] == "1"
    fail_index = job(
        completionMode="Indexed",
        completions=3,
        backoffLimitPerIndex=5,
        podFailurePolicy={"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [7]}}]},
    )
    assert ju.is_index_failed(fail_index, failed_pod(7, anns={ju.INDEX_ANNOTATION: "1"}))
    ignored = job(
        completionMode="Indexed",
        completions=3,
        backoffLimitPerIndex=5,
        podFailurePolicy={"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [7]}}]},
    )
    assert ju.new_index_failure_counts(ignored, failed_pod(7, anns={ju.INDEX_FAILURE_COUNT: "2"})) == (2, 1)


def test_success_policy_rules():
    j = job(
        completionMode="Indexed",
        completions=10,
        successPolicy={
            "rules": [
                {"succeededIndexes": "0-2"},
                {"succeededCount": 5},
                {"succeededIndexes": "5-9", "succeededCount": 2},
            ]
        },
    )
    assert ju.match_success_policy(j, {0, 1}) is None
    assert ju.match_success_policy(j, {0, 1, 2}) == "Matched rules at index 0"
    assert ju.match_success_policy(j, {3, 4, 5}) is None
    assert ju.match_success_policy(j, {6, 7}) == "Matched rules at index 2"
    assert ju.match_success_policy(j, {0, 3, 4, 5, 7}) == "Matched rules at index 1"
    assert ju.match_success_policy(job(), {0}) is None


def test_backoff_doubles_from_ten_seconds_to_six_minutes_and_resets_on_success():
    assert ju.remaining_backoff(0, None, 100) == 0
    assert ju.remaining_backoff(1, 100, 104) == 6
    assert ju.remaining_backoff(3, 100, 100) == 40
    assert ju.remaining_backoff(20, 100, 100) == 360
    assert ju.remaining_backoff(1, 100, 200) == 0
    f1 = failed_pod(1, name="a")
    rec = ju.next_backoff_record((0, None), [], [f1])
    assert rec[0] == 1 and rec[1] is not None
    ok = {
        "metadata": {"name": "s"},
        "status": {
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": 0, "finishedAt": "2030-01-01T00:01:00Z"}}}
            ],
        },
    }
    assert ju.next_backoff_record(rec, [ok], []) == (0, None)


def test_restarts_of_on_failure_pods_count_against_the_backoff_limit():
    j = job(backoffLimit=2)
    j["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    pod = {"status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 2}]}}
    assert ju.past_backoff_limit_on_failure(j, [pod])
    pod["status"]["containerStatuses"][0]["restartCount"] = 1
    assert not ju.past_backoff_limit_on_failure(j, [pod])


def test_conditions_are_ensured_as_upstream():
    st: dict = {}
    assert not ju.ensure_condition(st, "Suspended", "False", "JobResumed", "Job resumed", 0)  # never add False
    assert ju.ensure_condition(st, "Suspended", "True", "JobSuspended", "Job suspended", 0)
    assert not ju.ensure_condition(st, "Suspended", "True", "JobSuspended", "Job suspended", 5)
    assert ju.ensure_condition(st, "Suspended", "False", "JobResumed", "Job resumed", 9)
    assert st["conditions"][0]["status"] == "False" and st["conditions"][0]["lastTransitionTime"].endswith(":09Z")


def test_ttl_counts_from_the_finishing_condition():
    j = job(ttlSecondsAfterFinished=30)
    assert expire_at(j) is None
    j["status"] = {"conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": "2030-01-01T00:00:00Z"}]}
    assert expire_at(j) == ju.finish_time(j) + 30
