"""StatefulSets as kubectl uses them: ordered pods with stable names and claims, rollout
status, a rolling update with a partition, scale down with the claim retention policy."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

STS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete, whenDeleted: Retain}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def pods(c, ns: str) -> dict[str, dict]:
    items = json.loads(c.kubectl("get", "pods", "-n", ns, "-l", "app=db", "-o", "json").stdout)["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


def test_statefulset_identity_update_and_scale(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=STS)
    c.wait_for("sts", "db", lambda o: (o.get("status") or {}).get("readyReplicas") == 3, ns)
    c.kubectl("rollout", "status", "-n", ns, "sts/db", "--timeout=30s")
    got = pods(c, ns)
    assert set(got) == {"db-0", "db-1", "db-2"}
    p1 = got["db-1"]
    assert p1["spec"]["hostname"] == "db-1" and p1["spec"]["subdomain"] == "db"
    assert p1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}} in p1["spec"]["volumes"]
    claims = c.kubectl("get", "pvc", "-n", ns, "-o", "name").stdout.split()
    assert claims == [
        "persistentvolumeclaim/data-db-0",
        "persistentvolumeclaim/data-db-1",
        "persistentvolumeclaim/data-db-2",
    ]
    # a partitioned update touches only ordinals >= 2
    c.kubectl(
        "patch",
        "sts",
        "db",
        "-n",
        ns,
        "-p",
        '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}},'
        '"template":{"spec":{"containers":[{"name":"db","image":"postgres:17"}]}}}}',
    )
    st = c.wait_for(
        "sts",
        "db",
        lambda o: (o.get("status") or {}).get("updatedReplicas") == 1 and o["status"].get("readyReplicas") == 3,
        ns,
    )["status"]
    images = {n: p["spec"]["containers"][0]["image"] for n, p in pods(c, ns).items()}
    assert images == {"db-0": "postgres:16", "db-1": "postgres:16", "db-2": "postgres:17"}
    assert st["currentRevision"] != st["updateRevision"]
    c.kubectl("patch", "sts", "db", "-n", ns, "-p", '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}')
    st = c.wait_for(
        "sts",
        "db",
        lambda o: (
            (o.get("status") or {}).get("currentRevision") == o["status"].get("updateRevision")
            and o["status"].get("updatedReplicas") == 3
        ),
        ns,
    )["status"]
    assert {p["spec"]["containers"][0]["image"] for p in pods(c, ns).values()} == {"postgres:17"}
    # scale down from the highest ordinal; whenScaled: Delete removes its claims
    c.kubectl("scale", "sts", "db", "-n", ns, "--replicas=1")
    c.wait_for("pvc", "data-db-1", "deleted", ns)
    assert set(pods(c, ns)) == {"db-0"}
    assert c.kubectl("get", "pvc", "-n", ns, "-o", "name").stdout.split() == ["persistentvolumeclaim/data-db-0"]
