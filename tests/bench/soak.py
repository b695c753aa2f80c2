"""Soak benchmark: hours of churn against ``mockkube serve`` over HTTP, watching for growth.

    .venv/bin/python tests/bench/soak.py [--duration 3600] [--warmup 300] [--clients 8]
                                         [--rate 8] [--check] [--json FILE] [--memdebug DIR]

Starts ``mockkube serve`` with the demo cluster plus one node whose kubelet runs the process
runtime (tainted, so only the soak's own sandboxed pods land there), then runs ``--clients``
concurrent clients, each in its own namespace, looping over: pods with claims from a
ResourceClaimTemplate (created, run, deleted), plain pods, ConfigMaps (create, update,
delete), a Deployment scaled up and down, watches opened and dropped (some after one event,
some before the first byte is read), exec sessions (some abandoned mid-command), logs
(some followed and dropped) and port-forward sessions to a real HTTP server in a sandbox.
The clients share one operation rate (``--rate``, operations started a second): the churn,
and with it what the server holds for it (Events within their TTL, the watch events of the
last 5 minutes), stays the same whatever else loads the machine, so a plateau can be told
from growth; each sample records the rate achieved over the last minute.
Every ``--reset-every`` seconds the churn pauses and ``POST /mockkube/v1/reset`` puts the
cluster back to its start.

Every ``--interval`` seconds it samples, for the server and every process under it (the
scheduler process, sandboxes): RSS, open file descriptors, threads, the number of
processes; from ``/metrics``: stored objects, events held in the watch event logs, open
watches, the event loop's tasks; and the p99 of a GET issued every 0.25 s.

It prints the series (one line a minute) and, per quantity, the median of the window just
after ``--warmup`` against the median of the last window, the growth per hour and the highest
median of any window after the warm-up, with the rate achieved in each window.
``--memdebug DIR`` has the server write memory snapshots (mockkube/server/memdebug.py). With
``--check`` it exits 1 when a quantity grows beyond its bound (10 %, or an absolute slack
for small counts), when the p99 of the GETs after the warm-up exceeds 200 ms, when a claim stays
allocated after its pod is gone, or when a client operation failed unexpectedly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import aiohttp
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.procs import child_processes, descendants  # noqa: E402

SOAK_NODE = "soak-node"
TAINT = {"key": "mockkube.io/soak", "value": "process", "effect": "NoSchedule"}
# absolute slack under which growth is never a failure (small counts move by a few)
SLACK = {
    "rss_mb": 15.0,  # the server and every process under it
    "server_rss_mb": 15.0,
    "fds": 10,
    "threads": 4,
    "processes": 2,
    "objects": 40,
    "event_log": 200,
    "watchers": 10,
    "tasks": 30,
}
GROWTH_BOUND = 0.10
# the clients' operation rate: a 2-core machine shared with other work held 8-12 a second,
# a quiet one 25-27; at a rate the machine cannot hold, the churn (and with it the Events
# within their TTL and the watch events held) follows the machine's load instead
RATE = 8.0
P99_BOUND_MS = 200.0


def profile(process_runtime: bool) -> dict:
    from mockkube.config.profile import DEMO_PROFILE

    prof = json.loads(json.dumps(DEMO_PROFILE))
    if process_runtime:
        prof["nodes"].append(
            {
                "name": SOAK_NODE,
                "labels": {"mockkube.io/soak": "true"},
                "taints": [TAINT],
                "kubelet": {"runtime": "process"},
            }
        )
    return prof


# -- process sampling --------------------------------------------------------------------


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().split("\0")
    except OSError:
        return []


def proc_figures(pid: int) -> dict:
    rss = fds = threads = 0
    own = _cmdline(pid)
    # a child forked and not yet exec'd shares the server's pages and fds: counting it would
    # add the server's whole RSS for one sample
    tree = [pid] + [p for p, cmd in descendants(pid).items() if cmd != own]
    for p in tree:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Threads:"):
                        threads += int(line.split()[1])
            fds += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            continue
    own = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                own = int(line.split()[1])
    return {
        "rss_mb": rss / 1024,
        "server_rss_mb": own / 1024,
        "fds": fds,
        "threads": threads,
        "processes": len(tree) - 1,
    }


METRIC = re.compile(r"^(\w+)(\{[^}]*\})? ([0-9.e+-]+)$")


def parse_metrics(text: str) -> dict:
    got = {"objects": 0.0, "event_log": 0.0, "watchers": 0.0, "tasks": 0.0}
    names = {
        "apiserver_storage_objects": "objects",
        "mockkube_event_log_events": "event_log",
        "mockkube_watchers": "watchers",
        "mockkube_asyncio_tasks": "tasks",
    }
    for line in text.splitlines():
        m = METRIC.match(line)
        if m and m.group(1) in names:
            got[names[m.group(1)]] += float(m.group(3))
    return {k: int(v) for k, v in got.items()}


# -- the churn ---------------------------------------------------------------------------


@dataclass
class Stats:
    ops: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    after_warmup: list[float] = field(default_factory=list)  # every GET's latency after the warm-up

    def count(self, op: str) -> None:
        self.ops[op] = self.ops.get(op, 0) + 1

    def error(self, msg: str) -> None:
        self.errors.append(msg)
        print(f"  error: {msg}", file=sys.stderr, flush=True)


class Gate:
    """Lets the reset pause the clients between operations."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.busy = 0
        self.idle = asyncio.Event()

    async def enter(self) -> None:
        await self.open.wait()
        self.busy += 1
        self.idle.clear()

    def leave(self) -> None:
        self.busy -= 1
        if self.busy == 0:
            self.idle.set()

    async def close(self) -> None:
        self.open.clear()
        if self.busy:
            await self.idle.wait()


