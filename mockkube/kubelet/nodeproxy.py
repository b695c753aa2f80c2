"""``nodes/{name}/proxy/...``: what the API server's node proxy reaches on a node's kubelet
(its port 10250). Served: ``healthz``, ``pods`` (the pods bound to the node, as the kubelet
lists them) and ``metrics/resource``, the kubelet's resource metrics (what metrics-server
scrapes: CPU time and working set per container, pod and node). A process container's
figures are its processes' (runtime/usage.py); a simulated container uses nothing, so its
figures are 0. The node's own are the sum of its pods' (it is not a machine of its own)."""

from __future__ import annotations

import json
import time
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


def _not_found() -> web.Response:
    return web.Response(status=404, text="404 page not found\n", content_type="text/plain")


def pods_on(server: Any, node: str) -> list[dict]:
    rt = server.registry.get("", "v1", "pods")
    return [p for p in server.store.objects(rt) if (p.get("spec") or {}).get("nodeName") == node]


async def serve(server: Any, request: web.Request, node: dict, path: str) -> web.StreamResponse:
    """The kubelet's answer to ``GET /<path>`` (through the API server's node proxy)."""
    name = node["metadata"]["name"]
    if request.method != "GET":
        return web.Response(status=405, text="405 method not allowed\n", content_type="text/plain")
    if path == "healthz":
        return web.Response(text="ok", content_type="text/plain")
    if path == "pods":
        body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods_on(server, name)}
        return web.Response(body=json.dumps(body, separators=(",", ":")).encode(), content_type="application/json")
    if path == "metrics/resource":
        return web.Response(
            text=resource_metrics(pods_on(server, name)),
            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
        )
    return _not_found()


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
    from mockkube.kubelet.runtime import process, usage

    ts = int(time.time() * 1000)
    inits: dict[tuple[str, str], int] = {}
    for pod in pods:
        pp = process.pod(pod["metadata"].get("uid", ""))
        for cs in pp.containers if pp is not None and not pp.holder else ():
            if cs.running and cs.current is not None and cs.current.proc is not None:
                inits[(pod["metadata"]["uid"], cs.name)] = cs.current.proc.child_pid
    used = usage.of_namespaces(list(inits.values())) if inits else {}
    lines: dict[str, list[str]] = {m[0]: [] for m in _METRICS}
    node_cpu, node_mem = 0.0, 0
    for pod in sorted(pods, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"]["name"])):
        m = pod["metadata"]
        labels = f'namespace="{m.get("namespace", "")}",pod="{m["name"]}"'
        running = _running(pod)
        if not running:
            continue
        pod_cpu, pod_mem = 0.0, 0
        for cname, started in running:
            pid = inits.get((m["uid"], cname))
            u = used.get(pid) if pid is not None else None
            cpu, mem = (u.cpu_seconds, u.memory_bytes) if u is not None else (0.0, 0)
            pod_cpu, pod_mem = pod_cpu + cpu, pod_mem + mem
            cl = f'container="{cname}",{labels}'
            lines["container_cpu_usage_seconds_total"].append(f"{{{cl}}} {_num(cpu)} {ts}")
            lines["container_memory_working_set_bytes"].append(f"{{{cl}}} {_num(mem)} {ts}")
            lines["container_start_time_seconds"].append(f"{{{cl}}} {_num(started)} {ts}")
        lines["pod_cpu_usage_seconds_total"].append(f"{{{labels}}} {_num(pod_cpu)} {ts}")
        lines["pod_memory_working_set_bytes"].append(f"{{{labels}}} {_num(pod_mem)} {ts}")
        node_cpu, node_mem = node_cpu + pod_cpu, node_mem + pod_mem
    lines["node_cpu_usage_seconds_total"].append(f" {_num(node_cpu)} {ts}")
    lines["node_memory_working_set_bytes"].append(f" {_num(node_mem)} {ts}")
    lines["resource_scrape_error"].append(" 0")
    out = []
    for metric, typ, help_text in _METRICS:
        out.append(f"# HELP {metric} [STABLE] {help_text}")
        out.append(f"# TYPE {metric} {typ}")
        out += [metric + sample for sample in lines[metric]]
    return "\n".join(out) + "\n"


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
