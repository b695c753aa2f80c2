"""Probes and lifecycle hooks of process containers, run as the kubelet's prober and its
handler runner do: ``exec`` (the command in the container's namespaces), ``httpGet``,
``tcpSocket`` and ``grpc`` (grpc.health.v1) against the pod's network, with upstream's
messages for what failed. Each returns (success, output); the caller counts thresholds.

The pod's address in a message is its (simulated) IP, as upstream's; the connection goes
to 127.0.0.1 in the pod's network (the host's, or its own namespace with ``network: pod``).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import socket
import ssl
import time
from dataclasses import dataclass, field

from mockkube.kubelet.runtime import sandbox

MAX_OUTPUT = 10 * 1024  # upstream keeps this much of an exec probe's output
USER_AGENT = "kube-probe/1.36"
KINDS = (("startupProbe", "Startup"), ("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"))


@dataclass
class ProbeState:
    """One probe of one container instance: when it runs next and what it says so far."""

    field_name: str  # startupProbe, livenessProbe, readinessProbe
    kind: str  # Startup, Liveness, Readiness (as in events)
    spec: dict
    next_at: float
    successes: int = 0
    failures: int = 0
    result: bool | None = None  # None until a threshold is reached
    inflight: bool = False

    @property
    def period(self) -> float:
        return float(self.spec.get("periodSeconds") or 10)

    @property
    def timeout(self) -> float:
        return float(self.spec.get("timeoutSeconds") or 1)

    def record(self, ok: bool) -> bool:
        """Count one outcome; True when the result changed."""
        before = self.result
        if ok:
            self.successes, self.failures = self.successes + 1, 0
            if self.successes >= int(self.spec.get("successThreshold") or 1):
                self.result = True
        else:
            self.failures, self.successes = self.failures + 1, 0
            if self.failures >= int(self.spec.get("failureThreshold") or 3):
                self.result = False
        return self.result != before


@dataclass
class Target:
    """Where a probe of a container goes."""

    child_pid: int  # the container's PID 1 (exec joins its namespaces)
    env: dict[str, str]
    cwd: str
    pod_ip: str
    container: dict
    netns_pid: int = 0  # the pod's network namespace holder, 0 for the host's network
    extra: dict = field(default_factory=dict)


def states(container: dict, started: float) -> list[ProbeState]:
    out = []
    for name, kind in KINDS:
        spec = container.get(name)
        if spec:
            out.append(ProbeState(name, kind, spec, started + float(spec.get("initialDelaySeconds") or 0)))
    return out


def port_of(port: object, container: dict) -> int:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    for p in container.get("ports") or ():
        if p.get("name") == port:
            return int(p.get("containerPort") or 0)
    try:
        return int(str(port))
    except ValueError:
        raise ValueError(f"port {port} not found") from None


async def run(spec: dict, target: Target, timeout: float) -> tuple[bool, str]:
    """Run one probe (or hook) handler: (success, output)."""
    try:
        if spec.get("exec") is not None:
            return await run_exec(spec["exec"].get("command") or [], target, timeout)
        if spec.get("httpGet") is not None:
            return await asyncio.to_thread(_http, spec["httpGet"], target, timeout)
        if spec.get("tcpSocket") is not None:
            return await asyncio.to_thread(_tcp, spec["tcpSocket"], target, timeout)
        if spec.get("grpc") is not None:
            return await _grpc(spec["grpc"], target, timeout)
        if spec.get("sleep") is not None:  # a lifecycle hook's sleep action
            await asyncio.sleep(float(spec["sleep"].get("seconds") or 0))
            return True, ""
    except ValueError as e:
        return False, str(e)
    return False, "missing probe handler"


async def run_exec(argv: list[str], target: Target, timeout: float) -> tuple[bool, str]:
    rc, out = await exec_code(argv, target, timeout)
    return rc == 0, out


async def exec_code(argv: list[str], target: Target, timeout: float) -> tuple[int | None, str]:
    """The command's exit code (None when it timed out) and its combined output."""
    cmd = sandbox.nsenter_argv(target.child_pid, [str(a) for a in argv], target.cwd)
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(target.env),
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout if timeout > 0 else None)
    except asyncio.TimeoutError:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        return None, f"command {' '.join(str(a) for a in argv)!r} timed out"
    return proc.returncode, out[:MAX_OUTPUT].decode(errors="replace")


