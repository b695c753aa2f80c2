"""What a user gets: scheduling throughput of the default `mockkube serve` over HTTP, with
every component running (controllers, scheduler, kubelets, drivers), on upstream
scheduler_perf's SchedulingWithResourceClaimTemplate shape: N nodes of 4 CPU / 32Gi /
110 pods with 10 devices each (the built-in GPU driver), one DeviceClass, and every pod
taking one device through a ResourceClaimTemplate.

Pods are created over HTTP by 16 concurrent clients (a separate process from the
server); the figure is pods/s from the first create to the last pod bound (seen through a
watch). Printed against:
  - upstream's CI threshold for this workload (120 pods/s in scheduler_perf's config);
  - a same-run baseline: the same clients creating as many ConfigMaps on the same server
    (what this machine's HTTP + store path does right now, scheduling aside);
  - the in-process figure (tests/bench/bench_scheduler.py's burst), second line only.

    .venv/bin/python tests/bench/bench_e2e.py                       # 500 nodes, 1000 pods
    .venv/bin/python tests/bench/bench_e2e.py --nodes 5000 --pods 1000
    .venv/bin/python tests/bench/bench_e2e.py --api-servers 2         # and the multi-process set
    .venv/bin/python tests/bench/bench_e2e.py --api-servers 2 --controller-manager   # controllers apart
    .venv/bin/python tests/bench/bench_e2e.py --api-servers 2 --controller-manager --node-shards 2  # every part

``--api-servers N`` measures, in the same run and after the default server, the set on
PostgreSQL (a throw-away one, started here): `mockkube serve --db postgresql://...
--api-servers N` (N API server processes on one port, the first with the components, the
scheduler process; with ``--controller-manager`` the controllers in a process of their own,
``--controllers process``; with ``--node-shards M`` the kubelets in M processes); CPU per pod
is given per process, PostgreSQL's included; the set connects to PostgreSQL over its Unix
socket (``--pg-tcp``: over TCP). ``--profile DIR`` records each process over the pod burst
(py-spy's collapsed stacks, ``DIR/<n>-<process>.txt``; PostgreSQL's backends with ``perf
record`` where perf is installed, ``DIR/<n>-postgresql.perf``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import aiohttp
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

UPSTREAM_THRESHOLD = 120.0  # scheduler_perf SchedulingWithResourceClaimTemplate, newest config
CLIENTS = 16
G = "resource.k8s.io"


PROFILE_DIR = ""  # --profile DIR: py-spy records each process over the pod burst
PG_TCP = False  # --pg-tcp: the set reaches PostgreSQL over TCP on the loopback, not its Unix socket
SIMULATED = False  # --simulated: every server's kubelets simulate containers (as kubelet shards do)


def profile(nodes: int) -> dict:
    out = {
        "apiVersion": "mockkube.io/v1alpha1",
        "kind": "ClusterProfile",
        "name": "scheduler-perf",
        "nodes": [
            {
                "name": "scheduler-perf-dra",
                "count": nodes,
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "drivers": {"gpu.example.com": {"count": 10}},
            }
        ],
    }
    if SIMULATED:
        out["kubelet"] = {"runtime": "simulated"}
    return out


def start_server(workdir: str, nodes: int, extra: list[str]) -> tuple[subprocess.Popen, str]:
    path = os.path.join(workdir, "profile.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(profile(nodes), f)
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--cluster", path, *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = p.stdout.readline()
    if not line.startswith("mockkube ready at "):
        raise RuntimeError(f"server did not start: {line}")
    return p, line.split()[-1]


async def wait_nodes_ready(s: aiohttp.ClientSession, url: str, nodes: int) -> None:
    """Every node registered and its ResourceSlice published."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        async with s.get(f"{url}/apis/{G}/v1/resourceslices") as r:
            if len((await r.json())["items"]) >= nodes:
                return
        await asyncio.sleep(0.2)
    raise RuntimeError("slices not published")


async def create_all(s: aiohttp.ClientSession, url: str, path: str, bodies: list[dict]) -> float:
    """Create ``bodies`` with CLIENTS concurrent clients; returns the first create's start."""
    it = iter(bodies)
    first = time.perf_counter()

    async def client() -> None:
        for body in it:
            async with s.post(url + path, json=body) as r:
                if r.status != 201:
                    raise RuntimeError(f"create failed: {r.status} {await r.text()}")

    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return first