class Pace:
    """The clients' shared operation rate: each operation starts at its own slot, ``1/rate``
    seconds after the one before, whatever the machine's load lets the server answer. Slots
    a client could not take (the server was slow, or the churn paused for a reset) are not
    made up in a burst afterwards: the rate is a ceiling the clients hold to, and the
    achieved rate of each window is reported beside it."""

    def __init__(self, rate: float) -> None:
        self.gap = 1.0 / rate if rate > 0 else 0.0
        self.next = 0.0

    async def slot(self) -> None:
        if not self.gap:
            return
        now = time.monotonic()
        at = max(now, self.next)
        self.next = at + self.gap
        if at > now:
            await asyncio.sleep(at - now)


class Client:
    def __init__(self, i: int, url: str, stats: Stats, process_runtime: bool, python: str) -> None:
        self.i = i
        self.url = url
        self.ns = f"soak-{i}"
        self.stats = stats
        self.process_runtime = process_runtime
        self.python = python
        self.port = 20000 + os.getpid() % 20000 + i  # the sandbox's HTTP server (host network)
        self.s: aiohttp.ClientSession | None = None
        self.n = 0

    async def req(self, method: str, path: str, body: dict | None = None, ok=(200, 201, 202), **kw) -> tuple[int, dict]:
        assert self.s is not None
        async with self.s.request(method, self.url + path, json=body, **kw) as r:
            text = await r.text()
            st = r.status
        data = json.loads(text) if text.startswith("{") else {"text": text}
        if st not in ok:
            raise RuntimeError(f"{method} {path}: {st} {text[:200]}")
        return st, data

    async def until(self, what: str, fn, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not await fn():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.ns}: timed out waiting for {what}")
            await asyncio.sleep(0.1)

    def pods(self, name: str = "") -> str:
        return f"/api/v1/namespaces/{self.ns}/pods" + (f"/{name}" if name else "")

    async def phase(self, name: str) -> str:
        st, pod = await self.req("GET", self.pods(name), ok=(200, 404))
        return "Gone" if st == 404 else (pod.get("status") or {}).get("phase", "")

    async def setup(self) -> None:
        await self.req("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}}, ok=(201, 409))
        await self.until(
            "default ServiceAccount",
            lambda: self._exists(f"/api/v1/namespaces/{self.ns}/serviceaccounts/default"),
        )
        await self.req(
            "POST",
            f"/apis/resource.k8s.io/v1/namespaces/{self.ns}/resourceclaimtemplates",
            {
                "metadata": {"name": "gpu"},
                "spec": {
                    "spec": {
                        "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
                    }
                },
            },
            ok=(201, 409),
        )
        await self.req(
            "POST",
            f"/apis/apps/v1/namespaces/{self.ns}/deployments",
            {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            },
            ok=(201, 409),
        )
        if self.process_runtime:
            await self.req(
                "POST",
                self.pods(),
                {
                    "metadata": {"name": "sandbox"},
                    "spec": {
                        "nodeSelector": {"mockkube.io/soak": "true"},
                        "tolerations": [{**TAINT, "operator": "Equal"}],
                        "containers": [
                            {
                                "name": "web",
                                "image": "python",
                                "command": [
                                    self.python,
                                    "-u",
                                    "-m",
                                    "http.server",
                                    str(self.port),
                                    "--bind",
                                    "127.0.0.1",
                                ],
                                "ports": [{"containerPort": self.port}],
                            }
                        ],
                    },
                },
                ok=(201, 409),
            )
            await self.until("the sandbox pod", lambda: self._phase_is("sandbox", "Running"))

    async def _exists(self, path: str) -> bool:
        st, _ = await self.req("GET", path, ok=(200, 404))
        return st == 200

    async def _phase_is(self, name: str, phase: str) -> bool:
        return await self.phase(name) == phase

    async def _gone(self, name: str) -> bool:
        return await self.phase(name) == "Gone"

    # -- operations ----------------------------------------------------------------------
    async def claim_pod(self) -> None:
        name = f"claim-{self.n}"
        await self.req(
            "POST",
            self.pods(),
            {
                "metadata": {"name": name},
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                    "containers": [{"name": "c", "image": "cuda", "resources": {"claims": [{"name": "gpu"}]}}],
                },
            },
        )
        await self.until(f"pod {name} Running", lambda: self._phase_is(name, "Running"))
        await self.req("DELETE", self.pods(name), params={"gracePeriodSeconds": "0"})
        await self.until(f"pod {name} gone", lambda: self._gone(name))

    async def plain_pods(self) -> None:
        names = [f"plain-{self.n}-{j}" for j in range(3)]
        for name in names:
            await self.req(
                "POST",
                self.pods(),
                {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            )
        for name in names:
            await self.req("DELETE", self.pods(name), params={"gracePeriodSeconds": "0"}, ok=(200, 202, 404))
        for name in names:
            await self.until(f"pod {name} gone", lambda name=name: self._gone(name))

    async def configmaps(self) -> None:
        path = f"/api/v1/namespaces/{self.ns}/configmaps"
        name = f"cm-{self.n}"
        _, cm = await self.req("POST", path, {"metadata": {"name": name}, "data": {"k": "v" * 512}})
        cm["data"]["k2"] = "w" * 512
        await self.req("PUT", f"{path}/{name}", cm)
        await self.req("DELETE", f"{path}/{name}")

    async def deployment(self) -> None:
        replicas = 2 if self.n % 2 == 0 else 0
        await self.req(
            "PATCH",
            f"/apis/apps/v1/namespaces/{self.ns}/deployments/web/scale",
            {"spec": {"replicas": replicas}},
            headers={"Content-Type": "application/merge-patch+json"},
        )

        async def settled() -> bool:
            _, pods = await self.req("GET", self.pods(), params={"labelSelector": "app=web"})
            return (
                sum(1 for p in pods["items"] if (p.get("status") or {}).get("phase") == "Running") == replicas
                and len(pods["items"]) == replicas
            )

        await self.until(f"deployment at {replicas}", settled)

    async def watch(self) -> None:
        assert self.s is not None
        params = {"watch": "true", "timeoutSeconds": "30", "allowWatchBookmarks": "true"}
        async with self.s.get(self.url + self.pods(), params=params) as r:
            if self.n % 3:
                await r.content.readline()  # one event, then the client goes away
        if self.n % 5 == 0:  # a watch of all namespaces dropped before the first byte is read
            r = await self.s.get(self.url + "/api/v1/pods", params=params)
            r.close()

    async def exec_(self) -> None:
        assert self.s is not None
        abandon = self.n % 4 == 0
        cmd = ["sleep", "30"] if abandon else ["sh", "-c", "echo soak"]
        params = [("stdout", "true"), ("stderr", "true")] + [("command", c) for c in cmd]
        got = b""
        async with self.s.ws_connect(
            self.url + self.pods("sandbox") + "/exec", params=params, protocols=["v5.channel.k8s.io"]
        ) as ws:
            if abandon:
                await asyncio.sleep(0.2)
                return  # the client vanishes mid-command
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.BINARY and msg.data[:1] == b"\x01":
                    got += msg.data[1:]
        if got != b"soak\n":
            raise RuntimeError(f"exec answered {got!r}")

    async def logs(self) -> None:
        assert self.s is not None
        await self.req("GET", self.pods("sandbox") + "/log", params={"tailLines": "5"})
        async with self.s.get(self.url + self.pods("sandbox") + "/log", params={"follow": "true"}) as r:
            if r.status != 200:
                raise RuntimeError(f"log follow answered {r.status}")
            await asyncio.sleep(0.1)  # then the client vanishes mid-follow

    async def port_forward(self) -> None:
        assert self.s is not None
        got = b""
        async with self.s.ws_connect(
            self.url + self.pods("sandbox") + "/portforward",
            params={"ports": str(self.port)},
            protocols=["v4.channel.k8s.io"],
        ) as ws:
            await ws.send_bytes(b"\x00GET / HTTP/1.0\r\n\r\n")
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.BINARY and msg.data[:1] == b"\x00":
                    got += msg.data[1:]
                    if self.n % 2 and len(got) > 2:
                        return  # dropped mid-response
        if not self.n % 2 and b"200 OK" not in got:
            raise RuntimeError(f"port-forward answered {got[:80]!r}")

    def operations(self) -> list:
        ops = [self.claim_pod, self.plain_pods, self.configmaps, self.configmaps, self.deployment, self.watch]
        if self.process_runtime:
            ops += [self.exec_, self.logs, self.port_forward]
        return ops

    async def run(self, gate: Gate, stop: asyncio.Event, pace: Pace) -> None:
        ops = self.operations()
        while not stop.is_set():
            op = ops[(self.n + self.i) % len(ops)]
            self.n += 1
            await pace.slot()
            await gate.enter()
            try:
                await op()
                self.stats.count(op.__name__.strip("_"))
            except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                self.stats.error(f"{self.ns} {op.__name__}: {type(e).__name__}: {e}")
            finally:
                gate.leave()


# -- the run -----------------------------------------------------------------------------


async def latency_probe(url: str, stats: Stats, stop: asyncio.Event) -> None:
    async with aiohttp.ClientSession() as s:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                async with s.get(url + "/api/v1/namespaces/default/configmaps/kube-root-ca.crt") as r:
                    await r.read()
                stats.latencies.append((time.perf_counter() - t0) * 1000)
            except aiohttp.ClientError as e:
                stats.error(f"probe: {e}")
            await asyncio.sleep(0.25)


def p99(xs: list[float]) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


async def leftover_claims(url: str) -> list[str]:
    """Claims still allocated in the soak's namespaces once no pod of theirs runs."""
    async with aiohttp.ClientSession() as s:
        async with s.get(url + "/apis/resource.k8s.io/v1/resourceclaims") as r:
            claims = (await r.json())["items"]
        async with s.get(url + "/api/v1/pods") as r:
            pods = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in (await r.json())["items"]}
    bad = []
    for c in claims:
        ns = c["metadata"]["namespace"]
        if not ns.startswith("soak-"):
            continue
        owners = [(ns, o["name"]) for o in c["metadata"].get("ownerReferences") or () if o.get("kind") == "Pod"]
        if (c.get("status") or {}).get("allocation") and not any(o in pods for o in owners):
            bad.append(f"{ns}/{c['metadata']['name']}")
    return bad


