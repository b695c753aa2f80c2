"""The collector held over a start and paced by memory after it (mockkube/server/gctuning.py)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import subprocess
import sys

from mockkube.server import gctuning


def test_a_full_collection_is_due_past_the_slack():
    pacer = gctuning.Pacer(asyncio.new_event_loop())
    pacer.floor = 400 << 20
    assert not pacer.due(400 << 20)
    assert not pacer.due((400 << 20) + gctuning.SLACK)
    assert pacer.due((400 << 20) + gctuning.SLACK + 1)


def test_the_resident_size_is_read_and_freed_memory_released():
    rss = gctuning.resident_bytes()
    assert rss is not None and rss > 1 << 20
    gctuning.release_free_memory()  # must not fail where glibc's malloc_trim is missing


def _pacer(monkeypatch, sizes, free: int = 0) -> tuple[gctuning.Pacer, list, list]:
    readings = iter(sizes)
    collected, trimmed = [], []
    monkeypatch.setattr(gctuning, "resident_bytes", lambda: next(readings) << 20)
    monkeypatch.setattr(gctuning, "free_heap_bytes", lambda: free)
    monkeypatch.setattr(gctuning, "release_free_memory", lambda: trimmed.append(1))
    monkeypatch.setattr(gctuning.gc, "collect", lambda: collected.append(1))
    pacer = gctuning.Pacer(asyncio.new_event_loop())
    pacer.floor = 100 << 20
    return pacer, collected, trimmed


def test_a_collection_that_brings_the_size_back_resets_the_pace(monkeypatch):
    pacer, collected, _ = _pacer(monkeypatch, [200, 105, 200, 104])
    pacer.check(now=0)  # 200 MiB: past 100 + 16; the collection brings it to 105
    pacer.check(now=2)  # grown again, collected again at once
    assert len(collected) == 2 and pacer.floor == 100 << 20


def test_memory_that_stays_is_retried_with_backoff_then_taken_as_the_floor(monkeypatch):
    # every collection leaves 160 MiB (alive): retried after 2, 4, ..., 64 s, then the floor
    pacer, collected, _ = _pacer(monkeypatch, itertools.repeat(160))
    times = []
    now = 0.0
    while pacer.floor == 100 << 20:
        before = len(collected)
        pacer.check(now)
        if len(collected) > before:
            times.append(now)
        now += 1
    assert times == [0, 2, 6, 14, 30, 62, 126]
    assert pacer.floor == 160 << 20
    pacer.check(now)  # at the new floor: nothing to do
    assert len(collected) == 7


def test_held_connections_let_go_are_collected_at_the_next_retry(monkeypatch):
    pacer, collected, _ = _pacer(monkeypatch, [160, 160, 160, 160, 99])
    pacer.check(now=0)  # alive: retry in 2 s
    pacer.check(now=1)  # not yet
    pacer.check(now=2)  # collection: now garbage, back to 99
    assert len(collected) == 2 and pacer.floor == 99 << 20


def test_freed_heap_is_handed_back_without_a_collection(monkeypatch):
    pacer, collected, trimmed = _pacer(monkeypatch, [112, 101], free=gctuning.SLACK + 1)
    pacer.check(now=0)  # 112 MiB: not due (100 + 16), but 16 MiB are free in the heap
    assert trimmed == [1] and collected == [] and pacer.floor == 100 << 20


def test_glibc_tells_how_much_freed_heap_it_holds_and_hands_it_back():
    blocks = [bytearray(100 << 10) for _ in range(300)]  # below glibc's mmap threshold: in the heap
    pin = bytearray(100 << 10)  # above them: the heap's top cannot shrink by itself
    before = gctuning.free_heap_bytes()
    del blocks
    held = gctuning.free_heap_bytes()
    assert held - before > 20 << 20
    gctuning.release_free_memory()
    assert gctuning.free_heap_bytes() < held
    del pin


def test_a_busy_process_waits_for_a_quieter_tick(monkeypatch):
    pacer, collected, _ = _pacer(monkeypatch, [200, 200, 105])
    pacer.check(now=0, busy=True)  # a burst: requests first
    assert collected == []
    pacer.check(now=2)
    assert len(collected) == 1 and pacer.floor == 100 << 20


def test_a_burst_of_writes_counts_as_busy_whatever_the_cpu(monkeypatch):
    """On a loaded machine a server in a burst may get under half a core: its writes tell."""
    pacer, collected, _ = _pacer(monkeypatch, [200, 200, 200, 105])
    writes = [0]
    pacer.activity, pacer._writes = (lambda: writes[0]), 0
    monkeypatch.setattr(pacer.loop, "call_later", lambda *a: None, raising=False)
    monkeypatch.setattr(gctuning.time, "process_time", lambda: 0.0)  # no CPU to speak of
    pacer._cpu = 0.0
    writes[0] = gctuning.BUSY_WRITES + 1
    pacer._tick()
    assert collected == []  # 101 writes in the tick: a burst
    pacer._tick()  # no write since: quiet
    assert len(collected) == 1


def test_a_reset_owes_a_collection_whatever_the_size(monkeypatch):
    """A reset's retired components are garbage in cycles, far below the slack: the collection
    they are owed runs at the next quiet tick (the soak benchmark saw every reset's informers
    stay until some later full collection), after ``OWED_WAIT`` seconds of busy ticks at the
    latest, and no more than once every ``OWED_WAIT`` seconds."""
    pacer, collected, _ = _pacer(monkeypatch, itertools.repeat(101))  # 101 MiB: not due by size
    clock = [1000.0]
    monkeypatch.setattr(gctuning.time, "monotonic", lambda: clock[0])
    pacer.check(now=0)
    assert collected == []  # nothing owed, nothing due
    pacer.owe()
    pacer.check(now=2, busy=True)
    assert collected == []  # a burst: requests first
    pacer.check(now=4)
    assert len(collected) == 1  # the next quiet tick
    pacer.owe()  # another reset right after: waits out OWED_WAIT since the last one
    clock[0] += 2
    pacer.check(now=6)
    assert len(collected) == 1
    clock[0] += gctuning.OWED_WAIT
    pacer.check(now=8, busy=True)  # busy, but owed for OWED_WAIT: collected now
    assert len(collected) == 2
    clock[0] += 100
    pacer.check(now=10)
    assert len(collected) == 2  # owed once, collected once


_FROZEN_GARBAGE = """
import asyncio, gc, weakref
from mockkube.server import gctuning

