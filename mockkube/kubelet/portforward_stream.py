"""pods/portforward: the channel protocol over WebSocket (the Python client's
``v4.channel.k8s.io``) and SPDY/3.1 tunnelled over WebSocket (kubectl 1.35's
``SPDY/3.1+portforward.k8s.io``). Each forwarded connection reaches what
mockkube/kubelet/portforward.py decides for the port.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import WSMsgType, web

from mockkube.kubelet import portforward as targets
from mockkube.kubelet import spdy
from mockkube.machinery import errors

TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"
CHANNEL_PROTOCOLS = ("v4.channel.k8s.io", "channel.k8s.io")


class _Channels:
    """The channel protocol's framing (one channel byte, then data) for port-forward."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    async def send(self, channel: int, data: bytes) -> None:
        if not self.ws.closed:
            await self.ws.send_bytes(bytes([channel]) + data)

    async def receive(self) -> tuple[int, bytes] | None:
        while True:
            msg = await self.ws.receive()
            if msg.type in (WSMsgType.BINARY, WSMsgType.TEXT) and msg.data:
                raw = msg.data if msg.type == WSMsgType.BINARY else msg.data.encode()
                return raw[0], bytes(raw[1:])
            if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                return None


def parse_ports(request: web.Request) -> list[int]:
    """The kubelet's parsePortForwardRequest: ``ports`` (or ``port``), each 1..65535."""
    raw = [
        p
        for v in request.query.getall("ports", []) + request.query.getall("port", [])
        for p in v.split(",")
        if p.strip()
    ]
    if not raw:
        raise errors.bad_request('query parameter "port" is required')
    ports = []
    for s in raw:
        s = s.strip()
        try:
            port = int(s)
            if not 0 <= port <= 65535:
                raise ValueError
        except ValueError:
            raise errors.bad_request(
                f'unable to parse "{s}" as a port: strconv.ParseUint: parsing "{s}": '
                f"{'value out of range' if s.isdigit() else 'invalid syntax'}"
            )
        if port == 0:
            raise errors.bad_request(f'port "{s}" must be > 0')
        ports.append(port)
    return ports


async def serve(request: web.Request, pod: dict) -> web.StreamResponse:
    name = pod["metadata"]["name"]
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    if (pod.get("status") or {}).get("phase") != "Running":
        raise errors.bad_request(f"pod {name} is not running")  # kubectl checks this itself, too
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise errors.bad_request("Upgrade request required")
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    if TUNNEL_PROTOCOL in offered:
        ws = web.WebSocketResponse(protocols=(TUNNEL_PROTOCOL,))
        await ws.prepare(request)
        await _spdy_session(ws, pod)
        return ws
    ports = parse_ports(request)
    ws = web.WebSocketResponse(protocols=CHANNEL_PROTOCOLS)
    await ws.prepare(request)
    await _channel_session(_Channels(ws), pod, ports)
    return ws


# -- the channel protocol: one WebSocket, one connection per port --------------------------


async def _channel_session(ch: _Channels, pod: dict, ports: list[int]) -> None:
    conns: dict[int, targets.Conn] = {}
    pumps = []
    for i, port in enumerate(ports):
        prefix = port.to_bytes(2, "little")
        await ch.send(2 * i, prefix)
        await ch.send(2 * i + 1, prefix)
        try:
            conns[i] = await targets.connect(pod, port)
        except ConnectionRefusedError as e:
            await ch.send(2 * i + 1, str(e).encode())
            continue
        pumps.append(asyncio.ensure_future(_to_client(ch, 2 * i, conns[i])))
    reader = asyncio.ensure_future(_from_client(ch, conns))
    # the session ends when the client goes (reader) or every target connection has ended;
    # the rest is cancelled then, which is how a stream ends, not an error: the gathering
    # future takes the pumps' outcomes (a pump cancelled, or failing to write to a
    # WebSocket the client dropped), so none is logged as "exception was never retrieved"
    waits = [reader, asyncio.gather(*pumps, return_exceptions=True)] if pumps else [reader]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in pumps + [reader]:
            task.cancel()
        for c in conns.values():
            c.close()
        reader.add_done_callback(_consume)
        with contextlib.suppress(Exception):
            await ch.ws.close()


def _consume(task: asyncio.Future) -> None:
    """Take a finished task's outcome: a cancelled stream, or one whose client is gone."""
    if not task.cancelled():
        task.exception()


