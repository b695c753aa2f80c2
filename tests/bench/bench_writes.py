"""The API write path alone: what one write costs the API process, over HTTP.

    .venv/bin/python tests/bench/bench_writes.py [--pods 1000] [--clients 16] [--rounds 3]

Against a real ``mockkube serve`` with no nodes (so no kubelet or scheduler reacts: the pods
name a scheduler nobody runs), 16 concurrent clients do the writes a pod costs the API in
the end-to-end burst, each kind timed on its own:
  - pod creates (POST, fieldManager from the User-Agent, so managedFields are tracked);
  - pods/binding (POST), as the scheduler binds;
  - pod status patches (strategic merge on /status: conditions and container statuses, as a
    kubelet reports a started pod);
  - core/v1 Event creates (as the scheduler's and kubelet's recorders write them);
printed as writes/s and as a ratio to a same-run baseline: GETs of one pod by the same
clients on the same server (the HTTP stack alone). The best of ``--rounds`` rounds is kept.
Also printed: the server process's CPU time per request (from /proc; the lowest of the
rounds), which a loaded machine disturbs far less than requests/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.bench.bench_api import EMPTY_PROFILE, hammer, start_mockkube  # noqa: E402


def pod(name: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {
                "schedulerName": "bench-unscheduled",
                "containers": [
                    {
                        "name": "pause",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "resource"}]},
                    }
                ],
                "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}],
            },
        }
    ).encode()


def binding(name: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"},
        }
    ).encode()


def status_patch(name: str) -> bytes:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conds = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
    ]
    return json.dumps(
        {
            "status": {
                "phase": "Running",
                "hostIP": "10.0.0.1",
                "hostIPs": [{"ip": "10.0.0.1"}],
                "podIP": "10.244.0.5",
                "podIPs": [{"ip": "10.244.0.5"}],
                "startTime": now,
                "qosClass": "Burstable",
                "conditions": conds,
                "containerStatuses": [
                    {
                        "name": "pause",
                        "ready": True,
                        "restartCount": 0,
                        "started": True,
                        "image": "registry.k8s.io/pause:3.10",
                        "imageID": "sha256:0",
                        "containerID": "mock://1",
                        "state": {"running": {"startedAt": now}},
                    }
                ],
            }
        }
    ).encode()


def event(i: int, name: str) -> bytes:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{name}.{i:x}", "namespace": "default"},
            "involvedObject": {
                "kind": "Pod",
                "namespace": "default",
                "name": name,
                "uid": "u",
                "apiVersion": "v1",
                "resourceVersion": "1",
            },
            "reason": "Scheduled",
            "message": f"Successfully assigned default/{name} to node-1",
            "source": {"component": "default-scheduler"},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": "Normal",
            "action": "Binding",
            "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler",
        }
    ).encode()


async def patch_all(url: str, names: list[str], clients: int) -> float:
    """Strategic-merge status patches (hammer sends JSON content types only)."""
    conn = aiohttp.TCPConnector(limit=clients)
    it = iter(names)
    async with aiohttp.ClientSession(connector=conn) as s:

        async def worker() -> None:
            for n in it:
                async with s.patch(
                    f"{url}/{n}/status",
                    data=status_patch(n),
                    headers={"Content-Type": "application/strategic-merge-patch+json"},
                ) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"status patch {n}: {r.status}")

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return len(names) / (time.perf_counter() - t0)


def server_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) of the server process alone: what a request cost it,
    whatever else this shared machine runs meanwhile."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_round(url: str, n: int, clients: int, r: int, pid: int | None) -> dict[str, tuple[float, float]]:
    """Per kind: (requests/s, server CPU microseconds per request)."""
    base = url + "/api/v1/namespaces/default/pods"
    names = [f"pod-{r}-{time.monotonic_ns() % 10**6}-{i}" for i in range(n)]
    steps = [
        ("pod create", lambda: hammer("POST", lambda i: base, n, clients, lambda i: pod(names[i]))),
        ("GET one pod (baseline)", lambda: hammer("GET", lambda i: f"{base}/{names[0]}", n, clients)),
        (
            "pods/binding",
            lambda: hammer("POST", lambda i: f"{base}/{names[i]}/binding", n, clients, lambda i: binding(names[i])),
        ),
        ("pod status patch", lambda: patch_all(base, names, clients)),
        (
            "event create",
            lambda: hammer(
                "POST", lambda i: url + "/api/v1/namespaces/default/events", n, clients, lambda i: event(i, names[i])
            ),
        ),
    ]
    out = {}
    for label, step in steps:
        cpu0 = server_cpu(pid)
        rate = await step()
        out[label] = (rate, (server_cpu(pid) - cpu0) * 1e6 / n)
    return out


async def run(args) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "mockkube"),
        ],
        check=False,
    )
    if args.url:
        p, url = None, args.url
    else:
        p, url, _ = await start_mockkube("--cluster", EMPTY_PROFILE)
    rates: dict[str, float] = {}
    cpus: dict[str, float] = {}
    try:
        for r in range(args.rounds):
            for k, (rate, cpu) in (await one_round(url, args.pods, args.clients, r + 1, p.pid if p else None)).items():
                rates[k] = max(rates.get(k, 0.0), rate)
                cpus[k] = min(cpus.get(k, 1e12), cpu)
    finally:
        if p is not None:
            p.terminate()
            p.wait()
    get, get_cpu = rates.pop("GET one pod (baseline)"), cpus.pop("GET one pod (baseline)")
    print(
        f"API write path, {args.pods} objects per kind, {args.clients} clients, best of {args.rounds} rounds; "
        f"same-run baseline GET of one pod: {get:.0f} req/s" + (f", {get_cpu:.0f} us server CPU each" if p else "")
    )
    per_pod = cpu_pod = 0.0
    for k, v in rates.items():
        cpu = f"; server CPU {cpus[k]:5.0f} us/write = x{cpus[k] / get_cpu:.1f} of a GET" if p else ""
        print(f"  {k:18s}: {v:7.0f} writes/s = x{v / get:.2f} of GET{cpu}")
        per_pod += 1 / v
        cpu_pod += cpus[k]
    mix = 1 / (per_pod / len(rates))
    cpu = f"; server CPU {cpu_pod / len(rates):5.0f} us/write" if p else ""
    print(f"  {'mix (one of each)':18s}: {mix:7.0f} writes/s = x{mix / get:.2f} of GET{cpu}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--url", help="measure a server already running with no nodes (e.g. under py-spy)")
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
