"""Debug-only memory snapshots of a running server: ``MOCKKUBE_MEMDEBUG=DIR`` in the
environment of ``mockkube serve`` starts ``tracemalloc`` at start-up, and each ``SIGUSR2``
writes into DIR a tracemalloc snapshot (``server-snap-N.tracemalloc``, for
``tracemalloc.Snapshot.load`` and ``compare_to``) and ``server-snap-N.json``: the resident size,
glibc's heap figures (in use, free, arena) and the count of live objects by type. Comparing
snapshots taken minutes apart tells growth of Python objects (tracemalloc's sizes, the
counts) from the allocator holding memory nobody uses (glibc's free bytes, and the resident
size beyond what tracemalloc traces). Tracing slows the server several-fold; it is for
finding growth, never for figures of speed (tests/bench/soak.py ``--memdebug DIR`` uses it).
``MOCKKUBE_MEMDEBUG_TRACE=N``: N frames a trace (default 12; fewer make snapshots quicker),
0 the figures without tracemalloc (no slow-down);
``MOCKKUBE_MEMDEBUG_COLLECT=1``: each snapshot then runs a full collection and records the
figures after it too (what it freed was cyclic garbage, not live data).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import os
import re
import signal
import time

ENV = "MOCKKUBE_MEMDEBUG"
FRAMES = 12


def enabled() -> str | None:
    return os.environ.get(ENV) or None


def start(loop: asyncio.AbstractEventLoop, name: str = "server") -> None:
    """Trace allocations from now on and take a snapshot at each SIGUSR2 (when ``ENV`` is set);
    ``name`` prefixes the files (the scheduler process writes its own)."""
    where = enabled()
    if where is None:
        return
    import tracemalloc

    os.makedirs(where, exist_ok=True)
    frames = int(os.environ.get(ENV + "_TRACE", str(FRAMES)) or 0)  # 0: the figures alone (no slow-down)
    if frames:
        tracemalloc.start(frames)
    taken = [0]

    def take() -> None:
        taken[0] += 1
        write(os.path.join(where, f"{name}-snap-{taken[0]}"))

    loop.add_signal_handler(signal.SIGUSR2, take)


def figures() -> dict:
    from mockkube.server import gctuning

    out: dict = {"time": time.time(), "rss": gctuning.resident_bytes()}
    libc = gctuning._glibc()
    if libc is not None:
        info = libc.mallinfo2()
        out["malloc"] = {
            "arena": info.arena,
            "in_use": info.uordblks,
            "free": info.fordblks + info.fsmblks,
            "mmapped": info.hblkhd,
            "keepcost": info.keepcost,
        }
    out["pymalloc"] = pymalloc_figures()
    counts = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
    out["objects"] = dict(counts.most_common(150))
    out["gc"] = {"counts": gc.get_count(), "stats": gc.get_stats(), "frozen": gc.get_freeze_count()}
    return out


_PYMALLOC = re.compile(
    r"^# (arenas allocated current|bytes in allocated blocks|bytes in available blocks)\s*=\s*([\d,]+)"
)
_POOLS = re.compile(r"^(\d+) unused pools \* (\d+) bytes")


def pymalloc_figures() -> dict:
    """CPython's small-object allocator (objects up to 512 bytes live in its 1 MiB arenas,
    which glibc's figures do not count): arenas held, bytes in live blocks, bytes free in
    its pools (fragmentation that no ``malloc_trim`` returns)."""
    import sys

    r, w = os.pipe()
    saved = os.dup(2)
    try:
        os.dup2(w, 2)
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(w)
    chunks = []
    while chunk := os.read(r, 1 << 16):
        chunks.append(chunk)
    os.close(r)
    out = {}
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        if m := _PYMALLOC.match(line):
            out[m.group(1).replace(" ", "_")] = int(m.group(2).replace(",", ""))
        elif m := _POOLS.match(line):
            out["unused_pools_bytes"] = int(m.group(1)) * int(m.group(2))
    return out


def write(path: str) -> None:
    import tracemalloc

    got = figures()
    if os.environ.get(ENV + "_COLLECT") == "1":  # then collect: what goes was cyclic garbage
        got["collected"] = gc.collect()
        after = figures()
        got["after_collect"] = {k: after[k] for k in ("rss", "malloc", "pymalloc", "objects") if k in after}
    if tracemalloc.is_tracing():
        got["traced"], got["traced_peak"] = tracemalloc.get_traced_memory()
        tracemalloc.take_snapshot().dump(path + ".tracemalloc")
    with open(path + ".json", "w") as f:
        json.dump(got, f)
