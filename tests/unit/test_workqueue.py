"""The controllers' work queue (mockkube/client/informer.py): delayed re-adds, held in one
heap with one timer, come out when due, in due order; the sooner of two re-adds of one key
wins; shutdown drops what is pending."""

from __future__ import annotations

import asyncio

from mockkube.client.informer import WorkQueue


async def next_key(q: WorkQueue, timeout: float = 5.0):
    key = await asyncio.wait_for(q.get(), timeout)
    q.done(key)
    return key


async def test_delayed_keys_come_out_when_due_in_due_order():
    q = WorkQueue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    q.add_after("late", 0.15)
    q.add_after("early", 0.05)
    q.add_after("now", 0)
    assert await next_key(q) == "now"
    assert await next_key(q) == "early"
    assert loop.time() - start >= 0.05
    assert await next_key(q) == "late"
    assert loop.time() - start >= 0.15
    assert not q._heap and not q._due and q._timer is None


async def test_the_sooner_of_two_re_adds_wins_and_a_key_comes_out_once():
    q = WorkQueue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    q.add_after("k", 10)
    q.add_after("k", 0.05)  # sooner: replaces the 10 s re-add
    q.add_after("k", 5)  # later than what is pending: ignored
    assert await next_key(q) == "k"
    assert loop.time() - start < 5
    q.add_after("k", 0.05)  # due again after it came out
    assert await next_key(q) == "k"
    q.add_after("other", 0.1)
    assert await next_key(q) == "other"  # the stale 10 s and 5 s entries of "k" never fire
    assert len(q) == 0


async def test_shutdown_drops_pending_re_adds():
    q = WorkQueue()
    q.add_after("k", 0.05)
    timer = q._timer
    q.shutdown()
    assert timer is not None and timer.cancelled()
    assert q._timer is None and not q._heap and not q._due
