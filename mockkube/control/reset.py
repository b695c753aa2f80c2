"""Test controls over HTTP, for users without the Python API (not part of the Kubernetes API):

- ``POST /mockkube/v1/reset``: back to the state the cluster settled into after start
  (see mockkube/storage/reset.py); answers what changed and how long it took.
- ``POST /mockkube/v1/settle``: returns once the cluster has settled after start (its
  components idle, the reset baseline taken): call it before a suite's first test.
- ``GET /mockkube/v1/clock``: ``{"now": "<RFC 3339>", "epoch": <seconds>, "frozen": bool}``.
- ``POST /mockkube/v1/clock``: one of ``{"advance": "10m"}``, ``{"set": "<RFC 3339>"}``,
  ``{"freeze": true}``, ``{"freeze": false}``, ``{"reset": true}``; answers like GET.
- ``POST /mockkube/v1/tokens``: ``{"user": "alice", "groups": ["devs"], "uid": "..."}`` answers
  ``{"token": "..."}``, a bearer token for that user, as if it were a line of the
  ``--token-auth-file`` (for tests that act as given users; authorized like any non-resource
  path, so only admins may ask). Kept until the server stops; a reset does not remove it.
Errors are Kubernetes ``Status`` objects like everything else the server returns.
"""

from __future__ import annotations

import json

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY
from mockkube.machinery import errors, meta
from mockkube.machinery.durations import parse_duration

CLOCK_ACTIONS = ("advance", "set", "freeze", "reset")


def _ok(body: dict) -> web.Response:
    return web.Response(body=json.dumps(body).encode() + b"\n", content_type="application/json")


def clock_state(clock) -> dict:
    now = clock()
    return {"now": meta.rfc3339_micro(now), "epoch": now, "frozen": bool(getattr(clock, "frozen", False))}


async def reset(request: web.Request) -> web.Response:
    server = request.app[SERVER_KEY]
    return _ok(await server.reset())


async def settle(request: web.Request) -> web.Response:
    await request.app[SERVER_KEY].settled()
    return _ok({})


async def get_clock(request: web.Request) -> web.Response:
    return _ok(clock_state(request.app[SERVER_KEY].clock))


async def post_clock(request: web.Request) -> web.Response:
    server = request.app[SERVER_KEY]
    clock = server.clock
    try:
        body = json.loads(await request.text() or "{}")
    except ValueError as e:
        raise errors.bad_request(f"request body is not JSON: {e}") from None
    if (
        not isinstance(body, dict)
        or len([k for k in body if k in CLOCK_ACTIONS]) != 1
        or set(body) - set(CLOCK_ACTIONS)
    ):
        raise errors.bad_request(f"the body must hold exactly one of {', '.join(CLOCK_ACTIONS)}")
    if not hasattr(clock, "advance"):
        raise errors.APIError(409, "Conflict", "this server's clock cannot be moved")
    ((action, value),) = body.items()
    try:
        if action == "advance":
            seconds = -1.0 if str(value).strip().startswith("-") else parse_duration(value)
            if seconds < 0:
                raise ValueError(f"advance: the clock only moves forward, got {value!r}")
            change = lambda: clock.advance(seconds)  # noqa: E731
        elif action == "set":
            t = meta.parse_time(str(value))
            change = lambda: clock.set(t)  # noqa: E731
        elif action == "freeze":
            if not isinstance(value, bool):
                raise ValueError("freeze: must be true or false")
            change = clock.freeze if value else clock.unfreeze
        else:
            change = clock.reset
    except ValueError as e:
        raise errors.APIError(400, "BadRequest", str(e)) from None
    await server.move_clock(change)
    return _ok(clock_state(clock))


async def post_token(request: web.Request) -> web.Response:
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise errors.bad_request("the body must be a JSON object") from None
    if not isinstance(body, dict) or not isinstance(body.get("user"), str) or not body["user"]:
        raise errors.bad_request('"user" (a non-empty string) is required')
    groups = body.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise errors.bad_request('"groups" must be a list of strings')
    server = request.app[SERVER_KEY]
    return _ok({"token": server.add_token(body["user"], groups, str(body.get("uid") or ""))})


def setup(app: web.Application) -> None:
    app.router.add_post("/mockkube/v1/tokens", post_token)
    app.router.add_post("/mockkube/v1/reset", reset)
    app.router.add_post("/mockkube/v1/settle", settle)
    app.router.add_get("/mockkube/v1/clock", get_clock)
    app.router.add_post("/mockkube/v1/clock", post_clock)
