"""``nodes/{name}/proxy/...``: what the API server's node proxy reaches on a node's kubelet
(its port 10250), as pkg/kubelet/server/server.go serves it; a kubelet shard's kubelet API
(kubeletserver.py) answers with this too. Served: ``healthz``, ``pods`` (the pods bound to
the node, as the kubelet lists them), ``stats/summary`` (GET or POST; CPU and memory
figures, as with ``only_cpu_and_memory=true``), ``metrics`` (the kubelet's own: its node's
name, running pods and containers), ``metrics/resource`` (what metrics-server scrapes: CPU
time and working set per container, pod and node), ``metrics/cadvisor`` (cAdvisor's
container CPU, working set and start time, and the machine's cores and memory),
``metrics/probes`` (the prober's results of process containers) and ``POST
run/{namespace}/{pod}[/{uid}]/{container}?cmd=...`` (the kubelet's non-streaming run: the
command's output, a 500 with the runtime's message when it fails).

A process container's figures are its processes' (runtime/usage.py); a simulated container
uses nothing, so its figures are 0. The node's own are the sum of its pods' (it is not a
machine of its own)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from mockkube.machinery import meta

_METRICS = (
    ("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds"),
    ("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes"),
    ("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds"),
    ("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds"),
    ("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes"),
    ("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds"),
    ("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes"),
    ("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise"),
)
_TEXT = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus text format


def _not_found() -> web.Response:
    return web.Response(status=404, text="404 page not found\n", content_type="text/plain")


def _not_allowed() -> web.Response:
    return web.Response(status=405, text="405 method not allowed\n", content_type="text/plain")


def _text(status: int, text: str) -> web.Response:
    """An error as the kubelet writes one (go-restful's WriteError: the text alone)."""
    return web.Response(status=status, text=text, content_type="text/plain")


def pods_on(server: Any, node: str) -> list[dict]:
    """The pods bound to ``node``, from the cache's ``spec.nodeName`` index (a field-selector
    LIST reads it the same way), not a scan of every pod in the cluster."""
    rt = server.registry.get("", "v1", "pods")
    cache = server.store.cache(rt)
    entries = cache.entries
    return [e.obj for k in cache.keys_with("spec.nodeName", node, None) if (e := entries.get(k)) is not None]


def pod_on(server: Any, node: str, namespace: str, name: str) -> dict | None:
    """The pod ``namespace/name`` if it is bound to ``node`` (the kubelet's pod manager knows
    those only)."""
    rt = server.registry.get("", "v1", "pods")
    entry = server.store.get(rt, namespace, name)
    if entry is None or (entry.obj.get("spec") or {}).get("nodeName") != node:
        return None
    return entry.obj


async def serve(streams: Any, request: web.Request, node: dict, path: str) -> web.StreamResponse:
    """The kubelet's answer to ``<method> /<path>`` (through the API server's node proxy, or
    on a shard's kubelet port). ``streams`` is the ``NodeStreams`` of the process that
    simulates the node (``streams.server``: its registry, store and clock)."""
    server = streams.server
    name = node["metadata"]["name"]
    parts = path.split("/")
    m = request.method
    if parts[0] == "run" and len(parts) in (4, 5) and all(parts[1:]):
        return await _run(streams, request, name, parts[1:]) if m == "POST" else _not_allowed()
    if path == "stats/summary":
        if m not in ("GET", "POST"):
            return _not_allowed()
        body = summary(node, pods_on(server, name), server.clock())
        return web.Response(body=json.dumps(body, indent=2).encode(), content_type="application/json")
    if m != "GET":
        return _not_allowed()
    if path == "healthz":
        return web.Response(text="ok", content_type="text/plain")
    if path == "pods":
        body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods_on(server, name)}
        return web.Response(body=json.dumps(body, separators=(",", ":")).encode(), content_type="application/json")
    if path == "metrics/resource":
        return web.Response(text=resource_metrics(pods_on(server, name)), headers={"Content-Type": _TEXT})
    if path == "metrics":
        return web.Response(text=kubelet_metrics(name, pods_on(server, name)), headers={"Content-Type": _TEXT})
    if path == "metrics/cadvisor":
        return web.Response(text=cadvisor_metrics(node, pods_on(server, name)), headers={"Content-Type": _TEXT})
    if path == "metrics/probes":
        return web.Response(text=probe_metrics(pods_on(server, name)), headers={"Content-Type": _TEXT})
    return _not_found()


