"""The watch event log forgets events older than etcd's compaction would keep (a watch from
before them is 410 Gone), and events past its capacity."""

from __future__ import annotations

from mockkube.storage import watch
from mockkube.storage.cache import Entry
from mockkube.storage.watch import Event, EventLog


def ev(rv: int) -> Event:
    return Event("ADDED", Entry({"metadata": {"name": f"o{rv}"}}, b"{}", rv), None)


def test_events_older_than_the_compaction_age_are_forgotten(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(watch.time, "monotonic", lambda: now[0])
    log = EventLog(capacity=100, start_rv=0, max_age=300)
    for rv in (1, 2, 3):
        log.append(ev(rv))
    now[0] += 150
    log.append(ev(4))
    assert [e.rv for e in log.since(0)] == [1, 2, 3, 4]
    now[0] += 151  # 1..3 are 301 s old: the next append compacts them
    log.append(ev(5))
    assert len(log) == 2 and log.since(0) is None and log.since(2) is None
    assert [e.rv for e in log.since(3)] == [4, 5]  # nothing after 3 was forgotten
    now[0] += 301
    log.compact()  # a quiet resource: the store compacts every log now and then
    assert len(log) == 0 and log.since(4) is None and log.since(5) == []


def test_capacity_still_bounds_the_log():
    log = EventLog(capacity=3, start_rv=0)
    for rv in range(1, 6):
        log.append(ev(rv))
    assert len(log) == 3 and log.since(1) is None and [e.rv for e in log.since(2)] == [3, 4, 5]
