"""The listening socket's connection timeouts, as kube-apiserver's secure serving sets them
on Go's http.Server (staging/src/k8s.io/apiserver/pkg/server/secure_serving.go):

- ``IdleTimeout`` 90 s: a keep-alive connection with no request for that long is closed
  (aiohttp's own keep-alive timeout, whose default is an hour);
- ``ReadHeaderTimeout`` 32 s: a connection gets that long from its first byte (from its
  accept, or the end of its TLS handshake, for its first request) to send a whole request
  line and headers, else it is closed without an answer, as Go closes it; aiohttp has no
  such timeout, so a client that sends half a request line would hold its connection (and
  its buffers) until the idle timeout;
- the TLS handshake gets the same 32 s (Go takes the smallest of the read timeouts),
  where asyncio's default is 60 s.

The header timeout costs the hot path one comparison per received chunk: the connection
notes when it started waiting for headers, and one sweep per server (every second, or a
quarter of a shorter timeout) closes those that waited too long.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from dataclasses import dataclass

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

IDLE_TIMEOUT = 90.0  # Go http.Server IdleTimeout in kube-apiserver
HEADER_TIMEOUT = 32.0  # ReadHeaderTimeout ("just shy of requestTimeoutUpperBound")


@dataclass(frozen=True)
class Timeouts:
    """Connection timeouts in seconds (tests shorten them; 0 turns one off)."""

    idle: float = IDLE_TIMEOUT
    header: float = HEADER_TIMEOUT
    tls_handshake: float = HEADER_TIMEOUT


class _Handler(RequestHandler):
    """aiohttp's request handler noting when it began waiting for a request's headers, and
    telling long requests when their client is gone (``client_gone``)."""

    __slots__ = ("_hdr_since", "_hdr_count", "_hdr_epoch", "_gone")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._hdr_since: float | None = self._loop.time()
        self._hdr_count = self._request_count
        self._hdr_epoch = getattr(self, "_next_keepalive_close_time", None)
        self._gone: list[asyncio.Future] = []

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        for fut in self._gone:
            if not fut.done():
                fut.set_result(None)
        self._gone.clear()

    def data_received(self, data: bytes) -> None:
        # aiohttp moves the keep-alive close time after every response: the first bytes after
        # that (a new idle period) start the header timer; a body's bytes do not
        epoch = getattr(self, "_next_keepalive_close_time", None)
        if epoch != self._hdr_epoch:
            self._hdr_epoch = epoch
            self._hdr_since = self._loop.time()
            self._hdr_count = self._request_count
        super().data_received(data)

    def _headers_overdue(self, before: float) -> bool:
        since = self._hdr_since
        if since is None:
            return False
        if self._request_count != self._hdr_count or self._request_in_progress:
            self._hdr_since = None  # the headers came in full
            return False
        return since < before


def client_gone(request: web.BaseRequest) -> asyncio.Future:
    """A future done once the request's connection is lost: Go's server cancels a request's
    context when its client goes (a reset, or the end of its sending side), and a watch,
    a log follow or an exec ends at once; aiohttp leaves a handler waiting until it next
    writes, which a quiet watch may never do. (Never done for a handler not of this module.)"""
    fut = asyncio.get_running_loop().create_future()
    proto = request.protocol
    if isinstance(proto, _Handler):
        if proto.transport is None or proto.transport.is_closing():
            fut.set_result(None)
        else:
            proto._gone = [f for f in proto._gone if not f.done()]  # earlier requests' (keep-alive)
            proto._gone.append(fut)
    return fut


class Site(web.SockSite):
    """``web.SockSite`` with the timeouts above: the handshake timeout on the listening
    server, the header timeout swept, the idle timeout given to aiohttp's handlers."""

    def __init__(
        self, runner: web.AppRunner, sock: socket.socket, ssl_context: ssl.SSLContext | None, timeouts: Timeouts
    ) -> None:
        super().__init__(runner, sock, ssl_context=ssl_context, backlog=1024)
        self.timeouts = timeouts
        self._sweeper: asyncio.Task | None = None

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        kwargs = dict(server._kwargs)  # the runner's handler settings (line and field sizes)
        if self.timeouts.idle:
            kwargs["keepalive_timeout"] = self.timeouts.idle

        def handler() -> RequestHandler:
            return _Handler(server, loop=loop, **kwargs)

        extra = (
            {"ssl_handshake_timeout": self.timeouts.tls_handshake}
            if self._ssl_context and self.timeouts.tls_handshake
            else {}
        )
        self._server = await loop.create_server(
            handler, sock=self._sock, ssl=self._ssl_context, backlog=self._backlog, **extra
        )
        if self.timeouts.header:
            self._sweeper = loop.create_task(self._sweep(server), name="header-timeout")

    async def _sweep(self, server: web.Server) -> None:
        timeout = self.timeouts.header
        every = min(1.0, timeout / 4)
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(every)
            before = loop.time() - timeout
            for conn in list(server.connections):
                if isinstance(conn, _Handler) and conn._headers_overdue(before):
                    conn.force_close()  # as Go: closed, no answer

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        await super().stop()
