"""Namespace deletion, cascading deletion and validation errors through the real kubectl."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

# Paused, so that its controller adopts the hand-made ReplicaSet instead of creating one.
DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: %(name)s, namespace: default}
spec:
  paused: true
  replicas: 1
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec: {terminationGracePeriodSeconds: 0, containers: [{name: c, image: busybox}]}
"""

RS = """
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: %(name)s-rs
  namespace: default
  labels: {app: %(name)s}  # the Deployment's selector must match it, or its controller releases it
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: %(name)s, uid: "%(uid)s", controller: true, blockOwnerDeletion: true}
spec:
  replicas: 1
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec: {terminationGracePeriodSeconds: 0, containers: [{name: c, image: busybox}]}
"""


def _deploy_with_rs(cluster, name: str) -> str:
    cluster.kubectl("apply", "-f", "-", input=DEPLOY % {"name": name})
    uid = cluster.kubectl("get", "deployment", name, "-o", "jsonpath={.metadata.uid}").stdout.strip()
    cluster.kubectl("apply", "-f", "-", input=RS % {"name": name, "uid": uid})
    return uid


def test_delete_namespace_removes_contents_and_namespace(mockkube_cluster):
    k = mockkube_cluster.kubectl
    k("create", "namespace", "e2e-doomed")
    k("create", "configmap", "cm1", "-n", "e2e-doomed", "--from-literal=a=b")
    k("create", "secret", "generic", "s1", "-n", "e2e-doomed", "--from-literal=a=b")
    k("run", "p1", "-n", "e2e-doomed", "--image=busybox", "--restart=Never")
    k("wait", "--for=create", "serviceaccount/default", "-n", "e2e-doomed", "--timeout=30s")
    k("delete", "namespace", "e2e-doomed", "--wait=false")
    k("wait", "--for=delete", "namespace/e2e-doomed", "--timeout=30s")
    gone = k("get", "namespace", "e2e-doomed", check=False)
    assert gone.returncode != 0 and 'namespaces "e2e-doomed" not found' in gone.stderr
    left = k("get", "configmaps,secrets,pods,serviceaccounts", "-n", "e2e-doomed", "-o", "json")
    assert json.loads(left.stdout)["items"] == []


def test_create_in_terminating_namespace_is_forbidden(mockkube_cluster):
    k = mockkube_cluster.kubectl
    k("create", "namespace", "e2e-closing")
    k(
        "create",
        "-f",
        "-",
        input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: e2e-closing, "
        "finalizers: [example.com/hold]}\n",
    )
    k("delete", "namespace", "e2e-closing", "--wait=false")
    k("wait", "--for=jsonpath={.status.phase}=Terminating", "namespace/e2e-closing", "--timeout=30s")
    p = k("create", "configmap", "late", "-n", "e2e-closing", check=False)
    assert p.returncode != 0
    assert (
        'configmaps "late" is forbidden: unable to create new content in namespace e2e-closing because it is '
        "being terminated"
    ) in p.stderr
    k("wait", "--for=condition=NamespaceFinalizersRemaining", "namespace/e2e-closing", "--timeout=30s")
    k("patch", "configmap", "held", "-n", "e2e-closing", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    k("wait", "--for=delete", "namespace/e2e-closing", "--timeout=30s")


def test_create_in_missing_namespace(mockkube_cluster):
    p = mockkube_cluster.kubectl("create", "configmap", "x", "-n", "e2e-nowhere", check=False)
    assert p.returncode != 0
    assert p.stderr == 'error: failed to create configmap: namespaces "e2e-nowhere" not found\n'
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: e2e-nowhere}\n"
    p = mockkube_cluster.kubectl("create", "-f", "-", input=cm, check=False)
    assert 'Error from server (NotFound): error when creating "STDIN": namespaces "e2e-nowhere" not found' in p.stderr


