"""The serviceaccounts controller: every active namespace has a ServiceAccount ``default``.

As kube-controller-manager's ``pkg/controller/serviceaccount``: on a namespace that is
added or changes (and, at start, every existing one) and on the deletion of a
``default`` ServiceAccount, create it again if the namespace is Active. Terminating
namespaces are left alone (their content is being removed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.server.server import Server

DEFAULT = "default"


class ServiceAccountsController(Controller):
    name = "serviceaccount-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        self.ns_rt = self.client.rt("namespaces")
        self.sa_rt = self.client.rt("serviceaccounts")
        ns_inf = Informer(server.store, self.ns_rt)
        ns_inf.add_handler(self._on_namespace)
        sa_inf = Informer(server.store, self.sa_rt)
        sa_inf.add_handler(self._on_serviceaccount)
        self.informers += [ns_inf, sa_inf]

    def _on_namespace(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ != "DELETED":
            self.queue.add(obj["metadata"]["name"])

    def _on_serviceaccount(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED" and obj["metadata"]["name"] == DEFAULT:
            self.queue.add(obj["metadata"].get("namespace", ""))

    def reconcile(self, key: Hashable) -> None:
        ns = self.client.get(self.ns_rt, "", str(key))
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        if (ns.get("status") or {}).get("phase", "Active") != "Active":
            return
        if self.client.get(self.sa_rt, str(key), DEFAULT) is not None:
            return
        try:
            self.client.create(
                self.sa_rt,
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": str(key)}},
            )
        except errors.APIError as e:
            if e.code not in (403, 404, 409):  # terminating, gone, or already there
                raise


async def start(server: "Server") -> list:
    c = ServiceAccountsController(server)
    await c.start()
    return [c]