async def _to_client(ch: _Channels, channel: int, conn: targets.Conn) -> None:
    while True:
        data = await conn.read()
        if not data:
            return
        await ch.send(channel, data)


async def _from_client(ch: _Channels, conns: dict[int, targets.Conn]) -> None:
    # only the server opens each channel with the port number; what the client sends on a
    # data channel is the connection's data from its first byte (upstream's kubelet hands
    # the stream to the forwarder as is)
    while True:
        msg = await ch.receive()
        if msg is None:
            return
        c, d = msg
        if c % 2 or c // 2 not in conns:
            continue
        if d:
            await conns[c // 2].write(d)


# -- SPDY/3.1 tunnelled in WebSocket binary messages --------------------------------------


class _SpdySession:
    def __init__(self, ws: web.WebSocketResponse, pod: dict) -> None:
        self.ws = ws
        self.pod = pod
        self.codec = spdy.Codec()
        self.lock = asyncio.Lock()
        self.pairs: dict[str, dict[str, int]] = {}  # requestID -> {"data": id, "error": id}
        self.conns: dict[int, targets.Conn] = {}  # data stream id -> connection
        self.inbox: dict[int, asyncio.Queue] = {}  # data stream id -> bytes from the client (b"" = FIN)
        self.tasks: set[asyncio.Task] = set()
        self.last = 0

    async def send(self, data: bytes) -> None:
        async with self.lock:
            if not self.ws.closed:
                await self.ws.send_bytes(data)

    async def run(self) -> None:
        while True:
            msg = await self.ws.receive()
            if msg.type != WSMsgType.BINARY:
                return
            for f in self.codec.feed(msg.data):
                await self.frame(f)

    async def frame(self, f: spdy.Frame) -> None:
        if not f.control:
            box = self.inbox.get(f.stream_id)
            if box is not None:
                if f.data:
                    box.put_nowait(f.data)
                if f.flags & spdy.FLAG_FIN:
                    box.put_nowait(b"")
            return
        if f.type == spdy.PING:
            await self.send(self.codec.ping(int.from_bytes(f.data[:4], "big")))
        elif f.type == spdy.SYN_STREAM:
            self.last = max(self.last, f.stream_id)
            await self.send(self.codec.syn_reply(f.stream_id))
            pair = self.pairs.setdefault(f.headers.get("requestid", str(f.stream_id)), {})
            kind = f.headers.get("streamtype", "data")
            pair[kind] = f.stream_id
            if kind == "data":
                self.inbox[f.stream_id] = asyncio.Queue()
            pair["port"] = int(f.headers.get("port", "0") or 0)
            if "data" in pair and "error" in pair:
                task = asyncio.ensure_future(self.forward(pair["port"], pair["data"], pair["error"]))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        elif f.type == spdy.RST_STREAM:
            box = self.inbox.get(f.stream_id)
            if box is not None:
                box.put_nowait(None)
        elif f.type == spdy.GOAWAY:
            await self.ws.close()

    async def forward(self, port: int, data_id: int, error_id: int) -> None:
        """The kubelet's portForward for one stream pair: copy until the target closes,
        then close both streams; a refused connection is reported on the error stream."""
        try:
            conn = await targets.connect(self.pod, port)
        except ConnectionRefusedError as e:
            await self.send(self.codec.data(error_id, str(e).encode(), fin=True))
            await self.send(self.codec.data(data_id, b"", fin=True))
            return
        self.conns[data_id] = conn
        upload = asyncio.ensure_future(self.upload(data_id, conn))
        try:
            while True:
                data = await conn.read()
                if not data:
                    break
                await self.send(self.codec.data(data_id, data))
        finally:
            upload.cancel()
            self.conns.pop(data_id, None)
            self.inbox.pop(data_id, None)
            conn.close()
            await self.send(self.codec.data(data_id, b"", fin=True))
            await self.send(self.codec.data(error_id, b"", fin=True))

    async def upload(self, data_id: int, conn: targets.Conn) -> None:
        box = self.inbox[data_id]
        while True:
            data = await box.get()
            if data is None:  # the client reset the stream
                conn.close()
                return
            await conn.write(data)
            if not data:
                return

    def close(self) -> None:
        for t in list(self.tasks):
            t.cancel()
        for c in self.conns.values():
            c.close()


async def _spdy_session(ws: web.WebSocketResponse, pod: dict) -> None:
    s = _SpdySession(ws, pod)
    try:
        await s.run()
    finally:
        s.close()
        with contextlib.suppress(Exception):
            await ws.close()
