"""A container's sandbox (bubblewrap): the host's root filesystem read-only, with the pod's
volumes at their mount paths, a /tmp of its own, its own PID, UTS (hostname: the pod's)
and IPC namespaces, ``--die-with-parent`` so that nothing outlives the server. The command
is the namespace's PID 1 (``--as-pid-1``), as in a container without an init: SIGTERM
reaches it only if it handles it. The network is the host's (for now).

bubblewrap's own errors (a mount it cannot make) go to a pipe of their own, apart from the
command's stdout and stderr, so a sandbox that cannot be created is told apart from a
command that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field

BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"
BASH = shutil.which("bash") or "/bin/bash"
NSENTER = shutil.which("nsenter") or "/usr/bin/nsenter"
SPECIAL = {"proc", "dev", "tmp", "sys"}  # made by bubblewrap, not bound from the host


class SandboxError(Exception):
    """The sandbox cannot be created; the message says why."""


@dataclass
class Mount:
    source: str
    target: str
    read_only: bool = False


@dataclass
class Proc:
    popen: subprocess.Popen
    child_pid: int  # the container's PID 1, as the host sees it
    stdout: int  # read ends of the command's output
    stderr: int
    setup: int  # bubblewrap's own messages
    pidfd: int = -1
    extra: dict = field(default_factory=dict)


def available() -> str:
    """Why the process runtime cannot run here, or ""."""
    for tool in (BWRAP, BASH, NSENTER):
        if not os.access(tool, os.X_OK):
            return f"{tool} is not installed"
    return ""


def probe() -> str:
    """Why this machine cannot make a sandbox, or "": the tools are there and bubblewrap
    makes one (it needs root or unprivileged user namespaces). About 20 ms, once."""
    why = available()
    if why:
        return why
    try:
        proc = spawn(["true"], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, [], "probe", "/")
    except SandboxError as e:
        return f"bubblewrap cannot make a sandbox: {e}"
    proc.popen.wait()
    for fd in (proc.stdout, proc.stderr, proc.setup):
        os.close(fd)
    return ""


def _existing_prefix(path: str, root: str = "") -> tuple[str, list[str]]:
    """The longest prefix of ``path`` that exists on the host (symlinks resolved), or in the
    root filesystem ``root`` (symlinks kept: they point inside it), and the components after it."""
    parts = [p for p in path.split("/") if p]
    for i in range(len(parts), -1, -1):
        head = "/" + "/".join(parts[:i])
        if root:
            if os.path.lexists(root + head):
                return head, parts[i:]
        elif os.path.exists(head):
            return os.path.realpath(head), parts[i:]
    return "/", parts


PRIVATE = ("/run", "/mnt", "/media", "/srv")  # a container's own (empty) when something is mounted under them


def root_args(targets: list[str], root: str = "") -> list[str]:
    """The host's root (or the root filesystem ``root``, an image's), read-only, with room
    made for mount targets that do not exist there: under /run (and /mnt, /media, /srv) the
    container gets an empty tmpfs of its own, as a container's image has; elsewhere each
    directory on the way to such a target is a tmpfs holding binds of the root's entries.
    Without such targets the root is one read-only bind (the cheapest sandbox)."""
    split: set[str] = set()
    private: set[str] = set()
    for t in targets:
        head, rest = _existing_prefix(t, root)
        if not rest or head == "/tmp" or head.startswith("/tmp/"):
            continue
        top = "/" + head.strip("/").split("/")[0]
        if top in PRIVATE:
            private.add(top)
            continue
        d = head
        while True:
            split.add(d)
            if d == "/":
                break
            d = os.path.dirname(d)
    args: list[str] = []

    def layout(d: str) -> None:
        try:
            names = sorted(os.listdir(root + d))
        except OSError:
            return
        for name in names:
            p = os.path.join(d, name)
            src = root + p
            if d == "/" and (name in SPECIAL or p in private):
                continue
            if os.path.islink(src):
                args.extend(["--symlink", os.readlink(src), p])
            elif p in split and os.path.isdir(src):
                args.extend(["--dir", p])
                layout(p)
            elif os.path.isdir(src) or os.path.isfile(src):
                args.extend(["--ro-bind", src, p])

    if split:
        layout("/")
        args += ["--ro-bind-try", "/sys", "/sys"]
    else:
        args += ["--ro-bind", root or "/", "/"]
    for d in sorted(private):
        args += ["--tmpfs", d]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for p in [] if root else _python_under_tmp():
        args += ["--ro-bind", p, p]
    return args


def _python_under_tmp() -> list[str]:
    """The server's own Python installation (its virtual environment, its base) and the
    checkout mockkube runs from, where they live under /tmp, which the container's own /tmp
    hides: bound back read-only, so the server's ``python`` (and programs of the checkout
    that a profile's ``kubelet.images`` names) run in a container as on the host."""
    checkout = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, checkout)}
    if "/tmp" in paths:
        return []
    under = sorted(p for p in paths if p.startswith("/tmp/"))
    return [p for p in under if not any(p.startswith(q + "/") for q in under)]


def host_target(path: str, root: str = "") -> str:
    """A mount target with the host's symlinks on its way resolved (/var/run/x -> /run/x):
    bubblewrap would follow an absolute symlink out of the sandbox it builds. In an image's
    root filesystem the target stays as written."""
    if root:
        return os.path.normpath(path)
    head, rest = _existing_prefix(os.path.normpath(path))
    return os.path.join(head, *rest) if rest else head


