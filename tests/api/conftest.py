"""An in-loop mockkube and an HTTP session for API tests."""

from __future__ import annotations

import aiohttp
import pytest

from mockkube.testing.cluster import running_server
from mockkube.testing.postgres import PostgresUnavailable, TempPostgres


class Api:
    """Small helper: JSON requests against one server, returning (status, body, headers)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, server) -> None:
        self.s = session
        self.url = url
        self.server = server

    async def req(
        self,
        method: str,
        path: str,
        body=None,
        *,
        ct: str = "application/json",
        raw: bytes | None = None,
        headers: dict | None = None,
        params: dict | None = None,
    ):
        import json

        h = {"Content-Type": ct, **(headers or {})}
        data = (
            raw if raw is not None else (json.dumps(body) if body is not None and not isinstance(body, str) else body)
        )
        async with self.s.request(method, self.url + path, data=data, headers=h, params=params) as r:
            text = await r.text()
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = text
            return r.status, parsed, r.headers

    async def get(self, path, **kw):
        return await self.req("GET", path, **kw)

    async def post(self, path, body, **kw):
        return await self.req("POST", path, body, **kw)

    async def put(self, path, body, **kw):
        return await self.req("PUT", path, body, **kw)

    async def patch(self, path, body, ct="application/merge-patch+json", **kw):
        return await self.req("PATCH", path, body, ct=ct, **kw)

    async def delete(self, path, body=None, **kw):
        return await self.req("DELETE", path, body, **kw)


@pytest.fixture
async def api():
    async with running_server(event_window=50) as server:
        async with aiohttp.ClientSession() as s:
            yield Api(s, server.url, server)


@pytest.fixture(scope="module")
def pg():
    """A throw-away PostgreSQL (initdb + pg_ctl) for one module; skipped where PostgreSQL is
    not installed, a failure in CI (which installs it)."""
    import os

    try:
        pg = TempPostgres().start()
    except PostgresUnavailable as e:
        if os.environ.get("CI"):
            raise  # CI installs PostgreSQL: its absence is a failure there
        pytest.skip(str(e))
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture(scope="module")
def pg_url(pg):
    return pg.url
