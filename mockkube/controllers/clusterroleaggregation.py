"""The clusterrole-aggregation controller: a ClusterRole with an ``aggregationRule`` holds the
rules of every other ClusterRole its selectors match (by name order, each rule once), kept
up to date as those change, as kube-controller-manager's ClusterRoleAggregationController."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors
from mockkube.rules.rbac import aggregated_rules

if TYPE_CHECKING:
    from mockkube.server.server import Server


class ClusterRoleAggregation(Controller):
    name = "clusterrole-aggregation-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("clusterrole-aggregation-controller")
        self.rt = self.client.rt("clusterroles", "rbac.authorization.k8s.io")
        self.inf = Informer(server.store, self.rt)
        self.inf.add_handler(lambda t, o, p: self._changed())
        self.informers.append(self.inf)

    def _changed(self) -> None:
        for role in self.inf.list():
            if role.get("aggregationRule"):
                self.queue.add(role["metadata"]["name"])

    def reconcile(self, key: Hashable) -> None:
        role = self.client.get(self.rt, "", str(key))
        if role is None or not role.get("aggregationRule"):
            return
        rules = aggregated_rules(role, self.inf.list())
        if rules == (role.get("rules") or []):
            return
        try:
            self.client.update(self.rt, dict(role, rules=rules))
        except errors.APIError as e:
            if e.code == 409:
                self.queue.add(key)
            elif e.code != 404:
                raise


async def start(server: "Server") -> list:
    c = ClusterRoleAggregation(server)
    await c.start()
    return [c]
