"""`mockkube serve --node-shards 2`: the simulated kubelets and their nodes' DRA drivers run in
two `mockkube kubelets --shard I/2` processes, clients of the API over HTTP, each with the
nodes whose name hashes to its shard. Pods claiming devices run on the nodes of both;
logs, exec, port-forward and the node proxy reach the kubelet API each node's kubelet serves in
its shard (forwarded by the API server; HTTPS with client certificates when the server has a
CA), and fail as kube-apiserver's do once a shard is gone; the shards survive a reset and stop
with the server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request

import pytest
import requests
import yaml

import mockkube
from mockkube.kubelet.cluster import shard_of
from mockkube.testing import binaries
from mockkube.testing.waiting import until
from tests.procs import accepted_by, child_processes

pytestmark = pytest.mark.e2e

NODES = [f"s-{i}" for i in range(6)]
PROFILE = """
nodes:
- name: s
  count: 6
  drivers:
    gpu.example.com: {count: 2}
"""
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu"},
    "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
}


def _pod(name: str, node: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            "containers": [
                {
                    "name": "app",
                    "image": "busybox",
                    "command": ["sh", "-c", f"echo hello from {name}; sleep 3600"],
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
    }


def shard_pids(cluster: mockkube.Cluster) -> dict[str, int]:
    """The server's `mockkube kubelets` children: {"I/M": pid}."""
    return {
        argv[argv.index("--shard") + 1]: k
        for k, argv in child_processes(cluster._proc.pid).items()
        if "kubelets" in argv
    }


@pytest.fixture(scope="module")
def cluster():
    with mockkube.Cluster(PROFILE, subprocess=True, node_shards=2) as c:
        yield c


def test_the_kubelets_run_in_shard_processes(cluster):
    assert set(shard_pids(cluster)) == {"0/2", "1/2"}
    assert {shard_of(n, 2) for n in NODES} == {0, 1}  # both shards have nodes here
    nodes = cluster.http.get(cluster.url + "/api/v1/nodes", timeout=30).json()["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == NODES
    for n in nodes:
        ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True"
        managers = {m["manager"] for m in n["metadata"]["managedFields"]}
        assert "kubelet" in managers
    ns = cluster.create_namespace("shards")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    docs = [_pod(f"p-{node}", node) for node in NODES]
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all(docs))
    cluster.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod", "--all", "--timeout=60s")
    for node in NODES:
        pod = cluster.get("Pod", f"p-{node}", namespace=ns)
        assert pod["spec"]["nodeName"] == node and pod["status"]["phase"] == "Running"
        claim = cluster.get("ResourceClaim", pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"], ns)
        assert claim["status"]["reservedFor"][0]["name"] == pod["metadata"]["name"]
        # Running: the shard's kubelet prepared it through the node's driver first
        assert claim["status"]["allocation"]["devices"]["results"][0]["pool"] == node
    # logs, exec and the node proxy answer for the shards' simulated containers
    assert cluster.kubectl("logs", "-n", ns, f"p-{NODES[0]}").stdout.strip() == f"hello from p-{NODES[0]}"
    assert cluster.kubectl("exec", "-n", ns, f"p-{NODES[-1]}", "--", "echo", "hi").stdout.strip() == "hi"
    proxied = cluster.http.get(f"{cluster.url}/api/v1/nodes/{NODES[1]}/proxy/pods", timeout=30).json()
    assert [p["metadata"]["name"] for p in proxied["items"]] == [f"p-{NODES[1]}"]
    # mockkube's own node endpoints do not reach the shards: a clear Status
    r = cluster.http.post(f"{cluster.url}/mockkube/v1/nodes/{NODES[0]}/kubelet", json={"running": False}, timeout=30)
    assert r.status_code == 503 and "--node-shards" in r.json()["message"]


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


STREAMS_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    mockkube.io/http-response.8080: "hello from the shard\\n"
spec:
  nodeName: {node}
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "echo line one; echo line two; sleep 3600"]
    ports: [{{containerPort: 8080}}]