async def _run(streams: Any, request: web.Request, node: str, parts: list[str]) -> web.Response:
    """``POST /run/{namespace}/{pod}[/{uid}]/{container}?cmd=...``: the kubelet's getRun (the
    command split at single spaces, as upstream's legacy ``cmd`` parameter is), answering with
    stdout and then stderr once it ended; a command that fails is a 500 with the runtime's
    ExecSync error, as the kubelet's RunInContainer reports it."""
    namespace, pod_name, container = parts[0], parts[1], parts[-1]
    pod = pod_on(streams.server, node, namespace, pod_name)
    if pod is None:
        return _text(404, "pod does not exist")
    uid = parts[2] if len(parts) == 4 else ""
    spec = next((c for c in (pod.get("spec") or {}).get("containers") or () if c.get("name") == container), None)
    if spec is None or (uid and uid != pod["metadata"].get("uid")) or not _is_running(pod, container):
        return _text(500, f'container not found ("{container}")')
    argv = request.query.get("cmd", "").split(" ")
    try:
        code, out, err = await streams.run(pod, container, spec, argv)
    except RuntimeError as e:
        return _text(500, str(e))
    if code != 0:
        return _text(500, f"command '{' '.join(argv)}' exited with {code}: {err.decode(errors='replace')}")
    return web.Response(body=out + err, content_type="application/json")  # as upstream's writeJSONResponse


def _is_running(pod: dict, container: str) -> bool:
    return any(
        st.get("name") == container and "running" in (st.get("state") or {})
        for st in (pod.get("status") or {}).get("containerStatuses") or ()
    )


@dataclass
class _Figures:
    """One running container's figures."""

    name: str
    image: str
    started: float
    cpu_seconds: float
    memory_bytes: int


