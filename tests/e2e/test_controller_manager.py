"""kube-controller-manager's controllers as a process of their own (``mockkube controller-manager``),
a client of the API over HTTP: started by ``mockkube serve --controllers process``, or several
beside ``mockkube serve --controllers none``, leader-elected over the Lease
kube-system/kube-controller-manager, one acting. The leader SIGKILLed in the middle of a burst
of Deployments whose pods claim devices: the standby takes over, and an audit of everything
the watches saw finds no pod with two claims for one template entry, no ReplicaSet above its
replicas, no Deployment with two ReplicaSets, no device in two claims' allocations and no pod
bound twice."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time

import aiohttp
import pytest
import requests
import yaml

import mockkube
from mockkube.testing.waiting import eventually, until
from tests.procs import child_processes

pytestmark = pytest.mark.e2e

G = "resource.k8s.io"
NODES, DEVICES = 8, 4
DEPLOYMENTS, REPLICAS = 7, 4  # 28 pods, each claiming one of the 32 devices
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager"
PROFILE = {
    "apiVersion": "mockkube.io/v1alpha1",
    "kind": "ClusterProfile",
    "name": "controller-manager",
    "nodes": [
        {
            "name": "cm",
            "count": NODES,
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "drivers": {"gpu.example.com": {"count": DEVICES}},
        }
    ],
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu"},
    "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
}

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""


def _deployment(name: str, replicas: int) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                },
            },
        },
    }


def controller_manager_pids(cluster: mockkube.Cluster) -> list[int]:
    """Child processes of the server running `mockkube controller-manager`."""
    return [k for k, argv in child_processes(cluster._proc.pid).items() if "controller-manager" in argv]


def _items(cluster: mockkube.Cluster, path: str) -> list[dict]:
    return cluster.http.get(cluster.url + path, timeout=30).json()["items"]


@pytest.fixture(scope="module")
def cluster():
    with mockkube.Cluster(PROFILE, subprocess=True, controllers="process", auth=True) as c:
        yield c


def test_the_controllers_work_from_a_process_of_their_own(cluster):
    assert len(controller_manager_pids(cluster)) == 1
    ns = cluster.create_namespace("cm")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(_deployment("web", 2)))
    out = cluster.kubectl("rollout", "status", "-n", ns, "deployment/web", "--timeout=60s").stdout
    assert "successfully rolled out" in out
    rs = _items(cluster, f"/apis/apps/v1/namespaces/{ns}/replicasets")
    assert len(rs) == 1 and rs[0]["status"]["readyReplicas"] == 2
    managers = {m["manager"] for m in rs[0]["metadata"]["managedFields"]}
    assert "kube-controller-manager" in managers  # written over HTTP with its field manager
    # the claim controller made each pod's claim from the template
    for pod in _items(cluster, f"/api/v1/namespaces/{ns}/pods"):
        (status,) = pod["status"]["resourceClaimStatuses"]
        claim = cluster.get("ResourceClaim", status["resourceClaimName"], namespace=ns)
        assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
        assert claim["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    # the key material is the server's: kube-root-ca.crt, and a legacy token Secret's token
    # authenticates with the API server
    until(lambda: cluster.get("ConfigMap", "kube-root-ca.crt", namespace=ns), what="kube-root-ca.crt")
    cluster.kubectl("create", "serviceaccount", "-n", ns, "robot")
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "robot-token", "annotations": {"kubernetes.io/service-account.name": "robot"}},
    }
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(secret))
    token = until(
        lambda: (cluster.get("Secret", "robot-token", namespace=ns).get("data") or {}).get("token"),
        what="the token controller's token",
    )
    who = requests.post(
        cluster.url + "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        headers={"Authorization": "Bearer " + base64.b64decode(token).decode()},
        verify=cluster.http.verify,  # the cluster's CA, without the admin's client certificate
        timeout=30,
    )
    assert who.json()["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:robot"
    # namespace deletion: the namespace controller empties it, custom resources defined
    # after the process started included, and finalizes it
    cluster.kubectl("apply", "-f", "-", input=CRD)
    cluster.kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s")
    cluster.kubectl(
        "apply", "-n", ns, "-f", "-", input="apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    )
    # Events (the pods' and the deployment's) too, which the process does not follow: the
    # namespace controller lists them through the API
    assert _items(cluster, f"/api/v1/namespaces/{ns}/events")
    cluster.kubectl("delete", "namespace", ns, "--timeout=60s")
    assert cluster.http.get(f"{cluster.url}/api/v1/namespaces/{ns}", timeout=30).status_code == 404
    widgets = _items(cluster, "/apis/example.com/v1/widgets")
    assert widgets == []
    assert _items(cluster, f"/api/v1/namespaces/{ns}/events") == []


def test_the_controller_manager_survives_a_reset_and_stops_with_the_server(cluster):
    (pid,) = controller_manager_pids(cluster)
    cluster.reset()
    assert controller_manager_pids(cluster) == [pid]  # the same process, its controllers restarted
    ns = cluster.create_namespace("cm")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(_deployment("again", 1)))
    cluster.kubectl("rollout", "status", "-n", ns, "deployment/again", "--timeout=60s")
    cluster._proc.send_signal(signal.SIGTERM)
    cluster._proc.wait(10)
    until(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), timeout=10, what="the process gone")


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def _controller_manager(kubeconfig: str) -> tuple[subprocess.Popen, str]:
    """A leader-elected controller-manager with short durations (upstream's 15 s, 10 s, 2 s
    scaled down; long enough that a loaded machine does not starve a leader of its lease)."""
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "controller-manager", "--kubeconfig", kubeconfig, "--leader-elect"]
        + ["--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s"]
        + ["--leader-elect-retry-period", "500ms"],
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in p.stderr:
        if line.startswith("mockkube controller-manager: leader election as "):
            p.lines = []  # type: ignore[attr-defined]  # the rest of its stderr
            threading.Thread(target=lambda: p.lines.extend(p.stderr), daemon=True).start()  # never a full pipe
            return p, line.split()[-1]
    raise RuntimeError("the controller-manager did not start")


def test_a_leader_that_cannot_renew_stops_and_exits_with_status_1(tmp_path):
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump({**PROFILE, "nodes": []}))
    kubeconfig = str(tmp_path / "kubeconfig")
    server = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--controllers", "none"]
        + ["--cluster", str(tmp_path / "profile.yaml"), "--kubeconfig", kubeconfig],
        stdout=subprocess.PIPE,
        text=True,
    )
    cm = None
    try:
        url = server.stdout.readline().split()[-1]
        cm, identity = _controller_manager(kubeconfig)

        def holder() -> str:
            r = requests.get(url + LEASE, timeout=10)
            return ((r.json() if r.status_code == 200 else {}).get("spec") or {}).get("holderIdentity") or ""

        until(lambda: holder() == identity, timeout=30, what="the lease taken")
        server.send_signal(signal.SIGSTOP)  # the API stops answering: no renewal can succeed
        stopped = time.monotonic()
        try:
            assert cm.wait(30) == 1  # upstream exits at once: another may be acting soon
            took = time.monotonic() - stopped
        finally:
            server.send_signal(signal.SIGCONT)
        assert 3 <= took < 15, took  # the renew deadline (3 s), not much later
        until(lambda: any("leaderelection lost" in line for line in cm.lines), timeout=5, what="the message")
    finally:
        for p in (server, cm):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()


class Audit:
    """Everything the watches delivered, checked as it arrives (a state that was ever wrong
    is caught, not only the final one)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.pods: dict[str, dict] = {}  # live pods by name
        self.nodes: dict[str, list[str]] = {}  # pod -> every nodeName its events carried
        self.replicas: dict[str, int] = {}  # ReplicaSet uid -> spec.replicas (the highest seen)
        self.rs_of: dict[str, set[str]] = {}  # Deployment name -> its ReplicaSets' names
        self.claims_of: dict[tuple[str, str], set[str]] = {}  # (pod uid, pod claim name) -> claims
        self.allocated: dict[str, set[tuple]] = {}  # claim -> devices

    def pod(self, typ: str, obj: dict) -> None:
        m = obj["metadata"]
        name = m["name"]
        node = (obj.get("spec") or {}).get("nodeName")
        seen = self.nodes.setdefault(name, [])
        if node and (not seen or seen[-1] != node):
            seen.append(node)
            if len(seen) > 1:
                self.errors.append(f"pod {name} bound to {seen}")
        if typ == "DELETED" or m.get("deletionTimestamp"):
            self.pods.pop(name, None)
        else:
            self.pods[name] = obj
        for owner in m.get("ownerReferences") or ():
            live = [p for p in self.pods.values() if _owned_by(p, owner["uid"])]
            if owner["uid"] in self.replicas and len(live) > self.replicas[owner["uid"]]:
                self.errors.append(f"ReplicaSet {owner['name']}: {len(live)} pods for {self.replicas[owner['uid']]}")

    def replicaset(self, typ: str, obj: dict) -> None:
        m = obj["metadata"]
        uid = m["uid"]
        self.replicas[uid] = max(self.replicas.get(uid, 0), obj["spec"].get("replicas", 0))
        for owner in m.get("ownerReferences") or ():
            names = self.rs_of.setdefault(owner["name"], set())
            names.add(m["name"])
            if len(names) > 1:
                self.errors.append(f"Deployment {owner['name']} has ReplicaSets {sorted(names)}")

    def claim(self, typ: str, obj: dict) -> None:
        m = obj["metadata"]
        entry = (m.get("annotations") or {}).get("resource.kubernetes.io/pod-claim-name")
        for owner in m.get("ownerReferences") or ():
            if entry:
                made = self.claims_of.setdefault((owner["uid"], entry), set())
                made.add(m["name"])
                if len(made) > 1:
                    self.errors.append(f"pod {owner['name']} has claims {sorted(made)} for {entry}")
        results = ((obj.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
        self.allocated[m["name"]] = (
            set() if typ == "DELETED" else {(r["driver"], r["pool"], r["device"]) for r in results}
        )
        for other, devices in self.allocated.items():
            if other != m["name"] and devices & self.allocated[m["name"]]:
                self.errors.append(f"{sorted(devices & self.allocated[m['name']])} in {other} and {m['name']}")


def _owned_by(obj: dict, uid: str) -> bool:
    return any(o["uid"] == uid for o in obj["metadata"].get("ownerReferences") or ())


async def test_the_standby_controller_manager_takes_over_mid_burst(tmp_path):
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(PROFILE))
    kubeconfig = str(tmp_path / "kubeconfig")
    server = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--controllers", "none"]
        + ["--cluster", str(tmp_path / "profile.yaml"), "--kubeconfig", kubeconfig],
        stdout=subprocess.PIPE,
        text=True,
    )
    procs: list[subprocess.Popen] = [server]
    try:
        line = server.stdout.readline()
        assert line.startswith("mockkube ready at "), line
        url = line.split()[-1]
        managers = dict(reversed(_controller_manager(kubeconfig)) for _ in range(2))  # identity -> process
        procs += managers.values()
        audit = Audit()
        async with aiohttp.ClientSession() as s:

            async def get(path: str) -> dict:
                async with s.get(url + path) as r:
                    return await r.json() if r.status == 200 else {}

            async def holder() -> str:
                return ((await get(LEASE)).get("spec") or {}).get("holderIdentity") or ""

            first = await eventually_async(holder, 30, "a leader")
            assert first in managers
            async with s.post(url + "/api/v1/namespaces", json={"metadata": {"name": "cm"}}) as r:
                assert r.status == 201
            async with s.post(url + f"/apis/{G}/v1/namespaces/cm/resourceclaimtemplates", json=TEMPLATE) as r:
                assert r.status == 201, await r.text()
            rv = (await get("/api/v1/namespaces/cm/pods"))["metadata"]["resourceVersion"]

            async def watch(path: str, fn) -> None:
                async with s.get(url + path, params={"watch": "1", "resourceVersion": rv}) as r:
                    async for raw in r.content:
                        ev = json.loads(raw)
                        fn(ev["type"], ev["object"])

            watching = [
                asyncio.create_task(watch("/apis/apps/v1/namespaces/cm/replicasets", audit.replicaset)),
                asyncio.create_task(watch("/api/v1/namespaces/cm/pods", audit.pod)),
                asyncio.create_task(watch(f"/apis/{G}/v1/namespaces/cm/resourceclaims", audit.claim)),
            ]

            async def create(i: int) -> None:
                body = _deployment(f"d-{i}", REPLICAS)
                async with s.post(url + "/apis/apps/v1/namespaces/cm/deployments", json=body) as r:
                    assert r.status == 201, await r.text()

            await asyncio.gather(*(create(i) for i in range(DEPLOYMENTS)))
            await eventually(lambda: len(audit.pods) >= 4, timeout=60, what="the first pods")
            managers[first].send_signal(signal.SIGKILL)  # mid-burst: the rest waits for the standby
            killed = time.monotonic()
            made_at_kill = len(audit.pods)
            total = DEPLOYMENTS * REPLICAS

            async def standby_leads() -> bool:
                return (await holder()) not in ("", first)

            await eventually_async(standby_leads, 30, "the standby leading")
            handed_over = time.monotonic() - killed

            def done() -> bool:
                bound = [p for p in audit.pods.values() if (p.get("spec") or {}).get("nodeName")]
                return len(bound) >= total and sum(1 for d in audit.allocated.values() if d) >= total

            await eventually(done, timeout=90, what="every pod bound with its device")
            took_over = time.monotonic() - killed
            second = await holder()
            assert second in managers and second != first
            lease = (await get(LEASE))["spec"]
            assert lease["leaseTransitions"] >= 1 and lease["leaseDurationSeconds"] == 4
            for w in watching:
                w.cancel()
            assert not audit.errors, audit.errors
            assert len(audit.pods) == total and len(audit.claims_of) == total
            assert all(len(v) == 1 for v in audit.rs_of.values()) and len(audit.rs_of) == DEPLOYMENTS
            assert made_at_kill < total  # the standby had work left to take over
            # within the lease (4 s, timed by the standby from its last sight of a renewal) and
            # its next tries (every 0.5 s, jittered up to x2.2), with room for a loaded machine
            assert handed_over < 12, handed_over
            assert took_over < 60
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


