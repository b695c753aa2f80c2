"""Injected API faults on the wire, and the HTTP face of the fault registry
(mockkube/machinery/faults.py):

- ``GET    /mockkube/v1/faults``: ``{"kind": "FaultList", "items": [...]}``
- ``POST   /mockkube/v1/faults``: body a fault spec (JSON or YAML); answers the fault (201)
- ``DELETE /mockkube/v1/faults/{id}``: remove one (cluster faults are undone)
- ``DELETE /mockkube/v1/faults``: remove all
Errors are Kubernetes ``Status`` objects like everything else the server returns.
"""

from __future__ import annotations

import asyncio
import json

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY
from mockkube.machinery import errors
from mockkube.machinery.faults import CLUSTER_KINDS, FaultError

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def parse_target(request: web.Request) -> tuple[str, str, str, str, str] | None:
    """(verb, resource, subresource, namespace, name) of a Kubernetes API request, or None
    for everything else (discovery, health, /mockkube/...)."""
    parts = [p for p in request.path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        rest = parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        rest = parts[3:]
    else:
        return None
    if not rest:
        return None
    ns = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    if resource == "namespaces" and name and not ns:
        ns = name
    sub = rest[2] if len(rest) > 2 else ""
    m = request.method
    if m == "GET":
        verb = "get" if name else ("watch" if request.query.get("watch") in ("1", "true") else "list")
    elif m == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _VERBS.get(m, m.lower())
    return verb, resource, sub, ns, name


def _error_for(fault, resource: str, name: str) -> errors.APIError:
    code = fault.spec.get("code", 500)
    msg = fault.spec.get("message")
    if code == 409:
        return errors.APIError(
            409,
            "Conflict",
            msg
            or f'Operation cannot be fulfilled on {resource} "{name}": the '
            "object has been modified; please apply your changes to the latest version and try "
            "again",
            {"name": name, "kind": resource},
        )
    if code == 429:
        return errors.too_many_requests(
            msg or "Too many requests, please try again later.", int(fault.spec.get("retryAfterSeconds", 1))
        )
    if code == 503:
        return errors.service_unavailable(msg or "the server is currently unable to handle the request")
    if code == 504:
        return errors.APIError(
            504,
            "Timeout",
            msg
            or "the server was unable to return a response in the time "
            "allotted, but may still be processing the request",
            {"retryAfterSeconds": int(fault.spec.get("retryAfterSeconds", 1))},
        )
    return errors.internal(msg or f"injected fault {fault.id}")


@web.middleware
async def inject(request: web.Request, handler):
    faults = request.app[SERVER_KEY].faults
    if not len(faults):
        return await handler(request)
    target = parse_target(request)
    if target is None:
        return await handler(request)
    verb, resource, sub, ns, name = target
    from mockkube.apiserver.http.identity import request_user

    rv = request.query.get("resourceVersion", "")
    fired = faults.match_api(
        verb,
        resource,
        sub,
        ns,
        request_user(request).get("username", ""),
        resumes_watch=verb == "watch" and rv not in ("", "0"),
    )
    drop_after = None
    for f in fired:
        if f.kind == "latency":
            await asyncio.sleep(float(f.spec.get("delaySeconds", 1.0)))
    for f in fired:
        if f.kind == "error":
            raise _error_for(f, resource, name)
        if f.kind == "gone":
            store = request.app[SERVER_KEY].store
            raise errors.too_old(int(rv) if rv.isdigit() else 0, store.rv)
        if f.kind == "drop-watch":
            drop_after = float(f.spec.get("afterSeconds", 0.0))
    if drop_after is not None and request.transport is not None:
        transport = request.transport
        asyncio.get_running_loop().call_later(drop_after, transport.close)
    return await handler(request)


def _ok(body: dict, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(body).encode() + b"\n", status=status, content_type="application/json")


async def list_faults(request: web.Request) -> web.Response:
    return _ok({"kind": "FaultList", "items": request.app[SERVER_KEY].faults.list()})


async def add_fault(request: web.Request) -> web.Response:
    import yaml

    server = request.app[SERVER_KEY]
    text = await request.text()
    try:
        spec = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as e:
        raise errors.bad_request(f"request body is not YAML or JSON: {e}") from None
    kind = spec.get("kind") if isinstance(spec, dict) else None
    try:
        if kind in CLUSTER_KINDS:
            fault = await server.on_cluster(server.faults.add, spec)
        else:
            fault = server.faults.add(spec)
    except FaultError as e:
        raise errors.APIError(422, "Invalid", f"fault: {e}") from None
    except KeyError as e:
        raise errors.APIError(404, "NotFound", str(e.args[0])) from None
    return _ok(fault.to_dict(server.clock()), 201)


async def remove_fault(request: web.Request) -> web.Response:
    server = request.app[SERVER_KEY]
    fault_id = request.match_info["id"]
    if not await server.on_cluster(server.faults.remove, fault_id):
        raise errors.APIError(404, "NotFound", f'fault "{fault_id}" not found')
    return _ok({"kind": "Status", "status": "Success", "details": {"name": fault_id}})


async def clear_faults(request: web.Request) -> web.Response:
    server = request.app[SERVER_KEY]
    n = await server.on_cluster(server.faults.clear)
    return _ok({"kind": "Status", "status": "Success", "details": {"removed": n}})


def setup(app: web.Application) -> None:
    app.middlewares.append(inject)
    app.router.add_get("/mockkube/v1/faults", list_faults)
    app.router.add_post("/mockkube/v1/faults", add_fault)
    app.router.add_delete("/mockkube/v1/faults", clear_faults)
    app.router.add_delete("/mockkube/v1/faults/{id}", remove_fault)
