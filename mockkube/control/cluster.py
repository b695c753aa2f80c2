"""mockkube-specific HTTP endpoints (not part of the Kubernetes API):

- ``POST /mockkube/v1/profile``: body a profile (YAML or JSON); applies it.
- ``GET  /mockkube/v1/nodes/{node}/podresources``: prepared DRA claims per pod, shaped
  like the kubelet PodResources API ``List``.
- ``POST /mockkube/v1/nodes/{node}/kubelet``: ``{"running": false}`` stops that node's
  kubelet simulator (the node goes NotReady after the grace period), true restarts it.
- ``POST /mockkube/v1/drivers/{driver}/health``: ``{"pool": "<node or fabric pool>",
  "device": "gpu-0", "healthy": false, "effect": "NoExecute"}``.
Errors are Kubernetes ``Status`` objects like everything else the server returns.
"""

from __future__ import annotations

import json

from aiohttp import web

from mockkube.machinery import errors


def _runtime(request: web.Request):
    from mockkube.apiserver.http.app import SERVER_KEY
    from mockkube.kubelet.cluster import runtime_for

    server = request.app[SERVER_KEY]
    rt = runtime_for(server.resources)
    if rt is None and getattr(server, "node_shards", 0):
        raise errors.APIError(
            503,
            "ServiceUnavailable",
            "the node simulation runs in `mockkube kubelets` processes (--node-shards), which this endpoint "
            "does not reach (docs/scaling.md)",
        )
    if rt is None:
        raise errors.APIError(503, "ServiceUnavailable", "the node simulation is not running on this server")
    return rt


async def _on_cluster(request: web.Request, fn, *args):
    """Component state lives on the components' loop: reach it there."""
    from mockkube.apiserver.http.app import SERVER_KEY

    return await request.app[SERVER_KEY].on_cluster(fn, *args)


def _ok(body: dict, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(body).encode(), status=status, content_type="application/json")


async def _body(request: web.Request) -> object:
    import yaml

    text = await request.text()
    try:
        return yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as e:
        raise errors.bad_request(f"request body is not YAML or JSON: {e}") from None


async def apply_profile(request: web.Request) -> web.Response:
    from mockkube.config.profile import ProfileError, load

    rt = _runtime(request)
    text = await request.text()
    try:
        profile = load(text if "\n" in text else text + "\n")
    except ProfileError as e:
        raise errors.APIError(422, "Invalid", str(e)) from None
    return _ok({"kind": "ProfileApplied", **await _on_cluster(request, rt.apply, profile)})


async def pod_resources(request: web.Request) -> web.Response:
    node = request.match_info["node"]
    try:
        return _ok(await _on_cluster(request, _runtime(request).kubelet.pod_resources, node))
    except KeyError:
        raise errors.APIError(404, "NotFound", f"node {node!r} is not simulated") from None


async def plugin_dirs(request: web.Request) -> web.Response:
    """Where a DRA kubelet plugin for this node puts its sockets, and what has registered."""
    from mockkube.apiserver.http.app import SERVER_KEY

    rt = _runtime(request)
    node = request.match_info["node"]
    try:
        return _ok(await request.app[SERVER_KEY].on_cluster(rt.plugin_dirs, node))
    except KeyError:
        raise errors.APIError(404, "NotFound", f"node {node!r} is not simulated") from None


async def kubelet_state(request: web.Request) -> web.Response:
    rt = _runtime(request)
    node = request.match_info["node"]
    body = await _body(request)
    if node not in rt.kubelet.nodes:
        raise errors.APIError(404, "NotFound", f"node {node!r} is not simulated")
    running = bool((body or {}).get("running", True)) if isinstance(body, dict) else True
    await _on_cluster(request, rt.start_kubelet if running else rt.stop_kubelet, node)
    return _ok({"node": node, "running": running})


async def device_health(request: web.Request) -> web.Response:
    rt = _runtime(request)
    body = await _body(request)
    if not isinstance(body, dict) or not body.get("device") or not (body.get("pool") or body.get("node")):
        raise errors.bad_request("body needs `device` and `pool` (or `node`)")
    effect = body.get("effect")
    if effect not in (None, "NoSchedule", "NoExecute", "None"):
        raise errors.bad_request(f"effect {effect!r}: must be NoSchedule, NoExecute or None")
    driver = request.match_info["driver"]
    try:
        changed = await _on_cluster(
            request,
            rt.set_health,
            driver,
            body.get("pool") or body["node"],
            body["device"],
            bool(body.get("healthy", False)),
            effect,
        )
    except KeyError as e:
        raise errors.APIError(404, "NotFound", str(e.args[0])) from None
    return _ok(
        {"driver": driver, "device": body["device"], "healthy": bool(body.get("healthy", False)), "changed": changed}
    )


def setup(app: web.Application) -> None:
    app.router.add_post("/mockkube/v1/profile", apply_profile)
    app.router.add_get("/mockkube/v1/nodes/{node}/podresources", pod_resources)
    app.router.add_post("/mockkube/v1/nodes/{node}/kubelet", kubelet_state)
    app.router.add_get("/mockkube/v1/nodes/{node}/plugins", plugin_dirs)
    app.router.add_post("/mockkube/v1/drivers/{driver}/health", device_health)