"""


def _kubelet_port(cluster: mockkube.Cluster, node: str) -> int:
    n = cluster.get("Node", node)
    assert n["status"]["addresses"][0] == {"type": "InternalIP", "address": "127.0.0.1"}
    return n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]


def test_streams_reach_the_nodes_kubelet_in_its_shard(cluster):
    """kubectl logs -f, exec with stdin, port-forward and the node proxy of a pod on a shard's
    node: the API server forwards them to the kubelet API its Node advertises."""
    node = NODES[1]
    port = _kubelet_port(cluster, node)
    # the node's own kubelet answers on that port (as metrics-server would scrape it)
    direct = cluster.http.get(f"http://127.0.0.1:{port}/pods", timeout=30).json()
    assert all(p["spec"]["nodeName"] == node for p in direct["items"])
    assert _kubelet_port(cluster, NODES[0]) != port  # a port per node
    ns = cluster.create_namespace("streams")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=STREAMS_POD.format(node=node))
    cluster.wait_for_pod_phase("web", "Running", namespace=ns)
    assert cluster.kubectl("logs", "-f", "-n", ns, "web").stdout == "line one\nline two\n"
    assert cluster.kubectl("logs", "-n", ns, "web", "--tail=1").stdout == "line two\n"
    logs = f"http://127.0.0.1:{port}/containerLogs/{ns}/web/app"  # getContainerLogs' own answers
    for query, code, text in (
        ("tailLines=-1", 422, "Invalid request."),
        ("tailLines=x", 400, "Unable to decode query."),
    ):
        r = cluster.http.get(f"{logs}?{query}", timeout=30)
        assert (r.status_code, r.text) == (code, '{"message": "%s"}' % text)
    out = cluster.kubectl("exec", "-i", "-n", ns, "web", "--", "cat", input="through the shard\n").stdout
    assert out == "through the shard\n"
    failed = cluster.kubectl("exec", "-n", ns, "web", "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3
    bad = cluster.kubectl("logs", "-n", ns, "web", "-c", "nope", check=False)
    assert "container nope is not valid for pod web" in bad.stderr
    assert cluster.kubectl("get", "--raw", f"/api/v1/nodes/{node}/proxy/healthz").stdout == "ok"
    pods = json.loads(cluster.kubectl("get", "--raw", f"/api/v1/nodes/{node}/proxy/pods").stdout)
    assert f"{ns}/web" in {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods["items"]}
    pf = subprocess.Popen(
        [binaries.kubectl(), "port-forward", "-n", ns, "pod/web", ":8080"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cluster.env(),
    )
    try:
        line = pf.stdout.readline()  # "Forwarding from 127.0.0.1:NNNNN -> 8080"
        assert line.startswith("Forwarding from 127.0.0.1:"), line + pf.stderr.read()
        local = int(line.split(":")[1].split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=10) as r:
            assert r.read() == b"hello from the shard\n"
    finally:
        pf.terminate()
        pf.wait(10)
        pf.stdout.close()
        pf.stderr.close()


def test_a_shard_nodes_kubelet_serves_stats_metrics_and_run(cluster):
    """The rest of the kubelet API a shard's node serves through the node proxy, as the
    in-process nodes do (nodeproxy.py): the stats summary, the kubelet's, cAdvisor's and the
    prober's metrics, and the kubelet's run (POST, ``kubectl create --raw``)."""
    node = NODES[4]
    ns = cluster.create_namespace("kubeletapi")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=STREAMS_POD.format(node=node))
    cluster.wait_for_pod_phase("web", "Running", namespace=ns)
    base = f"/api/v1/nodes/{node}/proxy"
    stats = json.loads(cluster.kubectl("get", "--raw", f"{base}/stats/summary").stdout)
    assert stats["node"]["nodeName"] == node
    web = next(p for p in stats["pods"] if p["podRef"] == {"name": "web", "namespace": ns, "uid": p["podRef"]["uid"]})
    assert [c["name"] for c in web["containers"]] == ["app"]
    assert cluster.http.post(f"{cluster.url}{base}/stats/summary", timeout=30).json()["node"]["nodeName"] == node
    metrics = cluster.kubectl("get", "--raw", f"{base}/metrics").stdout.splitlines()
    assert f'kubelet_node_name{{node="{node}"}} 1' in metrics
    cadvisor = cluster.kubectl("get", "--raw", f"{base}/metrics/cadvisor").stdout
    assert f'container_memory_working_set_bytes{{container="app",image="busybox",namespace="{ns}",pod="web"}} 0 ' in (
        cadvisor
    )
    assert "# TYPE prober_probe_total counter" in cluster.kubectl("get", "--raw", f"{base}/metrics/probes").stdout
    run = cluster.kubectl("create", "--raw", f"{base}/run/{ns}/web/app?cmd=echo%20ran%20here", "-f", "/dev/null")
    assert run.stdout == "ran here\n"
    failed = cluster.http.post(f"{cluster.url}{base}/run/{ns}/web/app", params={"cmd": "cat /nope"}, timeout=30)
    assert (failed.status_code, failed.text) == (
        500,
        "command 'cat /nope' exited with 1: cat: /nope: No such file or directory\n",
    )
    other = cluster.http.post(f"{cluster.url}/api/v1/nodes/{NODES[0]}/proxy/run/{ns}/web/app?cmd=ls", timeout=30)
    assert (other.status_code, other.text) == (404, "pod does not exist")  # not that node's pod
    get = cluster.http.get(f"{cluster.url}{base}/run/{ns}/web/app?cmd=ls", timeout=30)
    assert get.status_code == 405


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_a_dead_shard_kubelet_gets_kube_apiservers_errors():
    """HTTPS to the kubelets (the server has a CA): the shard admits the API server's client
    certificate only; once the shard is killed, logs, exec and the node proxy fail as
    kube-apiserver's do when a kubelet does not answer."""
    with mockkube.Cluster(
        "nodes:\n- name: solo\n", subprocess=True, node_shards=1, auth={"authorization_mode": "Node,RBAC"}
    ) as c:
        port = _kubelet_port(c, "solo")
        with pytest.raises(requests.exceptions.ConnectionError):  # no client certificate: refused
            requests.get(f"https://127.0.0.1:{port}/healthz", verify=False, timeout=10)
        ns = c.create_namespace("dead")
        c.kubectl("apply", "-n", ns, "-f", "-", input=STREAMS_POD.format(node="solo"))
        c.wait_for_pod_phase("web", "Running", namespace=ns)
        assert c.kubectl("logs", "-n", ns, "web").stdout == "line one\nline two\n"  # over HTTPS
        assert c.kubectl("exec", "-n", ns, "web", "--", "echo", "hi").stdout == "hi\n"
        (pid,) = shard_pids(c).values()
        os.kill(pid, signal.SIGKILL)
        until(lambda: _gone(pid), timeout=10, what="the shard gone")
        dial = f"dial tcp 127.0.0.1:{port}: connect: connection refused"
        logs = c.kubectl("logs", "-n", ns, "web", check=False)
        url = f"https://127.0.0.1:{port}/containerLogs/{ns}/web/app"
        assert logs.returncode == 1 and f'Error from server: Get "{url}": {dial}' in logs.stderr
        ex = c.kubectl("exec", "-n", ns, "web", "--", "echo", "hi", check=False)
        assert ex.returncode == 1 and f"error dialing backend: {dial}" in ex.stderr
        raw = c.kubectl("get", "--raw", "/api/v1/nodes/solo/proxy/healthz", check=False)
        assert raw.returncode == 1
        assert f"Error from server (ServiceUnavailable): error trying to reach service: {dial}" in raw.stderr