async def eventually_async(cond, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        out = await cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(0.05)


RS = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: {name}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: app, image: busybox}}]}}
"""


def test_each_controller_writes_as_its_own_service_account():
    """With authentication, `mockkube serve --controllers process` runs the controller-manager
    with --use-service-account-credentials: the ReplicaSet controller creates pods as
    system:serviceaccount:kube-system:replicaset-controller, so taking `create pods` out of
    its bootstrap role (system:controller:replicaset-controller) denies it, as on kubeadm's
    cluster, while the process itself is in system:masters."""
    with mockkube.Cluster(
        "nodes:\n- name: sa\n", subprocess=True, controllers="process", auth={"authorization_mode": "Node,RBAC"}
    ) as c:
        (pid,) = controller_manager_pids(c)
        assert "--use-service-account-credentials" in child_processes(c._proc.pid)[pid]
        ns = c.create_namespace("sa-creds")
        c.kubectl("apply", "-n", ns, "-f", "-", input=RS.format(name="allowed"))
        until(lambda: len(_items(c, f"/api/v1/namespaces/{ns}/pods")) == 1, timeout=30, what="the first pod")
        role = c.get("ClusterRole", "system:controller:replicaset-controller")
        for rule in role["rules"]:
            if "pods" in rule.get("resources", []):
                rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
        c.kubectl("apply", "-f", "-", input=yaml.safe_dump(role))
        c.kubectl("apply", "-n", ns, "-f", "-", input=RS.format(name="denied"))
        denied = (
            'User "system:serviceaccount:kube-system:replicaset-controller" cannot create resource "pods" '
            f'in API group "" in the namespace "{ns}"'
        )

        def failure() -> str:
            rs = c.get("ReplicaSet", "denied", ns) or {}
            conds = (rs.get("status") or {}).get("conditions") or []
            return next((x["message"] for x in conds if x["type"] == "ReplicaFailure"), "")

        until(lambda: denied in failure(), timeout=30, what="the ReplicaSet controller denied as its ServiceAccount")
        assert [p["metadata"]["name"] for p in _items(c, f"/api/v1/namespaces/{ns}/pods")][0].startswith("allowed-")
