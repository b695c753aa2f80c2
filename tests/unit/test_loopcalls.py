"""loopcalls: calls from another thread reach the loop in order, with one wake-up per burst."""

from __future__ import annotations

import asyncio
import threading

from mockkube.storage import loopcalls


async def test_a_burst_from_another_thread_wakes_the_loop_once_and_keeps_order():
    loop = asyncio.get_running_loop()
    wakeups = 0
    real = loop.call_soon_threadsafe

    def counting(*args, **kwargs):
        nonlocal wakeups
        wakeups += 1
        return real(*args, **kwargs)

    loop.call_soon_threadsafe = counting
    seen: list[int] = []
    done = asyncio.Event()

    def burst() -> None:
        for i in range(100):
            loopcalls.call_soon_threadsafe(loop, lambda i=i: seen.append(i))
        loopcalls.call_soon_threadsafe(loop, done.set)

    try:
        t = threading.Thread(target=burst)
        t.start()
        t.join()  # the loop is not running meanwhile: the whole burst is one wake-up
        await asyncio.wait_for(done.wait(), 10)
    finally:
        del loop.call_soon_threadsafe
    assert seen == list(range(100))
    assert wakeups == 1


async def test_a_failing_call_does_not_stop_the_others(caplog):
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def boom() -> None:
        raise ValueError("boom")

    def burst() -> None:
        loopcalls.call_soon_threadsafe(loop, boom)
        loopcalls.call_soon_threadsafe(loop, done.set)

    t = threading.Thread(target=burst)
    t.start()
    t.join()
    await asyncio.wait_for(done.wait(), 10)
    assert "boom" in caplog.text


def test_a_call_for_a_closed_loop_is_dropped():
    loop = asyncio.new_event_loop()
    loop.close()
    loopcalls.call_soon_threadsafe(loop, lambda: None)  # no error
    loopcalls.call_soon_threadsafe(loop, lambda: None)
