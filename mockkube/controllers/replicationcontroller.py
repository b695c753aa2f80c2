"""The replication manager: ReplicationControllers (core/v1) reconciled by the ReplicaSet
controller's logic, as upstream's pkg/controller/replication wraps pkg/controller/replicaset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockkube.controllers.replicaset import ReplicaSetController

if TYPE_CHECKING:
    from mockkube.server.server import Server


class ReplicationManager(ReplicaSetController):
    name = "replication-controller"
    kind, api_version, plural, group = "ReplicationController", "v1", "replicationcontrollers", ""


async def start(server: "Server") -> list:
    c = ReplicationManager(server)
    await c.start()
    return [c]