class Component:  # a reset's retired component: garbage in a cycle (informer <-> handlers)
    def __init__(self):
        self.handlers = [self.run]
    def run(self):
        pass
    async def stop(self):
        pass

{start}
gctuning.settle()  # as the server does once started: the first components are frozen
{retire}
gc.collect()
assert gone() is not None  # a full collection never looks at frozen objects
{collect}
assert gone() is None, "the retired component outlived the collection a reset owes"
assert gc.get_freeze_count() > 0  # what lives is frozen again: collections stay cheap
"""


def _run(start: str, retire: str, collect: str) -> subprocess.CompletedProcess:
    """In a process of its own: freezing is process-wide (the pytest plugin freezes too)."""
    return subprocess.run(
        [sys.executable, "-c", _FROZEN_GARBAGE.format(start=start, retire=retire, collect=collect)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_the_collection_a_reset_owes_reaches_the_frozen_components():
    """The components a reset retires were frozen (``settle()`` after start-up): ``gc.collect()``
    alone left the first ones for the life of the process (the soak benchmark's server)."""
    got = _run(
        "old = Component(); gone = weakref.ref(old)",
        "del old",
        "pacer = gctuning.Pacer(asyncio.new_event_loop()); pacer.start(); pacer.owe(); pacer.check(0.0)",
    )
    assert got.returncode == 0, got.stderr


def test_the_scheduler_process_owes_a_collection_at_a_pause():
    """The scheduler process survives resets: a pause stops its scheduler, which was frozen,
    and its pacer collects it at the next quiet tick (not in the reset's path)."""
    got = _run(
        "from mockkube.server.schedulermain import Host\n"
        "host = Host.__new__(Host); host.components = [Component()]; gone = weakref.ref(host.components[0])\n"
        "host.pacer = gctuning.Pacer(asyncio.new_event_loop()).start()",
        "asyncio.run(host.pause())",
        "host.pacer.check(0.0)",
    )
    assert got.returncode == 0, got.stderr


def test_hold_and_release_leave_a_collector_the_caller_stopped_alone() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        gctuning.hold()
        assert not gc.isenabled()
        gctuning.release()
        assert gc.isenabled()
        gc.disable()  # the caller's own choice: neither hold() nor release() undoes it
        gctuning.hold()
        gctuning.release()
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_the_executable_holds_collections_over_its_imports_and_a_command_releases_them() -> None:
    code = (
        "import gc\n"
        "from mockkube.cli.entry import main\n"
        "held = not gc.isenabled()\n"
        "import mockkube.cli.main as m\n"
        "status = m.main(['clock', 'show', '--server', 'http://127.0.0.1:1'])\n"
        "print(held, status, gc.isenabled())\n"
        "from mockkube.server import gctuning\n"
        "gctuning.hold()\n"
        "gctuning.settle()  # a server's, after its start: collections run again\n"
        "print(gc.isenabled())\n"
    )
    # a process of its own: settle() freezes what lives, which this test process must not
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "1", "True", "True"], out.stderr
