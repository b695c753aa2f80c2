"""What a process container uses, read from /proc as cAdvisor reads its cgroup: the CPU
time and the resident memory of every process in the container's PID namespace (its
command, what it started, and the execs into it), for the kubelet's resource metrics
(kubelet/nodeproxy.py). A container has no cgroup of its own here, so the working set is
the processes' resident set, and the CPU time of a process that ended counts once a process
of the container has waited for it (an exec's, waited for from outside, is lost when it ends)."""

from __future__ import annotations

import os
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Usage:
    cpu_seconds: float = 0.0
    memory_bytes: int = 0


def _stat(pid: int) -> float | None:
    """The CPU seconds of one process and of the children it has waited for (theirs
    included, recursively: summed over live processes, nothing counts twice)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the command: state ppid ... utime(11) stime(12) cutime(13) cstime(14), 0-based from state
    return sum(int(x) for x in fields[11:15]) / TICKS


def _resident(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def namespaces(pids: list[int]) -> dict[str, int]:
    """Each PID namespace (as /proc names it) -> the pid of its init among ``pids``."""
    out = {}
    for pid in pids:
        try:
            out[os.readlink(f"/proc/{pid}/ns/pid")] = pid
        except OSError:
            continue
    return out


def of_namespaces(inits: list[int]) -> dict[int, Usage]:
    """The usage of the PID namespaces whose init processes are ``inits`` (a container's
    PID 1 each), in one pass over /proc."""
    wanted = namespaces(inits)
    out = {pid: Usage() for pid in inits}
    if not wanted:
        return out
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            ns = os.readlink(f"/proc/{pid}/ns/pid")
        except OSError:
            continue
        init = wanted.get(ns)
        if init is None:
            continue
        st = _stat(pid)
        if st is None:
            continue
        u = out[init]
        u.cpu_seconds += st
        u.memory_bytes += _resident(pid)
    return out
