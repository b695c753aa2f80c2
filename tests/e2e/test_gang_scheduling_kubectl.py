"""KEP-4671 gang scheduling end to end with kubectl (GenericWorkload and GangScheduling on):
a gang of 4 pods of which only 3 fit stays Pending together, with upstream's condition
and event messages, and is bound all together once a node with room appears; a
ResourceClaim shared by a PodGroup (KEP-5729, DRAWorkloadResourceClaims) is allocated once
and reserved for the group."""

from __future__ import annotations

import json

import pytest

from mockkube.testing.waiting import until

GATES = {"GenericWorkload": True, "GangScheduling": True, "DRAWorkloadResourceClaims": True}

PROFILE = """
nodes:
- name: small
  count: 3
  labels: {pool: small}
  capacity: {cpu: "1", memory: 4Gi}
- name: gpu-node
  capacity: {cpu: "4", memory: 16Gi}
  drivers: {gpu.example.com: {count: 1}}
"""

GANG = """
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: trainers}
spec:
  schedulingPolicy:
    gang: {minCount: 4}
"""

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.mockkube(profile=PROFILE, feature_gates=GATES, runtime_config={"scheduling.k8s.io/v1alpha2": True}),
]

POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  schedulingGroup: {podGroupName: trainers}
  nodeSelector: {%(selector)s}
  containers: [{name: c, image: trainer:1, resources: {requests: {cpu: 800m}}}]
"""


@pytest.fixture
def cluster(mockkube):
    """The pool's cluster for this module's marker (reset between tests)."""
    return mockkube


def get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def condition(obj: dict, typ: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == typ), None)


def test_gang_waits_together_then_binds_together(cluster):
    k = cluster.kubectl
    ns = "gang-e2e"
    served = k("api-resources", "--api-group=scheduling.k8s.io", "-o", "name").stdout.split()
    assert "podgroups.scheduling.k8s.io" in served and "workloads.scheduling.k8s.io" in served
    k("create", "namespace", ns)
    k("apply", "-n", ns, "-f", "-", input=GANG)
    # the 4th pod can only go to a node labelled "extra": none exists yet
    pods = "---".join(POD % {"name": f"t{i}", "selector": "pool: small" if i < 3 else "extra: 'yes'"} for i in range(4))
    k("apply", "-n", ns, "-f", "-", input=pods)

    def group_unschedulable():
        pg = get(k, "-n", ns, "podgroup", "trainers")
        c = condition(pg, "PodGroupScheduled")
        return pg if c and c["status"] == "False" else None

    pg = until(group_unschedulable, what="PodGroupScheduled=False")
    c = condition(pg, "PodGroupScheduled")
    assert (c["reason"], c["message"]) == ("Unschedulable", "pod group is unschedulable")

    def all_conditions():
        items = get(k, "-n", ns, "pods")["items"]
        conds = {p["metadata"]["name"]: condition(p, "PodScheduled") for p in items}
        return conds if len(conds) == 4 and all(conds.values()) else None

    conds = until(all_conditions, what="PodScheduled conditions")
    for name in ("t0", "t1", "t2"):
        assert conds[name]["reason"] == "Unschedulable"
        assert conds[name]["message"] == (
            "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
        )
    assert conds["t3"]["message"].startswith("0/4 nodes are available: ")
    assert "node(s) didn't match Pod's node affinity/selector" in conds["t3"]["message"]
    assert all(not p["spec"].get("nodeName") for p in get(k, "-n", ns, "pods")["items"])
    events = get(k, "-n", ns, "events", "--field-selector", "involvedObject.name=t0,reason=FailedScheduling")
    assert events["items"][0]["message"] == (
        "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
    )

    # room appears: the gpu node gets the label the 4th pod needs
    k("label", "node", "gpu-node", "extra=yes")

    def all_bound():
        items = get(k, "-n", ns, "pods")["items"]
        return items if all(p["spec"].get("nodeName") for p in items) else None

    items = until(all_bound, what="the gang bound")
    assert {p["metadata"]["name"]: p["spec"]["nodeName"] for p in items}["t3"] == "gpu-node"
    c = condition(get(k, "-n", ns, "podgroup", "trainers"), "PodGroupScheduled")
    assert (c["status"], c["reason"]) == ("True", "Scheduled")


SHARED = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: infer}
spec:
  schedulingPolicy:
    gang: {minCount: 2}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
"""

SHARING_POD = """
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  schedulingGroup: {podGroupName: infer}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  containers: [{name: c, image: server:1, resources: {claims: [{name: gpu}]}}]
"""


def test_pod_group_claim_allocated_once_for_the_group(cluster):
    k = cluster.kubectl
    ns = "shared-claim-e2e"
    k("create", "namespace", ns)
    k("apply", "-n", ns, "-f", "-", input=SHARED)

    def generated():
        pg = get(k, "-n", ns, "podgroup", "infer")
        st = (pg.get("status") or {}).get("resourceClaimStatuses") or []
        return (pg, st[0]["resourceClaimName"]) if st else None

    pg, claim_name = until(generated, what="the PodGroup's claim")
    claim = get(k, "-n", ns, "resourceclaim", claim_name)
    owner = claim["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "PodGroup",
        "infer",
        pg["metadata"]["uid"],
        True,
    )
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/podgroup-claim-name"] == "gpu"
    assert claim["metadata"]["name"].startswith("infer-gpu-")
    assert not (claim.get("status") or {}).get("allocation")  # not before a pod needs it

    # the node has one GPU: both pods run only if they share one allocation
    k("apply", "-n", ns, "-f", "-", input="---".join(SHARING_POD % n for n in ("a", "b")))

    def running():
        items = get(k, "-n", ns, "pods")["items"]
        return items if len(items) == 2 and all(p["status"].get("phase") == "Running" for p in items) else None

    pods = until(running, what="both pods running")
    assert {p["spec"]["nodeName"] for p in pods} == {"gpu-node"}
    for p in pods:
        assert p["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim_name}]
    claims = get(k, "-n", ns, "resourceclaims")["items"]
    assert [c["metadata"]["name"] for c in claims] == [claim_name]  # no claim per pod
    st = claims[0]["status"]
    assert len(st["allocation"]["devices"]["results"]) == 1
    assert st["reservedFor"] == [
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "infer", "uid": pg["metadata"]["uid"]}
    ]

    finalizers = get(k, "-n", ns, "podgroup", "infer")["metadata"].get("finalizers")
    assert finalizers == ["scheduling.k8s.io/podgroup-protection"]  # while its pods are active

    # the pods go, the claim stays reserved; the PodGroup goes, the claim is released and collected
    k("delete", "-n", ns, "pods", "--all", "--wait=false")
    until(lambda: not get(k, "-n", ns, "pods")["items"], what="pods gone")
    assert get(k, "-n", ns, "resourceclaim", claim_name)["status"]["reservedFor"]
    k("delete", "-n", ns, "podgroup", "infer")
    until(lambda: not get(k, "-n", ns, "resourceclaims")["items"], what="the claim collected")
