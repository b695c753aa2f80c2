"""The live dashboard at ``/mockkube/ui`` (docs/dashboard.md): one static page and uPlot
(served from the package: no build step, nothing fetched from the network), fed by
``GET /mockkube/v1/dashboard`` (the cluster's state, redrawn when a watch on the
Kubernetes API says something changed) and ``GET /mockkube/v1/dashboard/metrics`` (a
sample of the server's own metrics, which the page keeps as time series)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY

HERE = Path(__file__).parent
PAGE = HERE / "dashboard.html"
VENDOR = HERE / "vendor"
ASSETS = {  # what /mockkube/ui/vendor/ serves, and nothing else
    "uPlot.iife.min.js": "application/javascript",
    "uPlot.min.css": "text/css",
    "uPlot.LICENSE": "text/plain",
}
WHY_ANNOTATION = "mockkube.dev/why-pending"
UNHEALTHY_SUFFIX = "/unhealthy"  # the taint key a driver publishes for a device it reports unhealthy


def _ready(node: dict) -> str:
    for c in (node.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status", "Unknown")
    return "Unknown"


def _newest_generation(slices: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(driver, pool) -> its slices of the newest generation (older ones are on their way out)."""
    pools: dict[tuple[str, str], list[dict]] = {}
    for s in sorted(slices, key=lambda s: s["metadata"]["name"]):
        spec = s.get("spec") or {}
        pools.setdefault((spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")), []).append(s)
    for key, group in pools.items():
        gen = max(int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in group)
        pools[key] = [s for s in group if int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) == gen]
    return pools


def _holders(claims: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """(driver, pool, device) -> the claims allocated it, with their pods and consumed capacity."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for c in claims:
        status = c.get("status") or {}
        alloc = status.get("allocation")
        if not alloc:
            continue
        m = c["metadata"]
        pods = [r.get("name") for r in status.get("reservedFor") or () if r.get("resource") == "pods"]
        for r in (alloc.get("devices") or {}).get("results") or ():
            out.setdefault((r.get("driver"), r.get("pool"), r.get("device")), []).append(
                {
                    "claim": f"{m.get('namespace')}/{m.get('name')}",
                    "pods": pods,
                    "consumed": r.get("consumedCapacity") or {},
                }
            )
    return out


def _gauge(used, total) -> dict:
    """A gauge's numbers: the quantities as Kubernetes writes them and the fraction in use."""
    frac = float(used) / float(total) if float(total) > 0 else 0.0
    return {"used": str(used), "total": str(total), "fraction": round(min(max(frac, 0.0), 1.0), 4)}


def _pool_devices(driver: str, pool: str, slices: list[dict], holders: dict, rules: list[dict]) -> tuple[list, list]:
    """The pool's devices with their state, and its counter sets with what is in use."""
    from mockkube.dra import taints as dtaints
    from mockkube.dra.qty import ZERO, q

    sets: dict[str, dict[str, object]] = {}  # counter set -> counter -> capacity
    raw: list[tuple[dict, str]] = []  # (device, nodeName or "")
    for s in slices:
        spec = s.get("spec") or {}
        for cs in spec.get("sharedCounters") or ():
            sets[cs.get("name", "")] = {
                n: q((c or {}).get("value", "0")) for n, c in (cs.get("counters") or {}).items()
            }
        for d in spec.get("devices") or ():
            raw.append((d, spec.get("nodeName") or ""))

    def draws(d: dict) -> list[tuple[str, str, object]]:
        return [
            (dc.get("counterSet", ""), n, q((c or {}).get("value", "0")))
            for dc in d.get("consumesCounters") or ()
            for n, c in (dc.get("counters") or {}).items()
        ]

    used: dict[str, dict[str, object]] = {cs: {n: ZERO for n in counters} for cs, counters in sets.items()}
    users: dict[str, list[str]] = {}  # counter set -> allocated devices drawing from it
    for d, _ in raw:
        if holders.get((driver, pool, d.get("name"))):
            for cs, n, amount in draws(d):
                if n in used.get(cs, {}):
                    used[cs][n] = used[cs][n] + amount
                    if d.get("name") not in users.setdefault(cs, []):
                        users[cs].append(d.get("name"))
    devices = []
    for d, node in raw:
        name = d.get("name", "")
        held = holders.get((driver, pool, name)) or []
        taints = dtaints.effective_taints(d, driver, pool, rules)
        blocked_by: list[str] = []
        if not held:
            for cs, n, amount in draws(d):
                have = sets.get(cs, {}).get(n)
                if have is not None and (have - used[cs][n]).cmp(amount) < 0:  # type: ignore[operator,union-attr]
                    blocked_by += [u for u in users.get(cs, []) if u not in blocked_by]
        capacity = {}
        if d.get("allowMultipleAllocations"):  # consumable capacity: what the claims sharing it took
            for cname, c in (d.get("capacity") or {}).items():
                total = q((c or {}).get("value", "0"))
                taken = ZERO
                for h in held:
                    if cname in h["consumed"]:
                        taken = taken + q(h["consumed"][cname])
                capacity[cname] = _gauge(taken, total)
        unhealthy = any(str(t.get("key", "")).endswith(UNHEALTHY_SUFFIX) for t in taints)
        state = (
            "allocated"
            if held
            else "blocked"
            if blocked_by
            else "unhealthy"
            if unhealthy
            else "tainted"
            if taints
            else "free"
        )
        attrs = d.get("attributes") or {}
        parent = (attrs.get("parent") or {}).get("string", "")
        devices.append(
            {
                "name": name,
                "pool": pool,
                "node": node,
                "state": state,
                "holders": [{"claim": h["claim"], "pods": h["pods"]} for h in held],
                "blockedBy": blocked_by,
                "taints": taints,
                "unhealthy": unhealthy,
                "counterSets": sorted({cs for cs, _, _ in draws(d)}),
                "parent": parent,
                "capacity": capacity,
            }
        )
    counter_sets = [
        {
            "name": cs,
            "pool": pool,
            "counters": {n: _gauge(used[cs][n], cap) for n, cap in counters.items()},
            "usedBy": users.get(cs, []),
        }
        for cs, counters in sorted(sets.items())
    ]
    return devices, counter_sets


def _claim_row(c: dict) -> dict:
    """A claim's state as a person reads it, with its devices' binding conditions (KEP-5007)."""
    m, status = c["metadata"], c.get("status") or {}
    alloc = status.get("allocation") or {}
    results = (alloc.get("devices") or {}).get("results") or []
    conditions = {
        (d.get("driver"), d.get("pool"), d.get("device")): {
            x.get("type"): x.get("status") for x in d.get("conditions") or ()
        }
        for d in status.get("devices") or ()
    }
    binding = []
    for r in results:
        have = conditions.get((r.get("driver"), r.get("pool"), r.get("device")), {})
        for kind in ("bindingConditions", "bindingFailureConditions"):
            for t in r.get(kind) or ():
                binding.append(
                    {
                        "device": r.get("device"),
                        "type": t,
                        "status": have.get(t, "Unknown"),
                        "failure": kind == "bindingFailureConditions",
                    }
                )
    pods = [r.get("name") for r in status.get("reservedFor") or () if r.get("resource") == "pods"]
    if m.get("deletionTimestamp"):
        state = "deleting"
    elif not alloc:
        state = "pending"
    elif any(b["failure"] and b["status"] == "True" for b in binding):
        state = "binding failed"
    elif any(not b["failure"] and b["status"] != "True" for b in binding):
        state = "binding"
    elif pods:
        state = "in use"
    else:
        state = "allocated"
    return {
        "claim": f"{m.get('namespace')}/{m.get('name')}",
        "state": state,
        "devices": [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results],
        "pods": pods,
        "bindingConditions": binding,
    }


def snapshot(server) -> dict:
    """Nodes x drivers x devices with each device's state, counter sets and consumable
    capacity in use, shared pools, claims and pending pods."""
    from mockkube.client.client import Client

    client = Client(server.resources, "dashboard")
    rt = client.rt
    nodes = client.list(rt("nodes"))
    slices = client.list(rt("resourceslices", "resource.k8s.io"))
    claims = client.list(rt("resourceclaims", "resource.k8s.io"))
    try:  # DeviceTaintRules are served only with DRADeviceTaintRules and v1beta2 on
        rules = client.list(rt("devicetaintrules", "resource.k8s.io"))
    except KeyError:
        rules = []
    pods = client.list(rt("pods"))
    holders = _holders(claims)
    by_node: dict[str, list[dict]] = {}
    shared: list[dict] = []
    for (driver, pool), group in sorted(_newest_generation(slices).items()):
        devices, counter_sets = _pool_devices(driver, pool, group, holders, rules)
        entry = {"driver": driver, "pool": pool, "devices": devices, "counterSets": counter_sets}
        node_names = {(s.get("spec") or {}).get("nodeName") for s in group}
        if len(node_names) == 1 and None not in node_names and "" not in node_names:
            by_node.setdefault(node_names.pop(), []).append(entry)
        else:  # nodeSelector or allNodes slices: a pool several nodes reach
            shared.append(entry)
    out_nodes = []
    for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = n["metadata"]["name"]
        spec = n.get("spec") or {}
        out_nodes.append(
            {
                "name": name,
                "ready": _ready(n),
                "taints": spec.get("taints") or [],
                "unschedulable": bool(spec.get("unschedulable")),
                "pools": by_node.pop(name, []),
            }
        )
    for name, pools in sorted(by_node.items()):  # slices naming a node that does not exist
        out_nodes.append({"name": name, "ready": "Missing", "taints": [], "unschedulable": False, "pools": pools})
    pending = []
    for p in pods:
        spec, st = p.get("spec") or {}, p.get("status") or {}
        if spec.get("nodeName") or st.get("phase") in ("Succeeded", "Failed"):
            continue
        why = ((p["metadata"].get("annotations") or {}).get(WHY_ANNOTATION) or "").split("\n", 1)[0]
        if not why:
            why = next(
                (
                    c.get("message", "")
                    for c in st.get("conditions") or ()
                    if c.get("type") == "PodScheduled" and c.get("status") == "False"
                ),
                "waiting to be scheduled",
            )
        pending.append({"pod": f"{p['metadata'].get('namespace')}/{p['metadata']['name']}", "why": why})
    return {
        "resourceVersion": str(server.store.rv),
        "nodes": out_nodes,
        "shared": shared,
        "claims": [
            _claim_row(c) for c in sorted(claims, key=lambda c: (c["metadata"].get("namespace"), c["metadata"]["name"]))
        ],
        "pending": pending,
    }


# the server's metrics the charts draw (GET /metrics has them all)
ATTEMPTS = "scheduler_schedule_attempts"
ALLOCATIONS = "mockkube_dra_allocations"
SLI = "scheduler_pod_scheduling_sli_duration_seconds"
QUEUE = "scheduler_pending_pods"


async def metrics_sample(server) -> dict:
    """One sample for the charts: pods by phase and allocated claims from the store, and the
    scheduler's counters and latency histogram from its metrics (wherever the scheduler
    runs: ``/metrics`` gathers a scheduler process's too)."""
    from prometheus_client.parser import text_string_to_metric_families

    from mockkube.client.client import Client

    text = server.metrics.exposition() if server.metrics is not None else b""
    for source in getattr(server.metrics, "sources", ()):
        text += await source()
    attempts: dict[str, float] = {}
    buckets: dict[float, float] = {}
    allocations = 0.0
    queued = 0.0
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            if s.name == ATTEMPTS + "_total":
                result = s.labels.get("result", "")
                attempts[result] = attempts.get(result, 0.0) + s.value
            elif s.name == ALLOCATIONS + "_total":
                allocations += s.value
            elif s.name == SLI + "_bucket":
                le = float(s.labels["le"])
                buckets[le] = buckets.get(le, 0.0) + s.value
            elif s.name == QUEUE:
                queued += s.value
    client = Client(server.resources, "dashboard")
    phases: dict[str, int] = {}
    for p in client.list(client.rt("pods")):
        phase = (p.get("status") or {}).get("phase") or "Pending"
        phases[phase] = phases.get(phase, 0) + 1
    claims = client.list(client.rt("resourceclaims", "resource.k8s.io"))
    return {
        "time": time.time(),
        "pods": phases,
        "schedulerQueue": queued,
        "claimsAllocated": sum(1 for c in claims if (c.get("status") or {}).get("allocation")),
        "allocations": allocations,
        "attempts": attempts,
        # cumulative counts per upper bound (seconds); +Inf (all observations) apart, JSON has no infinity
        "latencyBuckets": sorted((le, n) for le, n in buckets.items() if le != float("inf")),
        "latencyCount": buckets.get(float("inf"), 0.0),
    }


async def page(request: web.Request) -> web.Response:
    return web.Response(body=PAGE.read_bytes(), content_type="text/html", charset="utf-8")


async def vendor(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in ASSETS:
        raise web.HTTPNotFound()
    return web.Response(
        body=(VENDOR / name).read_bytes(),
        content_type=ASSETS[name],
        charset="utf-8",
        headers={"Cache-Control": "max-age=3600"},
    )


async def data(request: web.Request) -> web.Response:
    body = snapshot(request.app[SERVER_KEY])
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


async def metrics(request: web.Request) -> web.Response:
    body = await metrics_sample(request.app[SERVER_KEY])
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


def setup(app: web.Application) -> None:
    app.router.add_get("/mockkube/ui", page)
    app.router.add_get("/mockkube/ui/", page)
    app.router.add_get("/mockkube/ui/vendor/{name}", vendor)
    app.router.add_get("/mockkube/v1/dashboard", data)
    app.router.add_get("/mockkube/v1/dashboard/metrics", metrics)
