"""A process's children as the tests and benchmarks look them up (the server's scheduler,
controller-manager and kubelet shard processes), read from /proc."""

from __future__ import annotations

import os


def child_processes(pid: int) -> dict[int, list[str]]:
    """Each child of ``pid`` (of any of its threads) with its command line; a child that
    ended meanwhile is left out."""
    out: dict[int, list[str]] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
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
