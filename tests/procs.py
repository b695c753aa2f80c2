"""A process's children as the tests and benchmarks look them up (the server's scheduler,
controller-manager and kubelet shard processes), read from /proc."""

from __future__ import annotations

import os


def child_processes(pid: int) -> dict[int, list[str]]:
    """Each child of ``pid`` (of any of its threads) with its command line; a child that
    ended meanwhile is left out."""
    out: dict[int, list[str]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # ``pid`` itself ended (a descendant that exited while we walked the tree)
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            continue
        for k in kids:
            try:
                with open(f"/proc/{k}/cmdline") as f:
                    out[k] = f.read().split("\0")
            except OSError:
                continue
    return out


def descendants(pid: int) -> dict[int, list[str]]:
    """Every process under ``pid`` (children, their children, ...) with its command line."""
    out: dict[int, list[str]] = {}
    todo = [pid]
    while todo:
        kids = child_processes(todo.pop())
        out.update(kids)
        todo += kids
    return out


def accepted_by(server_port: int, client_port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` holds the server end of the loopback TCP connection from
    ``client_port`` to ``server_port`` (None while none has accepted it): which of several
    processes sharing a port with SO_REUSEPORT the kernel gave the connection to."""
    inode = ""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for row in f.readlines()[1:]:
                cols = row.split()
                local, remote = cols[1].rsplit(":", 1)[1], cols[2].rsplit(":", 1)[1]
                if int(local, 16) == server_port and int(remote, 16) == client_port and cols[9] != "0":
                    inode = cols[9]
    if not inode:
        return None
    want = f"socket:[{inode}]"
    for d in pids:
        try:
            for fd in os.listdir(f"/proc/{d}/fd"):
                if os.readlink(f"/proc/{d}/fd/{fd}") == want:
                    return d
        except OSError:
            continue
    return None
