"""The aiohttp application: error rendering, health, discovery and the resource verbs."""

from __future__ import annotations

import asyncio
import logging
import traceback

from aiohttp import web

from mockkube.apiserver.http import discovery, health, openapi
from mockkube.apiserver.http.handlers import API
from mockkube.apiserver.http.responses import json_response
from mockkube.apiserver.rest import Resources
from mockkube.machinery import errors
from mockkube.machinery.registry import Registry

log = logging.getLogger("mockkube.api")

STOPPING = web.AppKey("stopping", asyncio.Event)
STARTED = web.AppKey("started", asyncio.Event)  # set once the post-start hooks (the components) are done
API_KEY = web.AppKey("api", API)
SERVER_KEY = web.AppKey("server", object)  # the assembling Server, for endpoints beyond the API


@web.middleware
async def status_errors(request: web.Request, handler):
    """Every failure leaves as a Status object, never as a bare 500 page."""
    try:
        return await handler(request)
    except errors.APIError as e:
        resp = json_response(_dump(e.status()), e.code)
        for k, v in e.headers.items():
            resp.headers[k] = v
        return resp
    except web.HTTPException as e:
        if e.status >= 400:
            err = errors.APIError(e.status, _reason(e.status), e.reason or "error")
            return json_response(_dump(err.status()), e.status)
        raise
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception as e:  # a bug: report it in kube's shape and keep serving
        log.error("internal error on %s %s: %s", request.method, request.path, traceback.format_exc())
        err = errors.internal(f"{type(e).__name__}: {e}")
        return json_response(_dump(err.status()), 500)


def _reason(code: int) -> str:
    return {
        400: "BadRequest",
        401: "Unauthorized",
        403: "Forbidden",
        404: "NotFound",
        405: "MethodNotAllowed",
        406: "NotAcceptable",
        409: "Conflict",
        413: "RequestEntityTooLarge",
        415: "UnsupportedMediaType",
        422: "Invalid",
        429: "TooManyRequests",
    }.get(code, "InternalError" if code >= 500 else "Unknown")


_UNLISTED = {"/", "/index.html", "/version/"}  # upstream's UnlistedHandle paths and go-restful's slash form


def _plain(status: int, text: str) -> web.Response:
    return web.Response(
        status=status,
        text=text,
        content_type="text/plain",
        charset="utf-8",
        headers={"X-Content-Type-Options": "nosniff"},
    )


def _dump(obj) -> bytes:
    import json

    return json.dumps(obj, separators=(",", ":")).encode()


def build_app(resources: Resources, registry: Registry, metrics=None) -> web.Application:
    stopping = asyncio.Event()
    from mockkube.apiserver.http import authn, authz

    middlewares = [status_errors, authn.authenticate, authz.authorize]
    if metrics is not None:
        from mockkube.apiserver.http import requestmetrics

        middlewares.insert(0, requestmetrics.middleware(metrics))  # sees the final status code
        try:
            metrics.registry.register(requestmetrics.StorageObjects(resources.store, registry))
        except ValueError:  # already registered by an earlier start of this server
            pass
    app = web.Application(middlewares=middlewares, client_max_size=8 * 1024 * 1024)
    api = API(resources, registry, stopping)
    from mockkube.apiserver.authz.context import AuthContext

    api.auth = AuthContext()  # the server fills in its authorizer and token authenticators
    app[STOPPING] = stopping
    started = app[STARTED] = asyncio.Event()
    app[API_KEY] = api

    async def health_root(request: web.Request) -> web.Response:
        reply = health.root(
            request.path.strip("/"), list(request.query.items()), stopping.is_set(), not started.is_set()
        )
        return _plain(reply.status, reply.text)

    async def health_check(request: web.Request) -> web.Response:
        reply = health.single(
            request.match_info["endpoint"], request.match_info["check"], stopping.is_set(), not started.is_set()
        )
        return _plain(404, "404 page not found\n") if reply is None else _plain(reply.status, reply.text)

    async def version(request: web.Request) -> web.Response:
        return json_response(discovery.dumps(discovery.version_info()))

    async def index(request: web.Request) -> web.Response:
        served = [
            r.canonical
            for r in request.app.router.resources()
            if "{" not in r.canonical and not r.canonical.startswith("/mockkube") and r.canonical not in _UNLISTED
        ]
        served += [f"/{endpoint}/{check}" for endpoint, checks in health.CHECKS.items() for check in checks]
        return json_response(discovery.dumps(discovery.root_paths(registry, served)))

    async def metrics_text(request: web.Request) -> web.Response:
        from mockkube.machinery.metrics import CONTENT_TYPE_LATEST

        body = metrics.exposition() if metrics is not None else b""
        for source in getattr(metrics, "sources", ()):
            body += await source()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def on_shutdown(app: web.Application) -> None:
        stopping.set()
        resources.store.hub.close_all()

    app.on_shutdown.append(on_shutdown)
    for path in ("/readyz", "/livez", "/healthz"):
        app.router.add_get(path, health_root)
    app.router.add_get("/{endpoint:readyz|livez|healthz}/{check:.+}", health_check)
    # go-restful's WebService "/version" with the route "/" matches "/version" and "/version/"
    # alike; the health endpoints and /openapi/v2 are exact paths of the non-go-restful mux.
    app.router.add_get("/version", version)
    app.router.add_get("/version/", version)
    app.router.add_get("/", index)
    app.router.add_get("/index.html", index)
    app.router.add_get("/metrics", metrics_text)
    openapi.setup(app, registry=registry)
    app.router.add_route("*", "/api", api.handle)
    app.router.add_route("*", "/api/{tail:.*}", api.handle)
    app.router.add_route("*", "/apis", api.handle)
    app.router.add_route("*", "/apis/{tail:.*}", api.handle)
    return app
