"""kube-scheduler for mockkube: a queue plus a plugin framework with DRA structured
allocation (see scheduler.py)."""

from __future__ import annotations

from typing import Any


def binding_timeout(server: Any) -> float:
    """KEP-5007 bindingTimeout: ``mockkube serve --binding-timeout``, else the cluster
    profile's ``scheduler.bindingTimeout``, else upstream's default of 10 minutes."""
    from mockkube.scheduler.plugins.bindingconditions import DEFAULT_BINDING_TIMEOUT

    if getattr(server, "binding_timeout", None) is not None:
        return float(server.binding_timeout)
    from mockkube.machinery.durations import parse_duration
    from mockkube.kubelet.cluster import load_profile

    profile = getattr(server, "profile", None) or load_profile(getattr(server, "cluster", None))
    setting = profile.scheduler.get("bindingTimeout")
    return parse_duration(setting) if setting not in (None, "") else DEFAULT_BINDING_TIMEOUT


async def start(server: Any) -> list:
    if getattr(server, "scheduler_process", False):  # `mockkube serve`: a process of its own
        from mockkube.scheduler import process

        return await process.start(server)
    from mockkube.scheduler.scheduler import Scheduler

    sched = Scheduler(server, binding_timeout=binding_timeout(server))
    await sched.start()
    return [sched]