async def hook(handler: dict, target: Target, timeout: float, container: str, pod: str) -> str:
    """Run a lifecycle hook; "" when it succeeded, else upstream's message."""
    if handler.get("exec") is not None:
        argv = [str(a) for a in handler["exec"].get("command") or ()]
        rc, out = await exec_code(argv, target, timeout)
        if rc == 0:
            return ""
        err = out if rc is None else f"command '{' '.join(argv)}' exited with {rc}: {out}"
        return (
            f'Exec lifecycle hook ([{" ".join(argv)}]) for Container "{container}" in Pod "{pod}" failed - '
            f"error: {err}, message: {json.dumps(out)}"
        )
    ok, out = await run(handler, target, timeout)
    if ok:
        return ""
    if handler.get("httpGet") is not None:
        path = handler["httpGet"].get("path") or "/"
        return f'HTTP lifecycle hook ({path}) for Container "{container}" in Pod "{pod}" failed - error: {out}'
    return f'lifecycle hook for Container "{container}" in Pod "{pod}" failed - error: {out}'


def _connect(target: Target, port: int, timeout: float) -> socket.socket:
    def dial() -> socket.socket:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    return sandbox.in_netns(target.netns_pid, dial) if target.netns_pid else dial()


def _dial_error(e: OSError, host: str, port: int) -> str:
    if isinstance(e, (socket.timeout, TimeoutError)):
        return f"dial tcp {host}:{port}: i/o timeout"
    if isinstance(e, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    return f"dial tcp {host}:{port}: {e.strerror or e}"


def _http(spec: dict, target: Target, timeout: float) -> tuple[bool, str]:
    port = port_of(spec.get("port"), target.container)
    scheme = (spec.get("scheme") or "HTTP").lower()
    host = spec.get("host") or target.pod_ip
    path = spec.get("path") or "/"
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    headers = {"User-Agent": USER_AGENT, "Accept": "*/*"}
    for h in spec.get("httpHeaders") or ():
        headers[h.get("name", "")] = h.get("value", "")
    started = time.monotonic()
    try:
        sock = _connect(target, port, timeout)
    except OSError as e:
        return False, f'Get "{url}": {_dial_error(e, host, port)}'
    try:
        if scheme == "https":  # the kubelet does not verify a probe's certificate
            ctx = ssl.create_default_context()
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
            sock = ctx.wrap_socket(sock)
        conn = http.client.HTTPConnection(host, port, timeout=max(timeout - (time.monotonic() - started), 0.01))
        conn.sock = sock
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read(MAX_OUTPUT)
        code = resp.status
        conn.close()
    except (socket.timeout, TimeoutError):
        sock.close()
        return False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    except (OSError, http.client.HTTPException) as e:
        sock.close()
        return False, f'Get "{url}": {e}'
    if 200 <= code < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {code}"


def _tcp(spec: dict, target: Target, timeout: float) -> tuple[bool, str]:
    port = port_of(spec.get("port"), target.container)
    host = spec.get("host") or target.pod_ip
    try:
        _connect(target, port, timeout).close()
    except OSError as e:
        return False, _dial_error(e, host, port)
    return True, ""


_SERVING = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


async def _grpc(spec: dict, target: Target, timeout: float) -> tuple[bool, str]:
    """grpc.health.v1.Health/Check, the request and reply encoded by hand (one string field
    and one enum field)."""
    import grpc

    port = int(spec.get("port") or 0)
    addr = f"{target.pod_ip}:{port}"
    if target.netns_pid:
        return False, f"error: health rpc probe failed: gRPC probes do not reach a pod network of its own ({addr})"
    service = (spec.get("service") or "").encode()
    request = (b"\x0a" + _varint(len(service)) + service) if service else b""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        try:
            await asyncio.wait_for(ch.channel_ready(), timeout)
        except asyncio.TimeoutError:
            return False, f'timeout: failed to connect service "{addr}" within {timeout:g}s: context deadline exceeded'
        check = ch.unary_unary("/grpc.health.v1.Health/Check")
        try:
            reply = await check(request, timeout=timeout)
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return False, f"timeout: health rpc did not complete within {timeout:g}s"
            return (
                False,
                f"error: health rpc probe failed: rpc error: code = {e.code().name.title().replace('_', '')} desc = {e.details()}",
            )
    status = reply[1] if len(reply) >= 2 and reply[0] == 0x08 else 0
    if status == 1:
        return True, ""
    return False, f'service unhealthy (responded with "{_SERVING.get(status, str(status))}")'


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])