async def soak(args: argparse.Namespace, url: str, pid: int, process_runtime: bool) -> int:
    stats = Stats()
    stop = asyncio.Event()
    gate = Gate()
    connector = aiohttp.TCPConnector(limit=0)
    session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120))
    clients = [Client(i, url, stats, process_runtime, args.python) for i in range(args.clients)]
    for c in clients:
        c.s = session
    await asyncio.gather(*(c.setup() for c in clients))
    pace = Pace(args.rate)
    tasks = [asyncio.create_task(c.run(gate, stop, pace)) for c in clients]
    tasks.append(asyncio.create_task(latency_probe(url, stats, stop)))
    samples: list[dict] = []
    start = time.monotonic()
    next_reset = start + args.reset_every if args.reset_every else float("inf")
    resets = 0
    try:
        while time.monotonic() - start < args.duration:
            await asyncio.sleep(args.interval)
            if time.monotonic() >= next_reset:
                await gate.close()
                st, _ = await clients[0].req("POST", "/mockkube/v1/reset")
                await asyncio.gather(*(c.setup() for c in clients))
                resets += 1
                next_reset = time.monotonic() + args.reset_every
                gate.open.set()
            async with session.get(url + "/metrics") as r:
                m = parse_metrics(await r.text())
            lat, stats.latencies = stats.latencies, []
            if time.monotonic() - start >= args.warmup:
                stats.after_warmup += lat
            sample = {"t": round(time.monotonic() - start), **proc_figures(pid), **m, "p99_ms": round(p99(lat), 1)}
            sample["ops"] = sum(stats.ops.values())
            # operations a second over the last minute (the rate the churn held)
            back = [x for x in samples if x["t"] >= sample["t"] - 60]
            first = back[0] if back else {"t": 0, "ops": 0}
            span = sample["t"] - first["t"]
            sample["rate"] = round((sample["ops"] - first["ops"]) / span, 1) if span else 0.0
            samples.append(sample)
            if args.json:  # as it goes: a run stopped early still has its series
                with open(args.json, "w") as f:
                    json.dump({"samples": samples}, f)
            if args.memdebug and len(samples) % max(1, int(args.memdebug_every / args.interval)) == 0:
                # a snapshot of the server and of the scheduler process (mockkube/server/memdebug.py)
                for p in [pid] + [c for c, cmd in child_processes(pid).items() if "scheduler" in cmd]:
                    os.kill(p, signal.SIGUSR2)
            if len(samples) % max(1, int(60 / args.interval)) == 0 or len(samples) == 1:
                print(
                    f"{sample['t']:6d}s rss {sample['rss_mb']:6.1f} MB (server {sample['server_rss_mb']:6.1f})"
                    f" fds {sample['fds']:4d} thr {sample['threads']:3d} procs {sample['processes']:3d}"
                    f" objs {sample['objects']:5d} evlog {sample['event_log']:6d} watch {sample['watchers']:4d}"
                    f" tasks {sample['tasks']:4d} p99 {sample['p99_ms']:6.1f} ms ops {sample['ops']} ({sample['rate']:.1f}/s)",
                    flush=True,
                )
    finally:
        stop.set()
        await gate.close()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        gate.open.set()
    async with session.get(url + "/metrics") as r:
        by = {}
        for line in (await r.text()).splitlines():
            m = METRIC.match(line)
            if m and m.group(1) == "apiserver_storage_objects" and float(m.group(3)) >= 10:
                by[m.group(2)[len('{resource="') : -2]] = int(float(m.group(3)))
    print("stored objects at the end:", ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1])))
    # the churn over: every claim pod is gone, so no claim may stay allocated
    leftovers: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        leftovers = await leftover_claims(url)
        if not leftovers:
            break
        await asyncio.sleep(0.5)
    await session.close()
    return report(args, samples, stats, leftovers, resets)