def bwrap_argv(
    argv: list[str],
    mounts: list[Mount],
    hostname: str,
    cwd: str,
    err_fd: int,
    info_fd: int,
    ready_fd: int,
    unshare: tuple[str, ...] = (),
    root: str = "",
) -> list[str]:
    mounts = [Mount(m.source, host_target(m.target, root), m.read_only) for m in mounts]
    targets = [m.target for m in mounts]
    make_cwd = bool(cwd) and not os.path.exists(root + cwd) and not _under(cwd, targets)
    out = [BWRAP] + root_args(targets + ([cwd] if make_cwd else []), root)
    for m in mounts:
        out += ["--ro-bind" if m.read_only else "--bind", m.source, m.target]
    if make_cwd:
        out += ["--dir", cwd]
    if "--dir" in out[: out.index("--proc")]:  # the root is a tmpfs of binds: make it read-only too
        out += ["--remount-ro", "/"]
    out += list(unshare) + [
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-ipc",
        "--hostname",
        hostname,
        "--die-with-parent",
        "--as-pid-1",
        "--new-session",
        "--info-fd",
        str(info_fd),
        "--chdir",
        cwd or "/",
        "--",
    ]
    # the sandbox is complete once this runs: say so, then become the command (an image's
    # root has its own /bin/sh, whose redirections may not take fds above 9: /proc's names)
    if root:
        out += ["/bin/sh", "-c", f'printf x >/proc/self/fd/{ready_fd}; exec "$@" 2>/proc/self/fd/{err_fd}']
    else:
        out += [BASH, "-c", f'printf x >&{ready_fd}; exec "$@" 2>&{err_fd} {err_fd}>&- {ready_fd}>&-']
    return out + ["sh"] + argv


def _under(path: str, targets: list[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in targets)


def spawn(
    argv: list[str],
    env: dict[str, str],
    mounts: list[Mount],
    hostname: str,
    cwd: str,
    netns_pid: int = 0,
    unshare: tuple[str, ...] = (),
    root: str = "",
) -> Proc:
    """Start ``argv`` in a new sandbox (in the network namespace of ``netns_pid``, the pod's,
    when given); SandboxError when bubblewrap does not get as far as starting it."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    set_r, set_w = os.pipe()
    info_r, info_w = os.pipe()
    ready_r, ready_w = os.pipe()
    try:
        cmd = bwrap_argv(argv, mounts, hostname, cwd, err_w, info_w, ready_w, unshare, root)
        if netns_pid:  # nsenter joins the pod's network, then becomes bubblewrap
            cmd = [NSENTER, f"--net=/proc/{netns_pid}/ns/net", "--"] + cmd
        popen = subprocess.Popen(
            cmd,
            pass_fds=(err_w, info_w, ready_w),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=set_w,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        for fd in (out_r, out_w, err_r, err_w, set_r, set_w, info_r, info_w, ready_r, ready_w):
            os.close(fd)
        raise SandboxError(f"cannot run {BWRAP}: {e}") from e
    for fd in (out_w, err_w, set_w, info_w, ready_w):
        os.close(fd)
    info = b""
    while chunk := os.read(info_r, 4096):  # bubblewrap writes it once the child exists, then closes it
        info += chunk
    os.close(info_r)
    ready = os.read(ready_r, 1)  # b"" when bubblewrap failed before the command
    os.close(ready_r)
    try:
        child = int(json.loads(info)["child-pid"])
        if not ready:
            raise ValueError
    except (ValueError, KeyError):
        popen.wait()
        msg = _drain(set_r).strip() or f"bubblewrap exited with {popen.returncode}"
        for fd in (out_r, err_r, set_r):
            os.close(fd)
        raise SandboxError(msg) from None
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
    return Proc(popen, child, out_r, err_r, set_r)


def _drain(fd: int) -> str:
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except OSError:
        pass
    return data.decode(errors="replace")


def setup_messages(proc: Proc) -> str:
    """What bubblewrap itself said (after the process ended): why the sandbox failed."""
    if proc.setup < 0:
        return ""
    msg = _drain(proc.setup)
    os.close(proc.setup)
    proc.setup = -1
    return msg.strip()


def nsenter_argv(child_pid: int, argv: list[str], cwd: str) -> list[str]:
    """Run ``argv`` inside a running container's namespaces and root (kubectl exec)."""
    cmd = [NSENTER, "-t", str(child_pid), "-m", "-u", "-i", "-n", "-p", "-r", "--", "/bin/sh", "-c", CD, cwd or "/"]
    return cmd + argv


CD = 'cd "$0" && exec "$@"'  # nsenter's --wd=DIR would open DIR on the host, before it enters


def spawn_pause(pod_uid: str) -> Proc:
    """The pod's network namespace, held by a process of its own (the pause container):
    loopback only (bubblewrap brings ``lo`` up)."""
    return spawn(
        ["sleep", "infinity"],
        {"PATH": "/usr/bin:/bin"},
        [],
        f"pause-{pod_uid}",
        "/",
        netns_pid=0,
        unshare=("--unshare-net",),
    )


def listener(addr: str, port: int) -> socket.socket:
    """A non-blocking listening TCP socket (made in a pod's network with ``in_netns``)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    s.setblocking(False)
    return s


CLONE_NEWNET = 0x40000000


def in_netns(pid: int, fn):
    """Run ``fn()`` with this thread in the network namespace of ``pid`` (sockets it makes
    stay there), then return the thread to its own."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(target, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into the network namespace of {pid}: {os.strerror(err)}")
        try:
            return fn()
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:  # pragma: no cover - the thread cannot go home
                raise SystemExit("setns back to the server's network namespace failed")
    finally:
        os.close(own)
        os.close(target)
