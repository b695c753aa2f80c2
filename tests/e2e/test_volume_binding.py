"""Volume binding before the pod is bound, as kube-scheduler's VolumeBinding plugin does it,
seen with kubectl: a WaitForFirstConsumer claim is provisioned on the node the scheduler
chose (the claim's selected-node annotation, the volume's node affinity), a local volume
pins its pod to its node, and a pod whose claim cannot be satisfied stays Pending with
upstream's reason."""

from __future__ import annotations

import json

import pytest

from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

CLASSES = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wait}
provisioner: example.com/simulated
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
"""

POD = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: CLAIM}
spec:
  storageClassName: CLASS
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: POD}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: CLAIM}}]
"""

LOCAL_PV = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-pv}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disks/one}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [NODE]}]
"""


def _get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def _pod(name: str, claim: str, cls: str) -> str:
    return POD.replace("CLAIM", claim).replace("CLASS", cls).replace("POD", name)


def test_wait_for_first_consumer_is_decided_by_the_scheduler(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=CLASSES)
    nodes = [n["metadata"]["name"] for n in _get(k, "nodes")["items"] if not n["spec"].get("taints")]
    # a claim without a consumer waits
    k("apply", "-f", "-", input=_pod("user", "data", "wait").split("---")[0])
    assert _get(k, "pvc", "data")["status"]["phase"] == "Pending"
    # its first pod: the scheduler picks the node, the claim is annotated with it, a volume
    # with that node's affinity is provisioned and bound
    k("apply", "-f", "-", input=_pod("user", "data", "wait"))
    node = until(lambda: _get(k, "pod", "user")["spec"].get("nodeName"), what="the pod bound")
    claim = until(lambda: (c := _get(k, "pvc", "data"))["status"].get("phase") == "Bound" and c, what="bound")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    pv = _get(k, "pv", claim["spec"]["volumeName"])
    term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term == {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
    # a local volume (no provisioner) pins its pod to the volume's node
    target = next(n for n in nodes if n != node)
    k("apply", "-f", "-", input=LOCAL_PV.replace("NODE", target))
    k("apply", "-f", "-", input=_pod("pinned", "local-data", "local"))
    assert until(lambda: _get(k, "pod", "pinned")["spec"].get("nodeName"), what="pinned bound") == target
    until(lambda: _get(k, "pvc", "local-data")["spec"].get("volumeName") == "local-pv", what="static binding")
    assert until(lambda: _get(k, "pv", "local-pv")["status"]["phase"] == "Bound", what="pv bound")
    # no volume left and no provisioner: Pending with upstream's reason
    k("apply", "-f", "-", input=_pod("stuck", "more-data", "local"))
    reason = until(
        lambda: next(
            (
                e["message"]
                for e in _get(k, "events", "--field-selector", "involvedObject.name=stuck")["items"]
                if e["reason"] == "FailedScheduling"
            ),
            None,
        ),
        what="a FailedScheduling event",
    )
    assert "didn't find available persistent volumes to bind" in reason, reason
    assert _get(k, "pvc", "more-data")["status"]["phase"] == "Pending"
