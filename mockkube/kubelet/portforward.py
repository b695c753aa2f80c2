"""Where a forwarded pod port leads. A simulated pod has no network, so (docs/exec-portforward.md):

- ``mockkube.io/port-forward.<port>: host:port`` sends the port's connections to a real
  address (a service your test runs, say);
- otherwise every ``containerPort`` the pod declares, every port its probes use
  (``tcpSocket``, ``httpGet``) and every port its image is known to serve
  (``mockkube/kubelet/images.py``: nginx on 80) has a simulated HTTP responder that answers
  each request with ``200 OK`` and the body of ``mockkube.io/http-response.<port>`` (or
  ``mockkube.io/http-response``; else what the image serves, else a line naming the pod
  and port);
- any other port refuses the connection, with the kubelet's error text.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from mockkube.kubelet.images import listeners as image_listeners

PREFIX = "mockkube.io/"


class Conn(Protocol):
    async def write(self, data: bytes) -> None: ...
    async def read(self) -> bytes: ...  # b"" at end of stream
    def close(self) -> None: ...


def declared_ports(pod: dict) -> set[int]:
    spec = pod.get("spec") or {}
    return {
        p.get("containerPort")
        for key in ("containers", "initContainers")
        for c in spec.get(key) or []
        for p in c.get("ports") or []
        if p.get("containerPort")
    }


def _probe_ports(container: dict) -> set[int]:
    out = set()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = container.get(probe) or {}
        for kind in ("tcpSocket", "httpGet"):
            port = (p.get(kind) or {}).get("port")
            if isinstance(port, int):
                out.add(port)
            elif isinstance(port, str):  # a named port
                out.update(
                    cp["containerPort"]
                    for cp in container.get("ports") or []
                    if cp.get("name") == port and cp.get("containerPort")
                )
    return out


def listeners(pod: dict) -> dict[int, tuple[str, str] | None]:
    """Every port something listens on in the pod: the image's known answer, or None for
    the default one."""
    out: dict[int, tuple[str, str] | None] = {p: None for p in declared_ports(pod)}
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        out.update({p: None for p in _probe_ports(c) if p not in out})
        for port, answer in image_listeners(c).items():
            if out.get(port) is None:
                out[port] = answer
    return out


def _anns(pod: dict) -> dict:
    return (pod.get("metadata") or {}).get("annotations") or {}


def refused(pod: dict, port: int) -> str:
    """The kubelet's message when nothing listens on the port."""
    md = pod.get("metadata") or {}
    sandbox = md.get("uid", "")
    return (
        f"error forwarding port {port} to pod {sandbox}, uid : failed to connect to localhost:{port} "
        f'inside namespace "{sandbox}", IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused '
        f"IPv6 dial tcp6 [::1]:{port}: connect: connection refused "
    )


async def connect(pod: dict, port: int) -> Conn:
    """Open a connection to ``port`` of the pod; ConnectionRefusedError(message) if none."""
    from mockkube.kubelet.runtime import streams

    try:
        pair = await streams.connect(pod, port)  # a process pod: its network's port
    except OSError:
        raise ConnectionRefusedError(refused(pod, port)) from None
    if pair is not None:
        return TCPConn(*pair)
    target = _anns(pod).get(f"{PREFIX}port-forward.{port}")
    if target:
        host, _, p = target.rpartition(":")
        try:
            reader, writer = await asyncio.open_connection(host.strip("[]") or "127.0.0.1", int(p))
        except (OSError, ValueError) as e:
            raise ConnectionRefusedError(f"error forwarding port {port} to {target}: {e}") from e
        return TCPConn(reader, writer)
    ports = listeners(pod)
    if port in ports:
        anns = _anns(pod)
        body = anns.get(f"{PREFIX}http-response.{port}", anns.get(f"{PREFIX}http-response"))
        content_type = "text/plain; charset=utf-8"
        if body is None and ports[port] is not None:
            content_type, body = ports[port]
        if body is None:
            body = f"mockkube: pod {pod['metadata'].get('name', '')} port {port}\n"
        return HTTPResponder(body.encode(), content_type)
    raise ConnectionRefusedError(refused(pod, port))


class TCPConn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def write(self, data: bytes) -> None:
        if not data:
            if self.writer.can_write_eof():
                self.writer.write_eof()
            return
        self.writer.write(data)
        await self.writer.drain()

    async def read(self) -> bytes:
        try:
            return await self.reader.read(65536)
        except OSError:
            return b""

    def close(self) -> None:
        self.writer.close()


class HTTPResponder:
    """A simulated HTTP/1.x server on one connection: each complete request gets the
    configured body; ``Connection: close`` (or HTTP/1.0) ends the connection after it."""

    def __init__(self, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.body = body
        self.content_type = content_type
        self.buf = b""
        self.out: asyncio.Queue[bytes] = asyncio.Queue()

    async def write(self, data: bytes) -> None:
        if not data:
            self.out.put_nowait(b"")
            return
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, rest = self.buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
            length = int(headers.get("content-length", "0") or 0)
            if len(rest) < length:
                return
            self.buf = rest[length:]
            parts = lines[0].split()
            method = parts[0] if parts else "GET"
            version = parts[2] if len(parts) > 2 else "HTTP/1.1"
            close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
            body = b"" if method == "HEAD" else self.body
            resp = (
                f"{version} 200 OK\r\nContent-Type: {self.content_type}\r\n"
                f"Content-Length: {len(self.body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
            )
            self.out.put_nowait(resp.encode() + body)
            if close:
                self.out.put_nowait(b"")

    async def read(self) -> bytes:
        return await self.out.get()

    def close(self) -> None:
        self.out.put_nowait(b"")
