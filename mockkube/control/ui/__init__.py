"""The live dashboard at ``/mockkube/ui`` (docs/dashboard.md): one static page, no build
step and nothing fetched from the network, fed by ``GET /mockkube/v1/dashboard`` and kept
live by watches on the Kubernetes API."""

from __future__ import annotations

import json
from pathlib import Path

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY

PAGE = Path(__file__).with_name("dashboard.html")
WHY_ANNOTATION = "mockkube.dev/why-pending"


def _ready(node: dict) -> str:
    for c in (node.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status", "Unknown")
    return "Unknown"


def snapshot(server) -> dict:
    """Nodes x drivers x devices with who holds each device, shared pools, pending pods."""
    from mockkube.client.client import Client

    client = Client(server.resources, "dashboard")
    rt = client.rt
    nodes = client.list(rt("nodes"))
    slices = client.list(rt("resourceslices", "resource.k8s.io"))
    claims = client.list(rt("resourceclaims", "resource.k8s.io"))
    pods = client.list(rt("pods"))
    holders: dict[tuple, dict] = {}
    for c in claims:
        alloc = (c.get("status") or {}).get("allocation")
        if not alloc:
            continue
        m = c["metadata"]
        pods_of = [
            r.get("name") for r in (c.get("status") or {}).get("reservedFor") or () if r.get("resource") == "pods"
        ]
        for r in (alloc.get("devices") or {}).get("results") or ():
            holders[(r.get("driver"), r.get("pool"), r.get("device"))] = {
                "claim": f"{m.get('namespace')}/{m.get('name')}",
                "pods": pods_of,
                "namespace": m.get("namespace"),
            }
    by_node: dict[str, dict[str, list]] = {}
    shared: dict[str, list] = {}
    for s in sorted(slices, key=lambda s: s["metadata"]["name"]):
        spec = s.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for d in spec.get("devices") or ():
            entry = {
                "name": d.get("name"),
                "pool": pool,
                "taints": d.get("taints") or [],
                "holder": holders.get((driver, pool, d.get("name"))),
            }
            if spec.get("nodeName"):
                by_node.setdefault(spec["nodeName"], {}).setdefault(driver, []).append(entry)
            else:
                shared.setdefault(f"{driver} / {pool}", []).append(entry)
    out_nodes = []
    for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = n["metadata"]["name"]
        out_nodes.append(
            {
                "name": name,
                "ready": _ready(n),
                "taints": (n.get("spec") or {}).get("taints") or [],
                "unschedulable": bool((n.get("spec") or {}).get("unschedulable")),
                "drivers": by_node.pop(name, {}),
            }
        )
    for name, drivers in sorted(by_node.items()):  # slices naming a node that does not exist
        out_nodes.append({"name": name, "ready": "Missing", "taints": [], "unschedulable": False, "drivers": drivers})
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
        "shared": [{"pool": k, "devices": v} for k, v in sorted(shared.items())],
        "pending": pending,
    }


async def page(request: web.Request) -> web.Response:
    return web.Response(body=PAGE.read_bytes(), content_type="text/html", charset="utf-8")


async def data(request: web.Request) -> web.Response:
    body = snapshot(request.app[SERVER_KEY])
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


def setup(app: web.Application) -> None:
    app.router.add_get("/mockkube/ui", page)
    app.router.add_get("/mockkube/ui/", page)
    app.router.add_get("/mockkube/v1/dashboard", data)
