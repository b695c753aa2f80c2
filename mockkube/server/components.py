"""The in-process actors a cluster runs beside the API (controllers, scheduler, kubelets,
drivers). Each is a client of the store (principle 2 of DESIGN.md).

Every module in ``COMPONENTS`` exposes ``async def start(server) -> list`` returning
started components, each with ``async stop()``. They start in this order and stop in
reverse.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockkube.server.server import Server

COMPONENTS: list[str] = [
    "mockkube.controllers.apfconfig",
    "mockkube.controllers.serviceaccount",
    "mockkube.controllers.tokens",
    "mockkube.controllers.clusterroleaggregation",
    "mockkube.controllers.namespace",
    "mockkube.controllers.garbagecollector",
    "mockkube.controllers.resourceclaim",
    "mockkube.controllers.podgroupprotection",  # only with GenericWorkload on
    "mockkube.controllers.resourcequota",
    "mockkube.controllers.replicaset",
    "mockkube.controllers.replicationcontroller",
    "mockkube.controllers.deployment",
    "mockkube.controllers.daemonset",
    "mockkube.controllers.statefulset",
    "mockkube.controllers.job",
    "mockkube.controllers.ttlafterfinished",
    "mockkube.controllers.eventttl",
    "mockkube.controllers.cronjob",
    "mockkube.controllers.devicetaint",
    "mockkube.controllers.resourcepoolstatus",
    "mockkube.controllers.disruption",
    "mockkube.controllers.podautoscaler",
    "mockkube.controllers.storage",
    "mockkube.controllers.endpoints",
    "mockkube.controllers.servicecidrs",
    "mockkube.controllers.rootcacert",
    "mockkube.controllers.csrsigning",
    "mockkube.scheduler",
    "mockkube.kubelet",
]


# kube-apiserver's own loops (APF's configuration, the Events' TTL as etcd's lease): never in
# the controller-manager
API_SERVER_OWN = ("mockkube.controllers.apfconfig", "mockkube.controllers.eventttl")
# kube-controller-manager's controllers: `mockkube controller-manager` runs these
CONTROLLER_MANAGER: list[str] = [
    n for n in COMPONENTS if n.startswith("mockkube.controllers.") and n not in API_SERVER_OWN
]


async def start_all(server: "Server") -> list:
    started: list = []
    where = getattr(server, "controllers", "server")
    for name in COMPONENTS:
        if name in CONTROLLER_MANAGER and where != "server":
            # `mockkube serve --controllers process|none`: a process of their own, or elsewhere
            if where == "process" and name == CONTROLLER_MANAGER[0]:
                mod = importlib.import_module("mockkube.server.controllermanagerprocess")
                started.extend(await mod.start(server))
            continue
        if name == "mockkube.kubelet" and (
            getattr(server, "node_shards", 0) or not getattr(server, "run_kubelets", True)
        ):
            # `mockkube serve --node-shards M`: the kubelets in M processes (`--kubelets none`:
            # run elsewhere), the node lifecycle controller (which the node simulation carries) here
            mod = importlib.import_module("mockkube.server.kubeletprocess")
            started.extend(await mod.start(server))
            continue
        if name == "mockkube.scheduler" and not getattr(server, "run_scheduler", True):
            continue  # `mockkube serve --scheduler none`: schedulers run elsewhere, leader-elected
        if name == "mockkube.scheduler" and getattr(server, "scheduler_process", False):
            name = "mockkube.server.schedulerprocess"  # `mockkube serve`: a process of its own
        mod = importlib.import_module(name)
        started.extend(await mod.start(server))
    return started
