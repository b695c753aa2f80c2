"""A component of the cluster in a process of its own, as the server's component
(``mockkube scheduler``, ``mockkube controller-manager``; componentmain.py runs the child):
started with the others, asked whether it is idle when the server settles or resets, told
when the cluster clock moves, asked for its metrics (which ``GET /metrics`` includes).

The process lives as long as the server: a reset pauses its components and starts fresh ones
once its watches have delivered what the reset wrote (no new process per reset).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys
import tempfile
from typing import Any, Callable

log = logging.getLogger("mockkube.childprocess")


class Child:
    """A running ``mockkube <component> --control`` process and its request channel."""

    def __init__(self, proc: asyncio.subprocess.Process, workdir: str, name: str) -> None:
        self.name = name
        self.proc = proc
        self.workdir = workdir
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self.ready = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("ready") and not self.ready.done():
                self.ready.set_result(True)
            fut = self._waiting.pop(msg.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        for fut in list(self._waiting.values()) + [self.ready]:
            if not fut.done():
                fut.set_exception(RuntimeError(f"the {self.name} process has exited"))
        self._waiting.clear()

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self._reader.done()

    async def request(self, op: str, **body: Any) -> dict:
        await asyncio.shield(self.ready)  # a caller's timeout must not cancel the shared future
        rid = next(self._ids)
        fut = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"id": rid, "op": op, **body}) + "\n").encode())
        out = await fut
        if out.get("error"):
            raise RuntimeError(f"{self.name} process: {out['error']}")
        return out

    def tell(self, op: str, **body: Any) -> None:
        """A request whose answer nobody waits for (kept in order with the others)."""
        task = asyncio.get_running_loop().create_task(self.request(op, **body))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def terminate(self, timeout: float = 0.5) -> None:
        if self.proc.returncode is None:
            try:
                self.proc.terminate()
                await asyncio.wait_for(self.proc.wait(), timeout)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
            except ProcessLookupError:
                pass
        self._reader.cancel()
        from mockkube.server.server import _remove_later

        _remove_later([self.workdir])


async def spawn(server: Any, command: str, user: dict, extra: Callable[[str], list[str]] | None = None) -> Child:
    """Start ``mockkube <command> --control`` against ``server`` with credentials of its own
    (a token for ``user`` when the server authenticates); ``extra(workdir)`` adds arguments."""
    from mockkube.server.server import kubeconfig as kubeconfig_of

    workdir = tempfile.mkdtemp(prefix=f"mockkube-{command}-")
    token = server.add_token(user["username"], user.get("groups")) if server.authn.enabled else server.admin_token
    kubeconfig = os.path.join(workdir, "kubeconfig")
    # JSON, which is YAML too: nobody reads this file but the child, and a start need not import PyYAML
    with open(os.open(kubeconfig, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        json.dump(kubeconfig_of(server.url, token, server.tls.ca_pem if server.tls else None), f)
    cmd = [
        sys.executable,
        "-m",
        "mockkube",
        command,
        "--control",
        "--kubeconfig",
        kubeconfig,
        "--clock",
        json.dumps(server.clock.state()),
        "--log-level",
        logging.getLevelName(log.getEffectiveLevel()),
    ]
    if server.cluster:
        cmd += ["--cluster", str(server.cluster)]
    gates = server.feature_gates.overrides  # the profile's and the flag's, merged
    if gates:
        cmd += ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))]
    if server.runtime_config.overrides:
        cmd += ["--runtime-config", ",".join(f"{k}={v}" for k, v in server.runtime_config.overrides.items())]
    cmd += extra(workdir) if extra is not None else []
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True
    )
    return Child(proc, workdir, command)


class ChildComponent:
    """The component standing for such a process in ``server.components``; the child is
    kept on the server (``server.<attr>``) so that it survives resets."""

    name = ""  # the command: "scheduler", "controller-manager"
    attr = ""  # the server's attribute holding the Child
    user: dict = {}  # whom it authenticates as when the server authenticates

    def __init__(self, server: Any) -> None:
        self.server = server
        self._final = False

    @property
    def child(self) -> Child | None:
        return getattr(self.server, self.attr, None)

    def extra_args(self, workdir: str) -> list[str]:
        """Arguments beyond the common ones (files it needs may go in ``workdir``)."""
        return []

    async def start(self) -> None:
        child = self.child
        if child is not None and child.alive:
            await child.request("resume", rvs=self.server.store.newest_rvs(), clock=self.server.clock.state())
            return
        setattr(self.server, self.attr, await spawn(self.server, self.name, self.user, self.extra_args))
        sources = self.server.__dict__.setdefault("_child_metrics_sources", set())
        if self.attr not in sources:
            sources.add(self.attr)
            self.server.metrics.add_source(lambda: self.server.on_cluster(_metrics_text, self.server, self.attr))

    def request_stop(self) -> None:
        """The server is stopping (not resetting): the process ends with it."""
        self._final = True

    def resync(self) -> None:
        child = self.child
        if child is not None and child.alive:
            child.tell("clock", state=self.server.clock.state())

    async def remote_idle(self) -> bool:
        child = self.child
        if child is None or not child.alive:
            return True
        try:  # not yet synced (or unable to list) is not idle
            return bool(
                (await asyncio.wait_for(child.request("idle", rvs=self.server.store.newest_rvs()), 2.0))["idle"]
            )
        except (asyncio.TimeoutError, RuntimeError):
            return False

    async def stop(self) -> None:
        child = self.child
        if child is None:
            return
        if self._final or not child.alive:
            setattr(self.server, self.attr, None)
            await child.terminate()
            return
        await child.request("pause")


async def _metrics_text(server: Any, attr: str) -> bytes:
    child = getattr(server, attr, None)
    if child is None or not child.alive:
        return b""
    try:
        return (await asyncio.wait_for(child.request("metrics"), 5.0))["text"].encode()
    except (RuntimeError, asyncio.TimeoutError):
        return b""
