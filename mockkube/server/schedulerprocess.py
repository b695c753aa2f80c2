"""The scheduler in a process of its own (``mockkube scheduler``, schedulermain.py), as the
server's component (childprocess.py): besides what every such process answers, it explains
pods. It authenticates as ``system:kube-scheduler`` when the server authenticates, so RBAC
applies to it as to kube-scheduler.
"""

from __future__ import annotations

from typing import Any

from mockkube.server.childprocess import ChildComponent


class SchedulerProcess(ChildComponent):
    """The component standing for the scheduler process in ``server.components``."""

    name = "scheduler"
    attr = "scheduler_child"
    user = {"username": "system:kube-scheduler"}

    def extra_args(self, workdir: str) -> list[str]:
        out = []
        if self.server.filter_timeout is not None:
            out += ["--dra-filter-timeout", f"{self.server.filter_timeout}s"]
        if self.server.binding_timeout is not None:
            out += ["--binding-timeout", f"{self.server.binding_timeout}s"]
        return out

    async def explain(self, namespace: str, name: str) -> dict | None:
        return (await self.server.scheduler_child.request("explain", namespace=namespace, name=name))["report"]


async def start(server: Any) -> list:
    component = SchedulerProcess(server)
    await component.start()
    return [component]
