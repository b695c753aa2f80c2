"""pods/exec and pods/attach over WebSocket, as kubectl 1.35 and the Python client speak it
(k8s.io/apimachinery wsstream): subprotocols ``v5.channel.k8s.io`` (with the CLOSE signal
for stdin), ``v4``, ``v3``, ``v2`` and ``channel.k8s.io``; binary frames whose first byte is
the channel (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize); the outcome on channel 3 as a
``Status`` (v4 and later: ``Success``, or ``NonZeroExitCode`` with an ``ExitCode`` cause).

A simulated container has no process, so exec runs mockkube's small shell over the
container's environment and the files it knows (mockkube/kubelet/shell.py); attach shows
what the container printed (its ``mockkube.io/log`` annotation) and stays open until the
client leaves. SPDY is not offered: kubectl 1.35 uses WebSocket first.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, AsyncIterator

from aiohttp import WSMsgType, web

from mockkube.kubelet import containerdata, kubeletclient, logs
from mockkube.kubelet.containerdata import simulated_container
from mockkube.kubelet.shell import Shell
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.machinery.podlogoptions import PodLogOptions

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def _flag(q, name: str) -> bool:
    return q.get(name, "").lower() in ("true", "1")


def _running(pod: dict, container: str) -> bool:
    for st in (pod.get("status") or {}).get("containerStatuses") or ():
        if st.get("name") == container:
            return "running" in (st.get("state") or {})
    return False


def container_of(pod: dict, name: str) -> tuple[str, dict]:
    """The container an exec means, with upstream's errors for completed pods, ambiguous or
    unknown names and containers not running."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise errors.bad_request(f"cannot exec into a container in a completed pod; current phase is {phase}")
    chosen = logs.pick_container(pod, name)
    spec = next((c for c in (pod.get("spec") or {}).get("containers") or () if c.get("name") == chosen), None)
    if spec is None:
        raise errors.bad_request(f"container {chosen} is not valid for pod {pod['metadata']['name']}")
    if not _running(pod, chosen):
        raise errors.bad_request(f'unable to upgrade connection: container not found ("{chosen}")')
    return chosen, spec


class Channels:
    """One exec's WebSocket: writes channel frames, reads stdin until it closes."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.v5 = ws.ws_protocol == PROTOCOLS[0]
        self.status_json = ws.ws_protocol in PROTOCOLS[:2]
        self.stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.on_resize = None  # (width, height) -> None: a terminal's new size (channel 4)

    async def write(self, channel: int, data: bytes) -> None:
        if data and not self.ws.closed:
            await self.ws.send_bytes(bytes([channel]) + data)

    async def read_loop(self) -> None:
        async for msg in self.ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT) or not msg.data:
                continue
            # the Python client sends text frames; the channel is still the first byte
            raw = msg.data if msg.type == WSMsgType.BINARY else msg.data.encode()
            ch, data = raw[0], raw[1:]
            if ch == STDIN and data:
                await self.stdin.put(bytes(data))
            elif ch == CLOSE and self.v5 and data[:1] == bytes([STDIN]):
                await self.stdin.put(None)
            elif ch == RESIZE and self.on_resize is not None:
                try:
                    size = json.loads(bytes(data))
                    self.on_resize(int(size.get("Width", 0)), int(size.get("Height", 0)))
                except (ValueError, TypeError, AttributeError, OSError):
                    pass
        await self.stdin.put(None)

    async def lines(self):
        buf = b""
        while True:
            chunk = await self.stdin.get()
            if chunk is None:
                if buf:
                    yield buf
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                yield line + b"\n"

    async def internal_error(self, message: str) -> None:
        """The exec could not start (the container runtime said why): an InternalError on
        the error channel, as the kubelet streams a CRI exec failure (kubectl: ``error:
        Internal error occurred: ...``, exit code 1)."""
        message = f"Internal error occurred: {message}"
        if self.status_json:
            status = {"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError", "code": 500}
            await self.write(ERROR, json.dumps(status, separators=(",", ":")).encode())
        else:
            await self.write(ERROR, message.encode())
        await self.ws.close()

    async def finish(self, code: int, argv: list[str]) -> None:
        if self.status_json:
            if code == 0:
                status = {"metadata": {}, "status": "Success"}
            else:
                status = {
                    "metadata": {},
                    "status": "Failure",
                    "message": f"command terminated with non-zero exit code: command '{' '.join(argv)}' "
                    f"exited with {code}: ",
                    "reason": "NonZeroExitCode",
                    "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
                }
            await self.write(ERROR, json.dumps(status, separators=(",", ":")).encode())
        elif code != 0:
            await self.write(ERROR, f"command terminated with non-zero exit code: exit status {code}".encode())
        await self.ws.close()


STDIN_READERS = frozenset({"cat", "gzip", "wc", "head", "tail", "sh", "bash", "ash", "read"})


def reads_stdin(argv: list[str]) -> bool:
    """Whether a command of the simulated shell reads its stdin: a builtin that does (``cat``
    without files, ``wc``, ...), or an ``sh -c`` script naming one. A command that does not
    runs without waiting for the client's stdin to close."""
    import re

    names = [a.rsplit("/", 1)[-1] for a in argv]
    if names[:1] in (["sh"], ["bash"], ["ash"]) and "-c" in argv[1:]:
        script = argv[argv.index("-c") + 1] if argv.index("-c") + 1 < len(argv) else ""
        return any(w in STDIN_READERS for w in re.findall(r"[A-Za-z_][\w.-]*", script))
    if names[:1] == ["cat"]:
        return len(argv) == 1 or "-" in argv[1:]
    return bool(names) and names[0] in STDIN_READERS


