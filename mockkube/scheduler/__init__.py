"""kube-scheduler for mockkube: a queue plus a plugin framework with DRA structured
allocation (see scheduler.py)."""

from __future__ import annotations

from typing import Any


async def start(server: Any) -> list:
    """The scheduler in this process (``mockkube serve`` runs it as a process of its own instead:
    mockkube/server/components.py picks mockkube/server/schedulerprocess.py)."""
    from mockkube.scheduler.scheduler import Scheduler
    from mockkube.scheduler.settings import binding_timeout

    sched = Scheduler(server, binding_timeout=binding_timeout(server))
    await sched.start()
    return [sched]
