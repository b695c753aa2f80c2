"""Workload resources over HTTP (no controllers running): defaulting, generated Job
selectors, validation Status bodies, Table columns."""

from __future__ import annotations

import pytest
import requests

from mockkube.testing.cluster import ThreadedCluster

_TPL = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ThreadedCluster(workdir=str(tmp_path_factory.mktemp("workloads")), components=False).start()
    s = requests.Session()
    assert s.post(c.url + "/api/v1/namespaces", json={"metadata": {"name": "w"}}).status_code == 201
    c.http = s
    try:
        yield c
    finally:
        c.stop()


def test_job_defaults_and_generated_selector(cluster):
    job = {
        "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    r = cluster.http.post(cluster.url + "/apis/batch/v1/namespaces/w/jobs", json=job)
    assert r.status_code == 201, r.text
    got = r.json()
    uid = got["metadata"]["uid"]
    spec = got["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"]) == (
        1,
        1,
        6,
        "NonIndexed",
    )
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = spec["template"]["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "pi" and labels["controller-uid"] == uid


def test_job_restart_policy_always_rejected(cluster):
    job = {"metadata": {"name": "bad"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    r = cluster.http.post(cluster.url + "/apis/batch/v1/namespaces/w/jobs", json=job)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "spec.template.spec.restartPolicy"


def test_daemonset_defaults_and_table(cluster):
    ds = {"metadata": {"name": "agent"}, "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": _TPL}}
    r = cluster.http.post(cluster.url + "/apis/apps/v1/namespaces/w/daemonsets", json=ds)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    t = cluster.http.get(
        cluster.url + "/apis/apps/v1/namespaces/w/daemonsets",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    ).json()
    assert [c["name"] for c in t["columnDefinitions"]][:7] == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Up-to-date",
        "Available",
        "Node Selector",
    ]


def test_cronjob_bad_schedule_names_the_field(cluster):
    cj = {
        "metadata": {"name": "c"},
        "spec": {
            "schedule": "61 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}}
                }
            },
        },
    }
    r = cluster.http.post(cluster.url + "/apis/batch/v1/namespaces/w/cronjobs", json=cj)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "spec.schedule"


def test_replicationcontroller_selector_defaults_to_template_labels_and_scale(cluster):
    rc = {"metadata": {"name": "rc"}, "spec": {"replicas": 2, "template": _TPL}}
    r = cluster.http.post(cluster.url + "/api/v1/namespaces/w/replicationcontrollers", json=rc)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["selector"] == {"app": "w"}
    sc = cluster.http.get(cluster.url + "/api/v1/namespaces/w/replicationcontrollers/rc/scale").json()
    assert sc["spec"]["replicas"] == 2 and sc["status"]["selector"] == "app=w"
