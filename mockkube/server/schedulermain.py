"""``mockkube scheduler --kubeconfig FILE``: the scheduler as a process of its own, a client
of the API like kube-scheduler (DESIGN.md principle 2), on a core of its own.

Its informers read a ``Replica`` filled by list-and-watch; its writes go over HTTP, and the
binding cycle awaits them beside the next scheduling cycles. ``mockkube serve`` starts it
(``mockkube.server.schedulerprocess``); the process, its control channel and its leader
election are componentmain.py's, shared with ``mockkube controller-manager``.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from mockkube.client.remote import HTTP
from mockkube.machinery.registry import ResourceType
from mockkube.server import componentmain

USER_AGENT = "kube-scheduler/v1.36.0 (linux/amd64) kubernetes/mockkube"
FOLLOWED = (
    ("", "namespaces"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("", "nodes"),
    ("", "pods"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "devicetaintrules"),
    ("policy", "poddisruptionbudgets"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("storage.k8s.io", "storageclasses"),
)


class Host(componentmain.Host):
    """What the scheduler asks of its server, in a process of its own."""

    name = "scheduler"
    user_agent = USER_AGENT

    def __init__(self, args: argparse.Namespace, http_: HTTP) -> None:
        self.binding_timeout = args.binding_timeout
        self.filter_timeout = args.filter_timeout
        super().__init__(args, http_)

    def followed(self) -> list[ResourceType]:
        # PodGroups when served (GenericWorkload and scheduling.k8s.io/v1alpha2 on)
        rts = []
        for group, plural in [*FOLLOWED, ("scheduling.k8s.io", "podgroups")]:
            rt = next((r for r in self.registry.all() if r.group == group and r.plural == plural), None)
            if rt is not None:
                rts.append(rt)
        return rts

    async def start_all(self) -> list:
        from mockkube import scheduler

        return await scheduler.start(self)

    def explain(self, namespace: str, name: str) -> Any:
        from mockkube.scheduler.explain import explain

        sched = self.components[0] if self.components else None
        pod = sched.client.get(sched.pods_rt, namespace, name) if sched else None
        return explain(sched, pod) if pod is not None else None


def main(args: argparse.Namespace) -> int:
    return asyncio.run(componentmain.run(args, Host))
