"""kube-scheduler for mockkube: a queue plus a plugin framework with DRA structured
allocation (see scheduler.py)."""

from __future__ import annotations

from typing import Any


async def start(server: Any) -> list:
    from mockkube.scheduler.scheduler import Scheduler

    sched = Scheduler(server)
    await sched.start()
    return [sched]
