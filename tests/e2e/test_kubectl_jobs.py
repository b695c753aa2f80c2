"""Jobs as kubectl and the Python client use them: pods run to completion by default,
`kubectl wait --for=condition=complete`, Indexed jobs, a failing job reaching its backoff
limit on the cluster clock, a pod failure policy, suspend and ttlSecondsAfterFinished."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

pytestmark = pytest.mark.e2e


def job_yaml(name: str, extra: str = "", annotations: str = "", policy: str = "Never", command: str = "") -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
{extra}
  template:
    metadata: {{annotations: {{{annotations}}}}}
    spec:
      restartPolicy: {policy}
      containers: [{{name: main, image: busybox{command}}}]
"""


def test_a_job_completes_and_kubectl_waits_for_it(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("create", "job", "hello", "-n", ns, "--image=busybox", "--", "echo", "hi")
    c.kubectl("wait", "-n", ns, "--for=condition=complete", "job/hello", "--timeout=30s")
    row = c.kubectl("get", "job", "hello", "-n", ns).stdout.split("\n")[1].split()
    assert row[:3] == ["hello", "Complete", "1/1"]
    pod = json.loads(c.kubectl("get", "pods", "-n", ns, "-l", "job-name=hello", "-o", "json").stdout)["items"][0]
    assert pod["status"]["phase"] == "Succeeded" and "batch.kubernetes.io/job-tracking" not in pod["metadata"].get(
        "finalizers", []
    )
    events = c.kubectl("get", "events", "-n", ns, "--field-selector", "involvedObject.name=hello").stdout
    assert "SuccessfulCreate" in events and "Completed" in events
    assert c.kubectl("logs", "-n", ns, "job/hello").stdout == "hi\n"  # what `echo hi` prints
    conds = [
        x["type"]
        for x in json.loads(c.kubectl("get", "job", "hello", "-n", ns, "-o", "json").stdout)["status"]["conditions"]
    ]
    assert conds == ["SuccessCriteriaMet", "Complete"]


def test_indexed_job_with_parallelism(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=job_yaml(
            "idx",
            "  completions: 4\n  parallelism: 2\n  completionMode: Indexed",
            command=", command: [sh, -c, 'echo index $JOB_COMPLETION_INDEX']",
        ),
    )
    done = c.wait_for("job", "idx", "Complete", ns)
    assert done["status"]["completedIndexes"] == "0-3" and done["status"]["succeeded"] == 4
    names = c.kubectl(
        "get",
        "pods",
        "-n",
        ns,
        "-o",
        "jsonpath={.items[*].metadata.labels.batch\\.kubernetes\\.io/job-completion-index}",
    ).stdout
    assert sorted(names.split()) == ["0", "1", "2", "3"]
    pods = json.loads(c.kubectl("get", "pods", "-n", ns, "-o", "json").stdout)["items"]
    assert sorted(p["spec"]["hostname"] for p in pods) == ["idx-0", "idx-1", "idx-2", "idx-3"]
    for p in pods:  # each pod's command sees its own JOB_COMPLETION_INDEX
        index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        assert c.kubectl("logs", "-n", ns, p["metadata"]["name"]).stdout == f"index {index}\n"


@pytest.mark.mockkube(frozen_clock=True)
def test_a_failing_job_backs_off_on_the_clock_and_fails(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=job_yaml("bad", "  backoffLimit: 1", '"mockkube.io/exit-after": "1s", "mockkube.io/exit-code": "3"'),
    )
    c.wait_for("job", "bad", lambda j: (j.get("status") or {}).get("ready") == 1, ns)  # its pod runs
    c.clock.advance(timedelta(seconds=2))  # the first pod exits 3; the next waits out a 10 s back-off
    c.wait_for("job", "bad", lambda j: (j.get("status") or {}).get("failed") == 1, ns)
    assert not (c.get("job", "bad", ns)["status"].get("active"))
    c.clock.advance(timedelta(seconds=10))
    c.wait_for("job", "bad", lambda j: (j.get("status") or {}).get("ready") == 1, ns)  # its pod runs
    c.clock.advance(timedelta(seconds=2))
    failed = c.wait_for("job", "bad", "Failed", ns)
    reasons = {x["type"]: x["reason"] for x in failed["status"]["conditions"]}
    assert reasons == {"FailureTarget": "BackoffLimitExceeded", "Failed": "BackoffLimitExceeded"}
    assert failed["status"]["failed"] == 2


def test_pod_failure_policy_fails_the_job_at_once(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=job_yaml(
            "pfp",
            "  backoffLimit: 6\n  podFailurePolicy:\n    rules:\n    - action: FailJob\n"
            "      onExitCodes: {operator: In, values: [42]}",
            '"mockkube.io/exit-code": "42"',
        ),
    )
    failed = c.wait_for("job", "pfp", "Failed", ns)
    cond = next(x for x in failed["status"]["conditions"] if x["type"] == "Failed")
    assert cond["reason"] == "PodFailurePolicy" and "exit code 42 matching FailJob rule at index 0" in cond["message"]


def test_suspend_resume_and_ttl(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=job_yaml("later", "  suspend: true\n  ttlSecondsAfterFinished: 0"))
    suspended = c.wait_for("job", "later", "Suspended", ns)
    assert "active" not in suspended["status"]
    assert c.kubectl("get", "pods", "-n", ns, "-o", "name").stdout == ""
    c.kubectl("patch", "job", "later", "-n", ns, "-p", '{"spec":{"suspend":false}}')
    c.wait_for("job", "later", "deleted", ns)  # completed, then removed by its TTL of 0


def test_the_python_client_reads_a_completed_job(mockkube, mockkube_namespace, mockkube_api_client):
    from kubernetes import client

    batch = client.BatchV1Api(mockkube_api_client)
    body = client.V1Job(
        metadata=client.V1ObjectMeta(name="py"),
        spec=client.V1JobSpec(
            template=client.V1PodTemplateSpec(
                spec=client.V1PodSpec(
                    restart_policy="OnFailure", containers=[client.V1Container(name="c", image="busybox")]
                )
            )
        ),
    )
    batch.create_namespaced_job(mockkube_namespace, body)
    mockkube.wait_for("job", "py", "Complete", mockkube_namespace)
    got = batch.read_namespaced_job_status("py", mockkube_namespace)
    assert got.status.succeeded == 1 and got.status.completion_time is not None


@pytest.mark.mockkube(frozen_clock=True)
def test_backoff_limit_per_index_with_kubectl(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=job_yaml(
            "per",
            "  completions: 2\n  parallelism: 2\n  completionMode: Indexed\n  backoffLimitPerIndex: 0",
            '"mockkube.io/exit-code": "1"',
        ),
    )
    c.wait_for("job", "per", lambda j: (j.get("status") or {}).get("ready") == 2, ns)
    c.clock.advance(timedelta(seconds=2))  # both indexes fail once: a limit of 0 fails them
    failed = c.wait_for("job", "per", "Failed", ns)
    assert failed["status"]["failedIndexes"] == "0,1" and failed["status"]["failed"] == 2
    cond = next(x for x in failed["status"]["conditions"] if x["type"] == "Failed")
    assert (cond["reason"], cond["message"]) == ("FailedIndexes", "Job has failed indexes")
    row = c.kubectl("get", "job", "per", "-n", ns).stdout.split("\n")[1].split()
    assert row[:3] == ["per", "Failed", "0/2"]


def test_the_python_client_drives_a_cronjob(mockkube, mockkube_namespace, mockkube_api_client):
    from kubernetes import client

    batch = client.BatchV1Api(mockkube_api_client)
    body = client.V1CronJob(
        metadata=client.V1ObjectMeta(name="pycron"),
        spec=client.V1CronJobSpec(
            schedule="*/1 * * * *",
            job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(
                    template=client.V1PodTemplateSpec(
                        spec=client.V1PodSpec(
                            restart_policy="OnFailure", containers=[client.V1Container(name="c", image="busybox")]
                        )
                    )
                )
            ),
        ),
    )
    made = batch.create_namespaced_cron_job(mockkube_namespace, body)
    assert made.spec.concurrency_policy == "Allow" and made.spec.successful_jobs_history_limit == 3
    mockkube.clock.advance(timedelta(minutes=1))
    done = mockkube.wait_for(
        "cronjob", "pycron", lambda o: (o.get("status") or {}).get("lastSuccessfulTime"), mockkube_namespace, timeout=30
    )
    got = batch.read_namespaced_cron_job_status("pycron", mockkube_namespace)
    assert got.status.last_schedule_time is not None and done["status"]["lastScheduleTime"]
    jobs = batch.list_namespaced_job(mockkube_namespace).items
    assert jobs and jobs[0].metadata.owner_references[0].kind == "CronJob"