CONFIG_POD = """
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings}}
data: {{greeting: hello, mode: fast}}
---
apiVersion: v1
kind: Secret
metadata: {{name: creds}}
stringData: {{token: s3cret}}
---
apiVersion: v1
kind: Pod
metadata: {{name: configured}}
spec:
  nodeName: {node}
  volumes:
  - {{name: cfg, configMap: {{name: settings}}}}
  - {{name: sec, secret: {{secretName: creds}}}}
  containers:
  - name: app
    image: busybox
    command: ["sleep", "3600"]
    envFrom: [{{configMapRef: {{name: settings}}, prefix: CFG_}}]
    env: [{{name: TOKEN, valueFrom: {{secretKeyRef: {{name: creds, key: token}}}}}}]
    volumeMounts:
    - {{name: cfg, mountPath: /etc/settings}}
    - {{name: sec, mountPath: /etc/creds}}
"""


def test_a_shard_follows_what_its_kubelets_read(cluster):
    """A shard follows pods, nodes, ConfigMaps, Secrets, claims and slices only (its replica
    raises on anything else: tests/unit/test_kubelet_shard_follows.py): a pod on a shard node
    sees its ConfigMap and Secret through exec, claim pods ran above, and the nodes' Leases
    are renewed from what each kubelet last wrote (no Lease informer)."""
    leases = {n: cluster.get("Lease", n, "kube-node-lease")["spec"]["renewTime"] for n in NODES}
    ns = cluster.create_namespace("follows")
    for node in (NODES[0], NODES[-1]):  # one in each shard
        cluster.kubectl("delete", "-n", ns, "pod", "configured", "--ignore-not-found", "--wait")
        cluster.kubectl("apply", "-n", ns, "-f", "-", input=CONFIG_POD.format(node=node))
        cluster.wait_for_pod_phase("configured", "Running", namespace=ns)
        script = "echo $CFG_greeting $CFG_mode $TOKEN; cat /etc/settings/mode; echo; cat /etc/creds/token"
        out = cluster.kubectl("exec", "-n", ns, "configured", "--", "sh", "-c", script).stdout
        assert out == "hello fast s3cret\nfast\ns3cret", out
    cluster.kubectl("patch", "-n", ns, "configmap", "settings", "-p", '{"data":{"mode":"slow"}}')
    until(
        lambda: cluster.kubectl("exec", "-n", ns, "configured", "--", "cat", "/etc/settings/mode").stdout == "slow",
        timeout=30,
        what="the changed ConfigMap seen in the shard",
    )

    def renewed() -> bool:
        now = {n: cluster.get("Lease", n, "kube-node-lease")["spec"]["renewTime"] for n in NODES}
        return all(now[n] != leases[n] for n in NODES)

    until(renewed, timeout=30, what="every node's Lease renewed")