async def watch_bound(s: aiohttp.ClientSession, url: str, want: int, rv: str, done: asyncio.Future) -> None:
    bound: set[str] = set()
    async with s.get(
        f"{url}/api/v1/namespaces/bench/pods",
        params={"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "false"},
        timeout=aiohttp.ClientTimeout(total=None),
    ) as r:
        async for line in r.content:
            ev = json.loads(line)
            obj = ev["object"]
            if (obj.get("spec") or {}).get("nodeName"):
                bound.add(obj["metadata"]["name"])
                if len(bound) >= want:
                    done.set_result(time.perf_counter())
                    return


def process_name(cmd: list[str], server: int, pid: int | None = None) -> str:
    """What a process of the set is, by its command line: scheduler, controller-manager,
    kubelets-I, api-server-N (a further API server) or the command's name."""
    if "scheduler" in cmd:
        return "scheduler"
    if "controller-manager" in cmd:
        return "controller-manager"
    if "kubelets" in cmd and "--shard" in cmd:
        return "kubelets-" + cmd[cmd.index("--shard") + 1].split("/")[0]
    if "--reuse-port" in cmd:
        return f"api-server-{pid}"
    return os.path.basename(cmd[0])


def cpu_seconds(pid: int, postgres: int | None = None) -> dict[str, float]:
    """CPU time (user + system) of the server process and of each child it started (the
    scheduler process, further API servers, the controller-manager, kubelet shards) and, with
    ``postgres`` (the postmaster's pid), of PostgreSQL and every backend it runs: where the
    cluster's work goes, whatever else the machine runs meanwhile."""
    from tests.procs import child_processes

    tick = os.sysconf("SC_CLK_TCK")
    names = {pid: "server"}
    replicas = 0
    for k, cmd in sorted(child_processes(pid).items()):
        names[k] = process_name(cmd, pid)
        if names[k].startswith("api-server-"):
            replicas += 1
            names[k] = f"api-server-{replicas + 1}"
    if postgres:  # the postmaster and its backends
        names[postgres] = "postgresql"
        names.update(dict.fromkeys(child_processes(postgres), "postgresql"))
    out: dict[str, float] = {}
    for p, name in names.items():
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


async def probe_gets(s: aiohttp.ClientSession, url: str, out: list[float]) -> None:
    """What a user's kubectl feels meanwhile: a GET every 20 ms, its latency recorded."""
    while True:
        t = time.perf_counter()
        async with s.get(f"{url}/api/v1/namespaces/default/services/kubernetes") as r:
            await r.read()
        out.append(time.perf_counter() - t)
        await asyncio.sleep(0.02)


def pod(i: int) -> dict:
    return {
        "metadata": {"name": f"pod-{i}"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"claims": [{"name": "resource"}]},
                }
            ],
            "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}],
        },
    }


