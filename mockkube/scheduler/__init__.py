"""kube-scheduler for mockkube: a queue plus a plugin framework with DRA structured
allocation (see scheduler.py)."""

from __future__ import annotations

from typing import Any

DEFAULT_FILTER_TIMEOUT = 10.0  # upstream DynamicResourcesArgs.filterTimeout


def filter_timeout(server: Any) -> float:
    """DynamicResources filterTimeout in seconds (0: none): ``--dra-filter-timeout``, else
    the cluster profile's ``scheduler.filterTimeout``, else upstream's 10 s. ``server`` is
    the API server or, in the scheduler process, its host."""
    if getattr(server, "filter_timeout", None) is not None:
        return float(server.filter_timeout)
    profile = getattr(server, "profile", None)
    setting = (profile.scheduler if profile is not None else {}).get("filterTimeout")
    if setting is None:
        return DEFAULT_FILTER_TIMEOUT
    from mockkube.machinery.durations import parse_duration

    return parse_duration(setting)


def binding_timeout(server: Any) -> float:
    """KEP-5007 bindingTimeout: ``mockkube serve --binding-timeout``, else the cluster
    profile's ``scheduler.bindingTimeout``, else upstream's default of 10 minutes."""
    from mockkube.scheduler.plugins.bindingconditions import DEFAULT_BINDING_TIMEOUT

    if getattr(server, "binding_timeout", None) is not None:
        return float(server.binding_timeout)
    from mockkube.kubelet.cluster import load_profile
    from mockkube.machinery.durations import parse_duration

    profile = getattr(server, "profile", None) or load_profile(getattr(server, "cluster", None))
    setting = profile.scheduler.get("bindingTimeout")
    return parse_duration(setting) if setting not in (None, "") else DEFAULT_BINDING_TIMEOUT


async def start(server: Any) -> list:
    if getattr(server, "scheduler_process", False):  # `mockkube serve`: a process of its own
        from mockkube.server import schedulerprocess as process

        return await process.start(server)
    from mockkube.scheduler.scheduler import Scheduler

    sched = Scheduler(server, binding_timeout=binding_timeout(server))
    await sched.start()
    return [sched]
