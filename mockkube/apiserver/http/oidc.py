"""ServiceAccount issuer discovery (``/.well-known/openid-configuration``, ``/openid/v1/jwks``),
so relying parties can verify ServiceAccount tokens themselves, as on a real cluster."""

from __future__ import annotations

import json

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY


def _json(body: dict) -> web.Response:
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


async def configuration(request: web.Request) -> web.Response:
    server = request.app[SERVER_KEY]
    return _json(server.sa_signer.openid_configuration(f"{server.url}/openid/v1/jwks"))


async def jwks(request: web.Request) -> web.Response:
    resp = _json(request.app[SERVER_KEY].sa_signer.jwks())
    resp.content_type = "application/jwk-set+json"
    return resp


def setup(app: web.Application) -> None:
    app.router.add_get("/.well-known/openid-configuration", configuration)
    app.router.add_get("/openid/v1/jwks", jwks)