def pg_transactions(db: str) -> int:
    """Transactions PostgreSQL counted in the set's database (a write is one, and so is each
    read of the shared log: round trips the servers make). Each backend reports its counts
    when it goes idle, at most once a second, so a count lags by up to a second."""
    import psycopg

    with psycopg.connect(db.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as c:
        q = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        return int(c.execute(q).fetchone()[0])


async def measure(
    url: str, nodes: int, pods: int, pid: int | None = None, postgres: int | None = None, db: str = ""
) -> dict:
    conn = aiohttp.TCPConnector(limit=CLIENTS + 4)
    async with aiohttp.ClientSession(connector=conn) as s:
        await wait_nodes_ready(s, url, nodes)
        async with s.post(f"{url}/api/v1/namespaces", json={"metadata": {"name": "bench"}}) as r:
            assert r.status == 201, await r.text()
        async with s.post(
            f"{url}/apis/{G}/v1/namespaces/bench/resourceclaimtemplates",
            json={
                "metadata": {"name": "test-claim-template"},
                "spec": {
                    "spec": {
                        "devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": "gpu.example.com"}}]}
                    }
                },
            },
        ) as r:
            assert r.status == 201, await r.text()
        # same-run baseline: the same clients, the same server, objects nothing reacts to
        t0 = await create_all(
            s,
            url,
            "/api/v1/namespaces/bench/configmaps",
            [{"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}} for i in range(pods)],
        )
        baseline = pods / (time.perf_counter() - t0)
        async with s.get(f"{url}/api/v1/namespaces/bench/pods") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        watcher = asyncio.create_task(watch_bound(s, url, pods, rv, done))
        cpu0 = cpu_seconds(pid, postgres) if pid else {}
        xact0 = pg_transactions(db) if db else 0
        spies = start_profiles(pid, postgres) if pid and PROFILE_DIR else []
        latencies: list[float] = []
        prober = asyncio.create_task(probe_gets(s, url, latencies))
        first = await create_all(s, url, "/api/v1/namespaces/bench/pods", [pod(i) for i in range(pods)])
        created = time.perf_counter() - first
        last = await asyncio.wait_for(done, 900)
        cpu1 = cpu_seconds(pid, postgres) if pid else {}
        xact1 = pg_transactions(db) if db else 0
        stop_profiles(spies)
        async with s.get(f"{url}/api/v1/namespaces/bench/pods", params={"limit": "1"}) as r:
            writes = int((await r.json())["metadata"]["resourceVersion"]) - int(rv)
        watcher.cancel()
        prober.cancel()
        latencies.sort()
        cpu = {k: (v - cpu0.get(k, 0.0)) * 1000 / pods for k, v in cpu1.items()}
        return {
            "pps": pods / (last - first),
            "baseline": baseline,
            "create_s": created,
            "cpu_ms_per_pod": cpu,
            "writes_per_pod": writes / pods,
            "pg_transactions_per_pod": (xact1 - xact0) / pods,
            "get_p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else 0.0,
        }


def start_profiles(pid: int, postgres: int | None) -> list[subprocess.Popen]:
    """py-spy record (collapsed stacks) on the server and each Python process it started;
    perf record on PostgreSQL's backends where perf is installed."""
    from tests.procs import child_processes

    procs = {pid: "server", **{k: process_name(v, pid, k) for k, v in child_processes(pid).items()}}
    tag = f"{len(os.listdir(PROFILE_DIR))}-"
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    spies = [
        subprocess.Popen(
            [
                spy,
                "record",
                "--pid",
                str(k),
                "--format",
                "raw",
                "--rate",
                "50",
                "--nonblocking",
                "-o",
                os.path.join(PROFILE_DIR, f"{tag}{name}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for k, name in procs.items()
    ]
    perf = shutil.which("perf")
    if postgres and perf:
        backends = ",".join(str(k) for k in [postgres, *child_processes(postgres)])
        out = os.path.join(PROFILE_DIR, f"{tag}postgresql.perf")
        spies.append(
            subprocess.Popen(
                [perf, "record", "-q", "-F", "499", "-g", "-p", backends, "-o", out],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    return spies


def stop_profiles(spies: list[subprocess.Popen]) -> None:
    for s in spies:
        s.send_signal(signal.SIGINT)
    for s in spies:
        s.wait(60)


def in_process(nodes: int, pods: int) -> float:
    from tests.bench.bench_scheduler import run

    return asyncio.run(run(nodes, pods, 20))["burst_pps"]


def write_profile(path: str, nodes: int) -> None:
    with open(path, "w") as f:
        yaml.safe_dump(profile(nodes), f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="500", help="comma-separated node counts (default 500)")
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--no-in-process", action="store_true", help="skip the in-process second line")
    ap.add_argument("--server-arg", action="append", default=[], help="extra `mockkube serve` argument")
    ap.add_argument("--url", help="measure a server already running with profile(N) (e.g. under py-spy)")
    ap.add_argument(
        "--api-servers",
        type=int,
        default=0,
        metavar="N",
        help="also measure `mockkube serve --api-servers N` on a throw-away PostgreSQL, same run",
    )
    ap.add_argument("--only-api-servers", action="store_true", help="skip the default server's line")
    ap.add_argument(
        "--controller-manager",
        action="store_true",
        help="the multi-process set (--api-servers) runs the controllers in `mockkube controller-manager` "
        "(`mockkube serve --controllers process`)",
    )
    ap.add_argument(
        "--node-shards",
        type=int,
        default=0,
        metavar="M",
        help="the multi-process set (--api-servers) runs the kubelets in M `mockkube kubelets` processes",
    )
    ap.add_argument(
        "--simulated",
        action="store_true",
        help="every server's kubelets simulate containers (kubelet.runtime: simulated, as shards do)",
    )
    ap.add_argument("--profile", metavar="DIR", help="py-spy record each process over the pod burst into DIR")
    ap.add_argument("--pg-tcp", action="store_true", help="the set connects to PostgreSQL over TCP, not its socket")
    args = ap.parse_args()
    global SIMULATED, PROFILE_DIR, PG_TCP
    SIMULATED = args.simulated
    PG_TCP = args.pg_tcp
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        PROFILE_DIR = args.profile
    if args.url:
        r = asyncio.run(measure(args.url, int(args.nodes), args.pods))
        print(f"{r['pps']:.0f} pods/s; baseline {r['baseline']:.0f} creates/s")
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "mockkube")], check=False)
    for n in (int(x) for x in args.nodes.split(",")):
        if not args.only_api_servers:
            with tempfile.TemporaryDirectory() as d:
                p, url = start_server(d, n, args.server_arg)
                try:
                    r = asyncio.run(measure(url, n, args.pods, p.pid))
                finally:
                    p.send_signal(signal.SIGTERM)
                    p.wait(30)
            report(n, args.pods, "every component", r)
        if args.api_servers:
            extra = ["--controllers", "process"] if args.controller_manager else []
            extra += ["--node-shards", str(args.node_shards)] if args.node_shards else []
            r = multi_process(n, args.pods, args.api_servers, [*args.server_arg, *extra])
            report(n, args.pods, " ".join([f"--api-servers {args.api_servers}", *extra, "on PostgreSQL"]), r)
        if not args.no_in_process:
            ip = in_process(n, args.pods)
            print(
                f"{n:>5} nodes, in-process (no HTTP, claim controller + scheduler only): {ip:.0f} pods/s "
                f"= x{ip / UPSTREAM_THRESHOLD:.2f} of the threshold",
                flush=True,
            )


def report(n: int, pods: int, what: str, r: dict) -> None:
    print(
        f"{n:>5} nodes, {pods} pods over HTTP ({CLIENTS} clients), {what}: "
        f"{r['pps']:.0f} pods/s first create -> last bound = x{r['pps'] / UPSTREAM_THRESHOLD:.2f} of "
        f"upstream's CI threshold ({UPSTREAM_THRESHOLD:.0f}); creates alone took {r['create_s']:.1f}s; "
        f"same-run baseline {r['baseline']:.0f} ConfigMap creates/s (pods/s = x{r['pps'] / r['baseline']:.2f}); "
        f"CPU per pod: "
        + ", ".join(f"{k} {v:.1f} ms" for k, v in sorted(r["cpu_ms_per_pod"].items()))
        + f"; {r['writes_per_pod']:.1f} writes per pod"
        + (f" ({r['pg_transactions_per_pod']:.1f} PostgreSQL transactions)" if r["pg_transactions_per_pod"] else "")
        + f"; GET p99 meanwhile {r['get_p99_ms']:.0f} ms",
        flush=True,
    )


def multi_process(nodes: int, pods: int, api_servers: int, extra: list[str]) -> dict:
    """The multi-process set on a throw-away PostgreSQL (mockkube.testing.postgres)."""
    from mockkube.testing.postgres import TempPostgres

    with TempPostgres() as pg, tempfile.TemporaryDirectory() as d:
        # over its Unix socket, as API servers on PostgreSQL's machine would connect (about a
        # quarter less CPU and latency per write than TCP on the loopback); --pg-tcp: TCP
        db = pg.url if PG_TCP else f"postgresql+psycopg://postgres@/postgres?host={pg.dir}&port={pg.port}"
        p, url = start_server(d, nodes, ["--db", db, "--api-servers", str(api_servers), *extra])
        try:
            with open(pg.dir / "data" / "postmaster.pid") as f:
                postmaster = int(f.readline())
            return asyncio.run(measure(url, nodes, pods, p.pid, postmaster, db))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)


if __name__ == "__main__":
    main()