def _figures(pods: list[dict]) -> list[tuple[dict, list[_Figures]]]:
    """Each pod with running containers (sorted by namespace and name), with its running
    containers' figures: a process container's from its processes, 0 for a simulated one."""
    from mockkube.kubelet.runtime import process, usage

    inits: dict[tuple[str, str], int] = {}
    for pod in pods:
        pp = process.pod(pod["metadata"].get("uid", ""))
        for cs in pp.containers if pp is not None and not pp.holder else ():
            if cs.running and cs.current is not None and cs.current.proc is not None:
                inits[(pod["metadata"]["uid"], cs.name)] = cs.current.proc.child_pid
    used = usage.of_namespaces(list(inits.values())) if inits else {}
    out = []
    for pod in sorted(pods, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"]["name"])):
        images = {c.get("name"): c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or ()}
        figures = []
        for cname, started in _running(pod):
            pid = inits.get((pod["metadata"]["uid"], cname))
            u = used.get(pid) if pid is not None else None
            cpu, mem = (u.cpu_seconds, u.memory_bytes) if u is not None else (0.0, 0)
            figures.append(_Figures(cname, images.get(cname, ""), started, cpu, mem))
        if figures:
            out.append((pod, figures))
    return out


def _running(pod: dict) -> list[tuple[str, float]]:
    """(container, start time) of the pod's running containers, as its status says."""
    out = []
    for st in (pod.get("status") or {}).get("containerStatuses") or ():
        started = ((st.get("state") or {}).get("running") or {}).get("startedAt")
        if started:
            try:
                out.append((st["name"], meta.parse_time(started)))
            except (TypeError, ValueError):
                continue
    return out


def resource_metrics(pods: list[dict]) -> str:
    """The kubelet's ``/metrics/resource`` text for these pods (Prometheus text format 0.0.4,
    each sample with its timestamp in milliseconds, as the kubelet writes them)."""
    ts = int(time.time() * 1000)
    lines: dict[str, list[str]] = {m[0]: [] for m in _METRICS}
    node_cpu, node_mem = 0.0, 0
    for pod, figures in _figures(pods):
        m = pod["metadata"]
        labels = f'namespace="{m.get("namespace", "")}",pod="{m["name"]}"'
        pod_cpu, pod_mem = 0.0, 0
        for f in figures:
            pod_cpu, pod_mem = pod_cpu + f.cpu_seconds, pod_mem + f.memory_bytes
            cl = f'container="{f.name}",{labels}'
            lines["container_cpu_usage_seconds_total"].append(f"{{{cl}}} {_num(f.cpu_seconds)} {ts}")
            lines["container_memory_working_set_bytes"].append(f"{{{cl}}} {_num(f.memory_bytes)} {ts}")
            lines["container_start_time_seconds"].append(f"{{{cl}}} {_num(f.started)} {ts}")
        lines["pod_cpu_usage_seconds_total"].append(f"{{{labels}}} {_num(pod_cpu)} {ts}")
        lines["pod_memory_working_set_bytes"].append(f"{{{labels}}} {_num(pod_mem)} {ts}")
        node_cpu, node_mem = node_cpu + pod_cpu, node_mem + pod_mem
    lines["node_cpu_usage_seconds_total"].append(f" {_num(node_cpu)} {ts}")
    lines["node_memory_working_set_bytes"].append(f" {_num(node_mem)} {ts}")
    lines["resource_scrape_error"].append(" 0")
    return _exposition([(metric, typ, f"[STABLE] {text}", lines[metric]) for metric, typ, text in _METRICS])


def _exposition(families: list[tuple[str, str, str, list[str]]]) -> str:
    """Prometheus text format: each family (name, type, help, samples after the name) with
    its HELP and TYPE lines."""
    out = []
    for metric, typ, help_text, samples in families:
        out.append(f"# HELP {metric} {help_text}")
        out.append(f"# TYPE {metric} {typ}")
        out += [metric + sample for sample in samples]
    return "\n".join(out) + "\n"


def kubelet_metrics(node: str, pods: list[dict]) -> str:
    """The kubelet's own ``/metrics`` (its legacy registry), the part a simulated kubelet
    knows: its node's name, the pods that run and their containers by state."""
    running_pods, states = 0, {"running": 0, "exited": 0}
    for pod in pods:
        statuses = (pod.get("status") or {}).get("containerStatuses") or ()
        if (pod.get("status") or {}).get("phase") == "Running":
            running_pods += 1
        for st in statuses:
            state = st.get("state") or {}
            if "running" in state:
                states["running"] += 1
            elif "terminated" in state:
                states["exited"] += 1
    return _exposition(
        [
            ("kubelet_node_name", "gauge", "[ALPHA] The node's name. The count is always 1.", [f'{{node="{node}"}} 1']),
            (
                "kubelet_running_containers",
                "gauge",
                "[ALPHA] Number of containers currently running",
                [f'{{container_state="{k}"}} {v}' for k, v in sorted(states.items())],
            ),
            (
                "kubelet_running_pods",
                "gauge",
                "[ALPHA] Number of pods that have a running pod sandbox",
                [f" {running_pods}"],
            ),
        ]
    )


def cadvisor_metrics(node: dict, pods: list[dict]) -> str:
    """cAdvisor's ``/metrics/cadvisor`` for these pods: each running container's CPU time,
    working set and start time (labels container, image, namespace, pod: there is no cgroup
    to name as ``id``), and the machine's cores and memory (the Node's capacity)."""
    from mockkube.machinery.quantity import parse_quantity

    ts = int(time.time() * 1000)
    cpu, mem, start = [], [], []
    for pod, figures in _figures(pods):
        m = pod["metadata"]
        for f in figures:
            rest = f'image="{f.image}",namespace="{m.get("namespace", "")}",pod="{m["name"]}"'
            labels = f'container="{f.name}",{rest}'
            cpu.append(f'{{container="{f.name}",cpu="total",{rest}}} {_num(f.cpu_seconds)} {ts}')
            mem.append(f"{{{labels}}} {_num(f.memory_bytes)} {ts}")
            start.append(f"{{{labels}}} {_num(f.started)} {ts}")
    capacity = (node.get("status") or {}).get("capacity") or {}

    def amount(key: str) -> list[str]:
        try:
            return [f" {_num(parse_quantity(capacity[key]).value())}"] if key in capacity else []
        except ValueError:
            return []

    return _exposition(
        [
            ("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds.", cpu),
            ("container_memory_working_set_bytes", "gauge", "Current working set in bytes.", mem),
            (
                "container_start_time_seconds",
                "gauge",
                "Start time of the container since unix epoch in seconds.",
                start,
            ),
            ("machine_cpu_cores", "gauge", "Number of logical CPU cores.", amount("cpu")),
            ("machine_memory_bytes", "gauge", "Amount of memory installed on the machine.", amount("memory")),
        ]
    )


def probe_metrics(pods: list[dict]) -> str:
    """The prober's ``/metrics/probes``: how often each probe of a process container ran, by
    result (a simulated container runs no probes)."""
    from mockkube.kubelet.runtime import process

    samples = []
    for pod in sorted(pods, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"]["name"])):
        m = pod["metadata"]
        pp = process.pod(m.get("uid", ""))
        if pp is None or pp.holder:
            continue
        for (container, kind, result), n in sorted(pp.probe_counts.items()):
            labels = (
                f'container="{container}",namespace="{m.get("namespace", "")}",pod="{m["name"]}",'
                f'pod_uid="{m["uid"]}",probe_type="{kind}",result="{result}"'
            )
            samples.append(f"{{{labels}}} {n}")
    help_text = "[ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result."
    return _exposition([("prober_probe_total", "counter", help_text, samples)])


def summary(node: dict, pods: list[dict], now: float) -> dict:
    """The kubelet's ``/stats/summary`` (stats/v1alpha1 Summary) for these pods: CPU time and
    memory per container, pod and node, as with ``only_cpu_and_memory=true`` (no network,
    filesystem or volume figures: there are none to read); CPU as ``usageCoreNanoSeconds``,
    not ``usageNanoCores`` (a rate cAdvisor takes from its own earlier samples)."""
    from mockkube.machinery.quantity import parse_quantity

    t = meta.rfc3339(now)

    def cpu(seconds: float) -> dict:
        return {"time": t, "usageCoreNanoSeconds": int(round(seconds * 1e9))}

    def memory(used: int) -> dict:
        return {"time": t, "usageBytes": used, "workingSetBytes": used, "rssBytes": used}

    out, node_cpu, node_mem = [], 0.0, 0
    for pod, figures in _figures(pods):
        m = pod["metadata"]
        pod_cpu, pod_mem = sum(f.cpu_seconds for f in figures), sum(f.memory_bytes for f in figures)
        node_cpu, node_mem = node_cpu + pod_cpu, node_mem + pod_mem
        started = (pod.get("status") or {}).get("startTime") or meta.rfc3339(min(f.started for f in figures))
        containers = [
            {
                "name": f.name,
                "startTime": meta.rfc3339(f.started),
                "cpu": cpu(f.cpu_seconds),
                "memory": memory(f.memory_bytes),
            }
            for f in figures
        ]
        ref = {"name": m["name"], "namespace": m.get("namespace", ""), "uid": m.get("uid", "")}
        out.append(
            {
                "podRef": ref,
                "startTime": started,
                "containers": containers,
                "cpu": cpu(pod_cpu),
                "memory": memory(pod_mem),
            }
        )
    since = node["metadata"].get("creationTimestamp") or t
    node_memory = memory(node_mem)
    try:
        capacity = parse_quantity(((node.get("status") or {}).get("capacity") or {})["memory"]).value()
        node_memory["availableBytes"] = max(capacity - node_mem, 0)
    except (KeyError, ValueError):
        pass
    pods_container = {"name": "pods", "startTime": since, "cpu": cpu(node_cpu), "memory": memory(node_mem)}
    return {
        "node": {
            "nodeName": node["metadata"]["name"],
            "systemContainers": [pods_container],
            "startTime": since,
            "cpu": cpu(node_cpu),
            "memory": node_memory,
        },
        "pods": out,
    }


def _num(v: float) -> str:
    """A sample value as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it (client_golang's
    text format): the shortest digits, an exponent from 1e+06 up and below 1e-04."""
    v = float(v)
    if v == 0:
        return "0"
    from decimal import Decimal

    sign, digits, exponent = Decimal(repr(v)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp = len(digits) + int(exponent) - 1
    if exp < -4 or exp >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{'-' if sign else ''}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text