def report(args: argparse.Namespace, samples: list[dict], stats: Stats, leftovers: list[str], resets: int) -> int:
    window = max(1, int(args.window / args.interval))
    after = [s for s in samples if s["t"] >= args.warmup]
    base, last = after[:window], after[-window:]
    hours = (last[-1]["t"] - base[0]["t"]) / 3600 if base and last and last[-1]["t"] > base[0]["t"] else 0
    failures = []
    growth = {}
    print(f"\noperations: {json.dumps(stats.ops, sort_keys=True)}; resets {resets}; errors {len(stats.errors)}")
    # the rate the churn held, per window after the warm-up (the medians compared below are
    # only comparable at the same rate)
    rates = [statistics.median(s["rate"] for s in after[i : i + window]) for i in range(0, len(after), window)]
    if after:
        print(
            f"operations a second (target {args.rate:g}): baseline {statistics.median(s['rate'] for s in base):.1f}, "
            f"end {statistics.median(s['rate'] for s in last):.1f}; per {args.window:g} s window "
            + " ".join(f"{r:.1f}" for r in rates)
        )
    print(f"{'quantity':<10} {'baseline':>10} {'end':>10} {'growth':>8} {'per hour':>10} {'peak':>10}")
    for key in SLACK:
        if not base:
            break
        b = statistics.median(s[key] for s in base)
        e = statistics.median(s[key] for s in last)
        # the highest median of any window after the warm-up
        peak = max(
            statistics.median(s[key] for s in after[i : i + window]) for i in range(max(1, len(after) - window + 1))
        )
        rel = (e - b) / b if b else 0.0
        per_hour = (e - b) / hours if hours else 0.0
        growth[key] = {"baseline": b, "end": e, "growth": rel, "per_hour": per_hour, "peak": peak}
        print(f"{key:<10} {b:>10.1f} {e:>10.1f} {rel:>7.1%} {per_hour:>+10.1f} {peak:>10.1f}")
        if e - b > max(GROWTH_BOUND * b, SLACK[key]):
            failures.append(f"{key} grew from {b:.1f} to {e:.1f} (bound {GROWTH_BOUND:.0%} or {SLACK[key]})")
    worst = max((s["p99_ms"] for s in after), default=0.0)
    overall = p99(stats.after_warmup)
    print(
        f"GET p99 after warm-up: {overall:.1f} ms over {len(stats.after_warmup)} GETs; worst "
        f"{args.interval:.0f} s window {worst:.1f} ms"
    )
    if overall > P99_BOUND_MS:
        failures.append(f"GET p99 was {overall:.1f} ms (bound {P99_BOUND_MS:.0f} ms)")
    if leftovers:
        failures.append(f"claims allocated after their pods were gone: {leftovers[:5]}")
    if stats.errors:
        failures.append(f"{len(stats.errors)} client operations failed, first: {stats.errors[0]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"samples": samples, "growth": growth, "ops": stats.ops, "errors": stats.errors[:50]}, f)
    for msg in failures:
        print(f"FAIL: {msg}")
    if not failures:
        print("no growth beyond the bounds")
    return 1 if failures and args.check else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=3600, help="seconds of churn (default 3600)")
    ap.add_argument("--warmup", type=float, default=300, help="seconds before the baseline window (default 300)")
    ap.add_argument("--window", type=float, default=120, help="seconds in the baseline and end windows (default 120)")
    ap.add_argument("--interval", type=float, default=10, help="seconds between samples (default 10)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument(
        "--rate",
        type=float,
        default=RATE,
        help=f"operations a second the clients start between them (default {RATE:g}, which a 2-core machine "
        "under load sustains: a steady churn makes stored objects and event logs plateau; 0: as fast as they go)",
    )
    ap.add_argument("--reset-every", type=float, default=600, help="seconds between resets (0: none; default 600)")
    ap.add_argument("--no-process-runtime", action="store_true", help="no sandboxed pods (no exec, logs, port-forward)")
    ap.add_argument(
        "--event-ttl",
        type=float,
        default=180,
        help="the server's --event-ttl in seconds (default 180: the Events' plateau, which kube-apiserver's 1h "
        "default reaches after an hour, comes before the baseline window)",
    )
    ap.add_argument("--check", action="store_true", help="exit 1 on growth beyond the bounds")
    ap.add_argument("--json", help="write the samples and growth figures to this file")
    ap.add_argument(
        "--memdebug",
        metavar="DIR",
        help="run the server with MOCKKUBE_MEMDEBUG=DIR (tracemalloc: several-fold slower) and have it write a "
        "snapshot every --memdebug-every seconds",
    )
    ap.add_argument("--memdebug-every", type=float, default=120)
    ap.add_argument("--python", default=sys.executable, help="the Python the sandboxed HTTP server runs")
    args = ap.parse_args()
    process_runtime = not args.no_process_runtime
    if process_runtime:
        from mockkube.kubelet.runtime import sandbox

        why = sandbox.available()
        if why:
            print(f"process runtime unavailable ({why}): no exec, logs or port-forward churn", flush=True)
            process_runtime = False
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped early: the server is stopped too
    tmp = tempfile.mkdtemp(prefix="mockkube-soak-")
    prof = os.path.join(tmp, "profile.yaml")
    with open(prof, "w") as f:
        yaml.safe_dump(profile(process_runtime), f)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkube",
            "serve",
            "--port",
            "0",
            "--cluster",
            prof,
            "--kubeconfig",
            os.path.join(tmp, "kubeconfig"),
            "--event-ttl",
            f"{args.event_ttl:g}s",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "MOCKKUBE_MEMDEBUG": os.path.abspath(args.memdebug)} if args.memdebug else None,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("mockkube ready at "):
            print(f"server did not start: {line!r}", file=sys.stderr)
            return 1
        url = line.split()[-1]
        print(
            f"soak: {args.duration:.0f} s of churn, {args.clients} clients, against {url} (pid {server.pid})",
            flush=True,
        )
        return asyncio.run(soak(args, url, server.pid, process_runtime))
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