def test_the_shards_survive_a_reset_and_stop_with_the_server(cluster):
    pids = shard_pids(cluster)
    cluster.reset()
    assert shard_pids(cluster) == pids  # the same processes, their kubelets started again
    ns = cluster.create_namespace("shards")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(TEMPLATE))
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump(_pod("again", NODES[2])))
    cluster.wait_for_pod_phase("again", "Running", namespace=ns)
    cluster._proc.send_signal(signal.SIGTERM)
    cluster._proc.wait(10)
    for pid in pids.values():
        until(lambda pid=pid: _gone(pid), timeout=10, what=f"shard process {pid} gone")


class PinnedProxy:
    """A local port forwarding each connection to ``port``, over an upstream connection the
    kernel gave to process ``pid`` (API servers sharing a port with SO_REUSEPORT: the proxy
    connects again until that one accepted), so that kubectl reaches that server alone."""

    def __init__(self, port: int, pid: int, others: list[int]) -> None:
        self.port, self.pid, self.others = port, pid, others
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _upstream(self) -> socket.socket:
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", self.port))
            client_port = s.getsockname()[1]
            owner = until(
                lambda: accepted_by(self.port, client_port, [self.pid, *self.others]) or None,
                timeout=10,
                what="the connection accepted",
            )
            if owner == self.pid:
                return s
            s.close()
        raise AssertionError(f"no connection reached process {self.pid}")

    def _serve(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            up = self._upstream()
            self.connections += 1
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def test_a_second_api_server_reaches_the_shards_kubelets_on_postgresql(tmp_path):
    """`--api-servers 2 --node-shards 2` on PostgreSQL: kubectl logs and exec through the
    further API server (no components: it neither runs the kubelets nor the pods) reach the
    kubelet of the pod's node in its shard."""
    from mockkube.testing.postgres import PostgresUnavailable, TempPostgres

    try:
        pg = TempPostgres().start()
    except PostgresUnavailable as e:
        if os.environ.get("CI"):
            raise  # CI installs PostgreSQL
        pytest.skip(str(e))
    profile, kubeconfig = tmp_path / "profile.yaml", tmp_path / "kubeconfig"
    profile.write_text(PROFILE)
    cmd = [sys.executable, "-m", "mockkube", "serve", "--db", pg.url, "--port", "0", "--cluster", str(profile)]
    cmd += ["--api-servers", "2", "--node-shards", "2", "--no-control-plane", "--kubeconfig", str(kubeconfig)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("mockkube ready at "), line
        port = int(line.split()[-1].rsplit(":", 1)[1])
        kids = child_processes(proc.pid)
        (second,) = [k for k, argv in kids.items() if "--no-components" in argv]
        assert len([k for k, argv in kids.items() if "kubelets" in argv]) == 2
        proxy = PinnedProxy(port, second, [proc.pid])
        config = yaml.safe_load(kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = proxy.url
        pinned = tmp_path / "kubeconfig-second"
        pinned.write_text(yaml.safe_dump(config))
        env = {**os.environ, "KUBECONFIG": str(pinned)}

        def kubectl(*args: str, **kw) -> subprocess.CompletedProcess:
            return subprocess.run(
                [binaries.kubectl(), *args], env=env, capture_output=True, text=True, timeout=60, **kw
            )

        node = NODES[1]
        assert kubectl("apply", "-f", "-", input=STREAMS_POD.format(node=node)).returncode == 0
        until(
            lambda: kubectl("get", "pod", "web", "-o", "jsonpath={.status.phase}").stdout == "Running",
            timeout=60,
            what="the pod Running",
        )
        assert kubectl("logs", "web").stdout == "line one\nline two\n"
        assert kubectl("exec", "-i", "web", "--", "cat", input="through the second server\n").stdout == (
            "through the second server\n"
        )
        assert proxy.connections >= 4  # every request went through the second server
        proxy.close()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        pg.stop()


def _ready_url(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    assert line.startswith("mockkube ready at "), line
    return line.split()[-1]


def _stop(*procs: subprocess.Popen) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
        if p.stdout is not None:
            p.stdout.close()


def test_a_shard_elsewhere_with_its_own_certificates(tmp_path):
    """docs/scaling.md "Several machines": `mockkube serve --kubelets none` with
    kube-apiserver's kubelet client flags, and a `mockkube kubelets` shard started on its own
    with a serving certificate of another CA than the one that signed the API server's client
    certificate. The server checks the kubelet's certificate against
    --kubelet-certificate-authority and presents --kubelet-client-certificate, which the shard
    admits (--client-ca-file) and nothing else."""
    from mockkube.apiserver import certs

    kubelet_ca, client_ca = certs.make_ca("kubelet-ca"), certs.make_ca("kubelet-client-ca")
    certs.write_pair(certs.make_serving(kubelet_ca, ["127.0.0.1"]), tmp_path / "kubelet.crt", tmp_path / "kubelet.key")
    client = certs.make_client(client_ca, "kube-apiserver-kubelet-client", ["system:masters"])
    certs.write_pair(client, tmp_path / "client.crt", tmp_path / "client.key")
    (tmp_path / "kubelet-ca.crt").write_bytes(kubelet_ca.cert_pem)
    (tmp_path / "client-ca.crt").write_bytes(client_ca.cert_pem)
    profile, kubeconfig = tmp_path / "profile.yaml", tmp_path / "kubeconfig"
    profile.write_text("nodes:\n- name: far\n")
    mockkube_cmd = [sys.executable, "-m", "mockkube"]
    serve = mockkube_cmd + ["serve", "--port", "0", "--cluster", str(profile), "--no-control-plane"]
    serve += ["--kubelets", "none", "--kubeconfig", str(kubeconfig), "--scheduler", "thread"]
    serve += ["--kubelet-client-certificate", str(tmp_path / "client.crt")]
    serve += ["--kubelet-client-key", str(tmp_path / "client.key")]
    serve += ["--kubelet-certificate-authority", str(tmp_path / "kubelet-ca.crt")]
    serve += ["--kubelet-preferred-address-types", "InternalIP,Hostname"]
    server = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
    shard = None
    try:
        _ready_url(server)
        kubelets = mockkube_cmd + ["kubelets", "--kubeconfig", str(kubeconfig), "--cluster", str(profile)]
        kubelets += ["--shard", "0/1", "--no-control-plane", "--client-ca-file", str(tmp_path / "client-ca.crt")]
        kubelets += ["--tls-cert-file", str(tmp_path / "kubelet.crt")]
        kubelets += ["--tls-private-key-file", str(tmp_path / "kubelet.key")]
        shard = subprocess.Popen(kubelets, stdout=subprocess.DEVNULL)
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}

        def kubectl(*args: str, **kw) -> subprocess.CompletedProcess:
            return subprocess.run(
                [binaries.kubectl(), *args], env=env, capture_output=True, text=True, timeout=60, **kw
            )

        assert kubectl("apply", "-f", "-", input=STREAMS_POD.format(node="far")).returncode == 0
        until(
            lambda: kubectl("get", "pod", "web", "-o", "jsonpath={.status.phase}").stdout == "Running",
            timeout=60,
            what="the pod Running on the shard's node",
        )
        port = json.loads(kubectl("get", "node", "far", "-o", "json").stdout)["status"]["daemonEndpoints"][
            "kubeletEndpoint"
        ]["Port"]
        with pytest.raises(requests.exceptions.SSLError):  # the kubelet's certificate: not the system's CAs
            requests.get(f"https://127.0.0.1:{port}/healthz", timeout=10)
        with pytest.raises(requests.exceptions.ConnectionError):  # no client certificate: refused
            requests.get(f"https://127.0.0.1:{port}/healthz", verify=str(tmp_path / "kubelet-ca.crt"), timeout=10)
        assert kubectl("logs", "web").stdout == "line one\nline two\n"
        assert kubectl("exec", "web", "--", "echo", "hi").stdout == "hi\n"
        assert kubectl("get", "--raw", "/api/v1/nodes/far/proxy/healthz").stdout == "ok"
    finally:
        _stop(*[p for p in (shard, server) if p is not None])


PROCESS_PODS = """
apiVersion: v1
kind: Pod
metadata: {{name: web, labels: {{app: web}}}}
spec:
  nodeName: proc
  containers:
  - name: web
    image: python
    command: [python3, -c, "{serve}"]
    workingDir: /etc
    env: [{{name: PORT, value: "{port}"}}]
    ports: [{{name: http, containerPort: {port}}}]
    readinessProbe: {{httpGet: {{path: /hostname, port: http}}, periodSeconds: 1}}
---
apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: http}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: client}}
spec:
  nodeName: proc
  containers: [{{name: c, image: python, command: [sleep, infinity]}}]
"""
SERVE = (
    "import http.server, os; http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), "
    "type('H', (http.server.SimpleHTTPRequestHandler,), {'log_message': lambda *a: None})).serve_forever()"
)
# the in-cluster configuration a client library reads: the token, the CA, the server's address
IN_CLUSTER = """
import json, os, ssl, sys, urllib.error, urllib.request
d = "/var/run/secrets/kubernetes.io/serviceaccount"
url = "https://%s:%s/api/v1/namespaces/%s/secrets" % (
    os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], open(d + "/namespace").read())
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + open(d + "/token").read()})
try:
    urllib.request.urlopen(req, context=ssl.create_default_context(cafile=d + "/ca.crt"), timeout=10)
except urllib.error.HTTPError as e:
    print(e.code, json.loads(e.read())["message"])
"""


def test_a_shard_runs_processes_where_the_profile_asks(tmp_path):
    """`kubelet.runtime: process` in the profile: a shard's pods run as processes, as on the
    server's own nodes. Their ServiceAccount token comes from the TokenRequest API and
    authenticates them to the API server over TLS (its CA in ca.crt), and a Service's name
    leads to a process pod of the same shard."""
    from mockkube.kubelet.runtime import sandbox

    if sandbox.probe():
        pytest.skip(f"no sandbox here: {sandbox.probe()}")
    profile = "nodes:\n- name: proc\nkubelet: {runtime: process}\ndeviceClasses: false\n"
    with mockkube.Cluster(profile, subprocess=True, node_shards=1, auth={"authorization_mode": "Node,RBAC"}) as c:
        ns = c.create_namespace("procs")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        c.kubectl("apply", "-n", ns, "-f", "-", input=PROCESS_PODS.format(serve=SERVE, port=port))
        c.wait_for_pod_phase("client", "Running", ns)
        # a real process in the shard, not mockkube's shell
        assert c.kubectl("exec", "-n", ns, "client", "--", "cat", "/proc/1/cmdline").stdout == "sleep\0infinity\0"
        out = c.kubectl("exec", "-n", ns, "client", "--", "python3", "-c", IN_CLUSTER).stdout
        assert out == (
            f'403 secrets is forbidden: User "system:serviceaccount:{ns}:default" cannot list resource '
            f'"secrets" in API group "" in the namespace "{ns}"\n'
        )
        get = (
            "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())"
        )

        def through_service() -> bool:
            p = c.kubectl("exec", "-n", ns, "client", "--", "python3", "-c", get, "http://web/hostname", check=False)
            return p.stdout == "web\n"

        until(through_service, timeout=30, what="the Service web reached by name from the shard's pod")
