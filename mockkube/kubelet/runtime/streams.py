"""pods/log, pods/exec and pods/attach of process pods (runtime/process.py), for
``kubelet.streaming.NodeStreams``: the logs the processes wrote (``--previous`` from the
last terminated instance, ``-f`` following until the container ends or the client
leaves), and exec as a real command in the container's namespaces and root (nsenter on its
PID 1), its exit code reported as upstream's channel-3 Status."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from typing import AsyncIterator, Awaitable, Callable

from mockkube.kubelet.runtime import process, sandbox
from mockkube.machinery import errors

SETPRIV = shutil.which("setpriv")
SETSID = shutil.which("setsid") or "/usr/bin/setsid"


def _instance(pod: dict, container: str, previous: bool) -> "process.Instance | None":
    """The instance whose log is asked for; None when the pod is not a process pod."""
    pp = process.pod(pod["metadata"].get("uid", ""))
    if pp is None or pp.holder:
        return None
    cs = pp.container(container)
    if cs is None:
        return None
    name = pod["metadata"]["name"]
    if previous:
        if cs.previous is None:
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        return cs.previous
    if cs.current is None or cs.current.creating:
        reason = cs.waiting[0] if cs.waiting else "ContainerCreating"
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return cs.current


def log_text(
    pod: dict, container: str, tail_lines: int | None, timestamps: bool, previous: bool, since: float | None = None
) -> str | None:
    inst = _instance(pod, container, previous)
    if inst is None:
        return None
    return inst.log.read(tail_lines, timestamps, since)[0]


def follow(
    pod: dict, container: str, tail_lines: int | None, timestamps: bool, previous: bool, since: float | None = None
) -> AsyncIterator[bytes] | None:
    inst = _instance(pod, container, previous)
    if inst is None:
        return None
    return inst.log.follow(tail_lines, timestamps, since)


def running_container(pod: dict, container: str) -> "process.ContainerState | None":
    """The container of a process pod (None: the pod is not one, or only exec's sandbox)."""
    pp = process.pod(pod["metadata"].get("uid", ""))
    cs = pp.container(container) if pp is not None and not pp.holder else None
    if cs is None:
        return None
    if not cs.running or cs.current is None or cs.current.proc is None:
        raise errors.bad_request(f'unable to upgrade connection: container not found ("{container}")')
    return cs


def start_error(cs: "process.ContainerState", argv: list[str]) -> str:
    """Why runc would not start ``argv`` in the container (its executable is not there), in
    containerd's words, or ""."""
    assert cs.current is not None and cs.current.proc is not None
    exe = argv[0]
    root = f"/proc/{cs.current.proc.child_pid}/root"
    if process.find_executable(root, exe, cs.env.get("PATH", ""), cs.cwd):
        return ""
    why = f"stat {exe}: no such file or directory" if "/" in exe else "executable file not found in $PATH"
    return (
        f'error executing command in container: failed to exec in container: failed to start exec "{os.urandom(32).hex()}": '
        f'OCI runtime exec failed: exec failed: unable to start container process: exec: "{exe}": {why}: unknown'
    )


Write = Callable[[int, bytes], Awaitable[None]]


async def exec_command(
    cs: "process.ContainerState",
    argv: list[str],
    stdin: asyncio.Queue,
    use_stdin: bool,
    tty: bool,
    write: Write,
    client_gone: asyncio.Future,
    channels: object = None,
) -> int:
    """Run ``argv`` in the container; stdout on channel 1, stderr on 2 (both on 1 with a tty,
    whose size follows the client's resize messages through ``channels.on_resize``). The
    command is killed when the client leaves first."""
    assert cs.current is not None and cs.current.proc is not None
    cmd = sandbox.nsenter_argv(cs.current.proc.child_pid, ([SETSID, "-c"] if tty else []) + argv, cs.cwd)
    if SETPRIV:
        cmd = [SETPRIV, "--pdeathsig", "KILL", "--"] + cmd  # nothing outlives the server
    env = dict(cs.env)
    if tty:
        env.setdefault("TERM", "xterm")
        return await _exec_tty(cmd, env, stdin, use_stdin, write, client_gone, channels)
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE if use_stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
    )

    async def pump(stream: asyncio.StreamReader, channel: int) -> None:
        while data := await stream.read(65536):
            await write(channel, data)

    async def feed() -> None:
        assert proc.stdin is not None
        try:
            while (chunk := await stdin.get()) is not None:
                proc.stdin.write(chunk)
                await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            proc.stdin.close()

    tasks = [asyncio.ensure_future(pump(proc.stdout, 1)), asyncio.ensure_future(pump(proc.stderr, 2))]
    feeder = asyncio.ensure_future(feed()) if use_stdin else None
    waiter = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.wait([waiter, client_gone], return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            _kill(proc.pid)
            await waiter
        await asyncio.gather(*tasks, return_exceptions=True)
        return proc.returncode if proc.returncode is not None else 137
    finally:
        for t in tasks + ([feeder] if feeder else []):
            t.cancel()
        if proc.returncode is None:
            _kill(proc.pid)


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _exec_tty(
    cmd: list[str],
    env: dict,
    stdin: asyncio.Queue,
    use_stdin: bool,
    write: Write,
    client_gone: asyncio.Future,
    channels: object = None,
) -> int:
    """With a terminal: the command's stdin, stdout and stderr are a pty (its controlling
    terminal, through setsid -c); what it prints comes back on stdout."""
    master, slave = os.openpty()

    def resize(width: int, height: int) -> None:
        import fcntl
        import struct
        import termios

        if width > 0 and height > 0 and master >= 0:
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

    if channels is not None:
        channels.on_resize = resize  # type: ignore[attr-defined]
    try:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
    finally:
        os.close(slave)
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[bytes] = asyncio.Queue()

    def readable() -> None:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        out.put_nowait(data)
        if not data:
            loop.remove_reader(master)

    loop.add_reader(master, readable)

    async def pump() -> None:
        while data := await out.get():
            await write(1, data)

    async def feed() -> None:
        while (chunk := await stdin.get()) is not None:
            os.write(master, chunk)

    pumper = asyncio.ensure_future(pump())
    feeder = asyncio.ensure_future(feed()) if use_stdin else None
    waiter = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.wait([waiter, client_gone], return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            _kill(proc.pid)
            await waiter
        try:
            await asyncio.wait_for(pumper, 1.0)  # what the terminal still holds
        except asyncio.TimeoutError:
            pass
        return proc.returncode if proc.returncode is not None else 137
    finally:
        if channels is not None:
            channels.on_resize = None  # type: ignore[attr-defined]
        loop.remove_reader(master)
        os.close(master)
        for t in [pumper] + ([feeder] if feeder else []):
            t.cancel()
        if proc.returncode is None:
            _kill(proc.pid)


async def connect(pod: dict, port: int) -> "tuple[asyncio.StreamReader, asyncio.StreamWriter] | None":
    """A connection to ``port`` of a process pod (None: not one): in its own network
    namespace when it has one, else on the host's loopback. OSError when refused."""
    pp = process.pod(pod["metadata"].get("uid", ""))
    if pp is None or pp.holder:
        return None
    while True:
        try:
            return await _dial(pp, port)
        except OSError:
            if not pp.young(STARTING):
                raise
            await asyncio.sleep(0.05)  # a program that has just started may not listen yet


STARTING = 2.0  # seconds after its containers start in which a refused port is tried again


async def _dial(pp: "process.PodProcs", port: int) -> "tuple[asyncio.StreamReader, asyncio.StreamWriter]":
    pause = pp.pause
    if pause is None:
        return await asyncio.open_connection("127.0.0.1", port)
    import socket

    def dial() -> socket.socket:
        s = sandbox.in_netns(pause.child_pid, lambda: socket.create_connection(("127.0.0.1", port), timeout=5))
        s.setblocking(False)
        return s

    sock = await asyncio.get_running_loop().run_in_executor(None, dial)
    return await asyncio.open_connection(sock=sock)
