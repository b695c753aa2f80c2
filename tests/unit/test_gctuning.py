"""The collector's pacing by memory (mockkube/server/gctuning.py)."""

from __future__ import annotations

import asyncio

from mockkube.server import gctuning


def test_a_full_collection_is_due_after_a_quarter_and_the_slack():
    pacer = gctuning.Pacer(asyncio.new_event_loop())
    pacer.baseline = 400 << 20
    assert not pacer.due(400 << 20)
    assert not pacer.due(int((400 << 20) * gctuning.GROWTH) + gctuning.SLACK)
    assert pacer.due(int((400 << 20) * gctuning.GROWTH) + gctuning.SLACK + 1)


def test_the_resident_size_is_read_and_freed_memory_released():
    rss = gctuning.resident_bytes()
    assert rss is not None and rss > 1 << 20
    gctuning.release_free_memory()  # must not fail where glibc's malloc_trim is missing


async def test_the_pacer_collects_once_memory_has_grown(monkeypatch):
    sizes = iter([100 << 20, 200 << 20, 110 << 20])
    monkeypatch.setattr(gctuning, "resident_bytes", lambda: next(sizes))
    pacer = gctuning.Pacer(asyncio.get_running_loop(), every=0.01).start()
    try:
        assert pacer.baseline == 100 << 20
        pacer._tick()  # 200 MiB: past 125 MiB + 16 MiB
        assert pacer.collections == 1 and pacer.baseline == 110 << 20
    finally:
        pacer.stop()


async def test_freed_heap_is_handed_back_without_a_collection(monkeypatch):
    sizes = iter([100 << 20, 120 << 20, 101 << 20])
    trims = []
    monkeypatch.setattr(gctuning, "resident_bytes", lambda: next(sizes))
    monkeypatch.setattr(gctuning, "free_heap_bytes", lambda: gctuning.SLACK + 1)
    monkeypatch.setattr(gctuning, "release_free_memory", lambda: trims.append(1))
    pacer = gctuning.Pacer(asyncio.get_running_loop(), every=0.01).start()
    try:
        pacer._tick()  # 120 MiB: not due (125 + 16), but 16 MiB are free in the heap
        assert trims == [1] and pacer.collections == 0 and pacer.baseline == 100 << 20
    finally:
        pacer.stop()


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