async def _exec(ch: Channels, shell: Shell, argv: list[str], stdin: bool) -> int:
    names = [a.rsplit("/", 1)[-1] for a in argv]
    interactive_sh = stdin and names[:1] in (["sh"], ["bash"], ["ash"]) and len(argv) == 1
    streaming_cat = stdin and (names == ["cat"] or (names[:1] in (["sh"], ["bash"]) and argv[1:] == ["-c", "cat"]))
    if interactive_sh:  # a shell reading its script from stdin, one line at a time
        async for line in ch.lines():
            await shell.script(line.decode(errors="replace"))
            if shell.exited:
                break
        return shell.status
    if streaming_cat:
        while (chunk := await ch.stdin.get()) is not None:
            await ch.write(STDOUT, chunk)
        return 0
    data = None
    if stdin and reads_stdin(argv):  # else it runs at once, as a kubelet runs it, stdin open or not
        parts = []
        while (chunk := await ch.stdin.get()) is not None:
            parts.append(chunk)
        data = b"".join(parts)
    return await shell.exec(argv, data)


class NodeStreams:
    """What the API server asks of a pod's node (upstream's kubelet client): pods/log,
    pods/exec, pods/attach and pods/portforward. The server puts one on its app
    (``subresources.NODE_KEY``), so the HTTP layer never imports the node simulation; a
    kubelet shard's kubelet API (kubeletserver.py) answers with one too. ``server`` is the
    assembled server or the shard's host: its registry and store (ConfigMaps and Secrets a
    container refers to) and its clock."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._kubelets: "kubeletclient.KubeletClient | None" = None

    @property
    def kubelets(self) -> "kubeletclient.KubeletClient":
        """The connections to kubelets elsewhere (made at first use, on the API's loop)."""
        if self._kubelets is None:
            config = getattr(self.server, "kubelet_client", None)  # the server's --kubelet-* flags
            self._kubelets = kubeletclient.KubeletClient(
                getattr(self.server, "kubelet_client_ssl", None),
                client_certificate=not (config is not None and config.tls and not config.cert_file),
            )
        return self._kubelets

    async def close(self) -> None:
        if self._kubelets is not None:
            await self._kubelets.close()
            self._kubelets = None

    def _lookup(self) -> containerdata.Lookup:
        """Reads ConfigMaps and Secrets from the API's cache (this runs on the API's loop)."""
        server = self.server

        def lookup(kind: str, namespace: str, name: str) -> dict | None:
            rt = server.registry.get("", "v1", {"ConfigMap": "configmaps", "Secret": "secrets"}[kind])
            entry = server.store.get(rt, namespace, name) if rt is not None else None
            return entry.obj if entry is not None else None

        return lookup

    async def node_proxy(self, request: web.Request, node: dict, path: str) -> web.StreamResponse:
        """nodes/{name}/proxy/{path}: the node's kubelet (mockkube/kubelet/nodeproxy.py)."""
        from mockkube.kubelet import nodeproxy

        return await nodeproxy.serve(self, request, node, path)

    async def _exec_target(self, pod: dict, name: str) -> Any:
        """Where an exec into container ``name`` runs: the container of a process pod, the
        sandbox of the process runtime for a simulated container on a node that runs
        processes, or None (mockkube's shell). SandboxError when the sandbox could not be made."""
        from mockkube.kubelet.runtime import streams

        procs = streams.running_container(pod, name)
        make = getattr(self.server, "exec_sandbox", None)
        if procs is None and make is not None:
            procs = await make(pod, name)
        return procs

    async def run(self, pod: dict, name: str, spec: dict, argv: list[str]) -> tuple[int, bytes, bytes]:
        """The kubelet's RunInContainer (``/run/...``): ``argv`` in the running container
        ``name`` with no stdin, as an exec does; (exit code, stdout, stderr) once it ended.
        RuntimeError with the container runtime's message when it cannot run."""
        from mockkube.kubelet.runtime import streams
        from mockkube.kubelet.runtime.sandbox import SandboxError

        out: dict[int, bytearray] = {STDOUT: bytearray(), STDERR: bytearray()}

        async def write(channel: int, data: bytes) -> None:
            out[channel if channel in out else STDOUT] += data

        try:
            procs = await self._exec_target(pod, name)
        except SandboxError as e:
            raise RuntimeError(f"failed to create exec sandbox: {e}") from None
        if procs is not None:
            failed = streams.start_error(procs, argv)
            if failed:
                raise RuntimeError(failed)
            never = asyncio.get_running_loop().create_future()  # no client to leave
            code = await streams.exec_command(procs, argv, asyncio.Queue(), False, False, write, never)
        else:
            shell = Shell(simulated_container(pod, spec, self.server.clock, self._lookup()), write)
            code = await shell.exec(argv, None)
        return code, bytes(out[STDOUT]), bytes(out[STDERR])

    def log(
        self,
        pod: dict,
        container: str,
        tail_lines: int | None,
        timestamps: bool,
        previous: bool = False,
        since: float | None = None,
    ) -> str:
        """pods/log: what the container printed (``previous``: its last terminated instance;
        ``since``: from that time on, a process container's)."""
        from mockkube.kubelet.runtime import streams

        name = logs.pick_container(pod, container)
        text = streams.log_text(pod, name, tail_lines, timestamps, previous, since)
        if text is not None:
            return text
        return logs.container_log(pod, name, tail_lines, timestamps)

    def follow(
        self,
        pod: dict,
        container: str,
        tail_lines: int | None,
        timestamps: bool,
        previous: bool = False,
        since: float | None = None,
    ) -> "AsyncIterator[bytes] | None":
        """pods/log?follow=true: the log, then what the container prints until it ends (a
        process pod's); None when the log does not grow (a simulated container's)."""
        from mockkube.kubelet.runtime import streams

        return streams.follow(pod, logs.pick_container(pod, container), tail_lines, timestamps, previous, since)

    async def serve_log(
        self,
        request: web.Request,
        pod: dict,
        container: str,
        opts: PodLogOptions,
        now: float,
    ) -> web.StreamResponse:
        """pods/log's answer as text/plain (``kubectl logs``; the kubelet's
        ``/containerLogs``): what the container printed, ``limitBytes`` at most; with
        ``follow`` a growing log is streamed until the container ends or the client leaves
        (``now``: the cluster clock's, from which ``sinceSeconds`` counts back)."""
        limit = opts.limit_bytes
        args = (pod, container, opts.tail_lines, opts.timestamps, opts.previous, opts.since(now))
        chunks = self.follow(*args) if opts.follow else None
        if chunks is None:
            body = self.log(*args).encode()
            return web.Response(body=body[:limit] if limit is not None else body, content_type="text/plain")
        resp = web.StreamResponse(headers={"Content-Type": "text/plain", "Transfer-Encoding": "chunked"})
        await resp.prepare(request)
        try:
            async for chunk in chunks:
                if chunk:
                    if limit is not None:
                        chunk = chunk[:limit]
                        limit -= len(chunk)
                    await resp.write(chunk)
                    if limit == 0:
                        break
                elif request.transport is None or request.transport.is_closing():
                    break
        except (ConnectionResetError, RuntimeError):  # the client left
            pass
        finally:
            await chunks.aclose()
        try:
            await resp.write_eof()
        except ConnectionResetError:  # the client left: nothing to end
            pass
        return resp

    def pick_container(self, pod: dict, container: str) -> str:
        """The container a log, exec or attach request means (the API server resolves it
        before it reaches the node's kubelet, whose paths name it)."""
        return logs.pick_container(pod, container)

    def kubelet_of(self, node_name: str) -> "kubeletclient.Endpoint | None":
        """Where the API server reaches the kubelet of ``node_name`` over HTTP: a node this
        process does not simulate, while the kubelets run elsewhere (``--node-shards``,
        ``--kubelets none``); None: answered here (a node simulated here, or a node without
        a kubelet of its own, answered from its pods as before)."""
        from mockkube.kubelet.cluster import runtime_for

        server = self.server
        if not node_name or not (getattr(server, "node_shards", 0) or not getattr(server, "run_kubelets", True)):
            return None
        local = runtime_for(getattr(server, "resources", None))
        if local is not None and node_name in local.kubelet.nodes:
            return None
        rt = server.registry.get("", "v1", "nodes")
        entry = server.store.get(rt, "", node_name) if rt is not None else None
        if entry is None:
            return None
        return kubeletclient.endpoint_of(entry.obj, getattr(server, "kubelet_preferred_address_types", None))

    async def forward(
        self, request: web.Request, endpoint: "kubeletclient.Endpoint", path: str, query: Any = None
    ) -> web.StreamResponse:
        """The request, to the node's kubelet at ``endpoint`` (kubeletclient.py)."""
        return await self.kubelets.forward(request, endpoint, path, query)

    async def stream(
        self, request: web.Request, pod: dict, sub: str, container: str | None = None
    ) -> web.StreamResponse:
        """pods/exec, pods/attach and pods/portforward (``container``: the one the kubelet's
        path names, else the query's)."""
        if sub == "portforward":
            from mockkube.kubelet import portforward_stream

            return await portforward_stream.serve(request, pod)
        q = request.query
        argv = q.getall("command", [])
        if sub == "exec" and not argv:
            raise errors.bad_request("you must specify at least one command for the container")
        name, spec = container_of(pod, q.get("container", "") if container is None else container)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            raise errors.bad_request("Upgrade request required")
        ws = web.WebSocketResponse(protocols=PROTOCOLS)
        await ws.prepare(request)
        ch = Channels(ws)
        reader = asyncio.get_running_loop().create_task(ch.read_loop())
        clock = self.server.clock
        out, err = _flag(q, "stdout"), _flag(q, "stderr") and not _flag(q, "tty")

        async def write(channel: int, data: bytes) -> None:
            if (channel == STDOUT and out) or (channel == STDERR and (err or _flag(q, "tty"))):
                await ch.write(STDOUT if channel == STDERR and _flag(q, "tty") else channel, data)

        from mockkube.kubelet.runtime import streams

        try:
            if sub == "exec":
                from mockkube.kubelet.runtime.sandbox import SandboxError

                try:
                    procs = await self._exec_target(pod, name)
                except SandboxError as e:  # said on the error channel, as a container runtime's exec failure
                    await ch.internal_error(f"error executing command in container: failed to create exec sandbox: {e}")
                    return ws
            else:
                procs = streams.running_container(pod, name)
            if procs is not None:
                if sub == "attach":
                    it = streams.follow(pod, name, None, False, False)
                    async for chunk in it or ():
                        if reader.done():  # the client left (the follower wakes at least every second)
                            break
                        if out:
                            await ch.write(STDOUT, chunk)
                    await reader
                    return ws
                failed = streams.start_error(procs, argv)
                if failed:
                    await ch.internal_error(failed)
                    return ws
                code = await streams.exec_command(
                    procs, argv, ch.stdin, _flag(q, "stdin"), _flag(q, "tty"), write, reader, ch
                )
                await ch.finish(code, argv)
                return ws
            if sub == "attach":
                text = logs.container_log(pod, name)
                if text and out:
                    await ch.write(STDOUT, text.encode())
                await reader  # until the client leaves
                return ws
            shell = Shell(simulated_container(pod, spec, clock, self._lookup()), write)
            code = await _exec(ch, shell, argv, _flag(q, "stdin"))
            await ch.finish(code, argv)
            return ws
        finally:
            reader.cancel()