def test_cascade_foreground_deletes_replicaset_first(mockkube_cluster):
    k = mockkube_cluster.kubectl
    _deploy_with_rs(mockkube_cluster, "fg")
    k("wait", "--for=jsonpath={.status.replicas}=1", "replicaset/fg-rs", "--timeout=30s")
    assert k("get", "replicasets", "-l", "app=fg", "-o", "name").stdout.split() == ["replicaset.apps/fg-rs"]
    out = k("delete", "deployment", "fg", "--cascade=foreground", "--timeout=30s")
    assert 'deployment.apps "fg" deleted' in out.stdout
    assert k("get", "deployment", "fg", check=False).returncode != 0
    rs = k("get", "replicaset", "fg-rs", check=False)
    assert rs.returncode != 0 and "NotFound" in rs.stderr  # gone before its owner
    assert k("get", "pods", "-l", "app=fg", "-o", "name").stdout.strip() == ""


def test_cascade_orphan_keeps_replicaset_without_owner(mockkube_cluster):
    k = mockkube_cluster.kubectl
    _deploy_with_rs(mockkube_cluster, "orph")
    k("delete", "deployment", "orph", "--cascade=orphan", "--timeout=30s")
    k("wait", "--for=delete", "deployment/orph", "--timeout=30s")
    rs = json.loads(k("get", "replicaset", "orph-rs", "-o", "json").stdout)
    assert "ownerReferences" not in rs["metadata"]
    assert rs["spec"]["replicas"] == 1
    k("delete", "replicaset", "orph-rs", "--timeout=30s")


def test_cascade_background_is_the_default(mockkube_cluster):
    k = mockkube_cluster.kubectl
    _deploy_with_rs(mockkube_cluster, "bg")
    k("delete", "deployment", "bg")
    k("wait", "--for=delete", "replicaset/bg-rs", "--timeout=30s")
    k("wait", "--for=delete", "pods", "-l", "app=bg", "--timeout=30s")


def test_apply_invalid_resourceslice_prints_upstream_error(mockkube_cluster):
    slice_ = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: bad-slice}
spec:
  driver: gpu.example.com
  nodeName: node-1
  allNodes: true
  pool: {name: pool, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
"""
    p = mockkube_cluster.kubectl("apply", "-f", "-", input=slice_, check=False)
    assert p.returncode != 0
    assert 'The ResourceSlice "bad-slice" is invalid: spec' in p.stderr
    assert mockkube_cluster.kubectl("get", "resourceslice", "bad-slice", check=False).returncode != 0


@pytest.mark.mockkube(frozen_clock=True)
def test_graceful_delete_of_a_simulated_pod_shows_not_ready_then_terminated(mockkube, mockkube_namespace):
    """As a kubelet reports it: during the grace period Ready=False with the container still
    running, then the container terminated, then DELETED (a watcher sees all three)."""
    import threading

    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata: {name: slow, annotations: {mockkube.io/termination-delay: 20s}}
spec: {containers: [{name: c, image: busybox}]}
""",
    )
    pod = c.wait_for("pod", "slow", "Ready", ns)
    events: list[dict] = []
    done = threading.Event()
    url = c.url + c.resource_path("pods", ns)

    def watch() -> None:
        params = {
            "watch": "1",
            "fieldSelector": "metadata.name=slow",
            "resourceVersion": pod["metadata"]["resourceVersion"],
        }
        with c.http.get(url, params=params, stream=True, timeout=60) as r:
            for line in r.iter_lines():
                events.append(json.loads(line))
                if events[-1]["type"] == "DELETED":
                    break
        done.set()

    threading.Thread(target=watch, daemon=True).start()
    c.kubectl("delete", "pod", "slow", "-n", ns, "--wait=false")
    grace = c.wait_for("pod", "slow", lambda p: (p["status"]["containerStatuses"][0]["ready"]) is False, ns)
    conds = {x["type"]: x["status"] for x in grace["status"]["conditions"]}
    assert conds["Ready"] == conds["ContainersReady"] == "False"
    assert "running" in grace["status"]["containerStatuses"][0]["state"]
    c.clock.advance(20)
    assert done.wait(30)
    final = events[-2]["object"]["status"]
    assert events[-2]["type"] == "MODIFIED" and events[-1]["type"] == "DELETED"
    term = final["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 0 and term["reason"] == "Completed"
    assert {x["type"]: x["status"] for x in final["conditions"]}["Ready"] == "False"
