"""kube-controller-manager's servicecidrs controller (``pkg/controller/servicecidrs``): every
ServiceCIDR carries the ``networking.k8s.io/service-cidr-finalizer`` and a ``Ready``
condition; a ServiceCIDR being deleted keeps its finalizer (``Ready=False``, reason
``Terminating``) while an IPAddress in its ranges is covered by no other ServiceCIDR.
Upstream waits 10 s after the deletion before releasing it; here it is released at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta
from mockkube.machinery.meta import clone
from mockkube.rules import ipallocator as ipa

if TYPE_CHECKING:
    from mockkube.server.server import Server

FINALIZER = "networking.k8s.io/service-cidr-finalizer"
GROUP = "networking.k8s.io"


class ServiceCIDRsController(Controller):
    name = "service-cidrs-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("service-cidrs-controller")
        self.cidr_rt = self.client.rt("servicecidrs", GROUP)
        self.ip_rt = self.client.rt("ipaddresses", GROUP)
        self.cidrs = Informer(server.store, self.cidr_rt)
        self.ips = Informer(server.store, self.ip_rt)
        self.cidrs.add_handler(lambda t, o, p: self._all())
        self.ips.add_handler(lambda t, o, p: t == "DELETED" and self._all())
        self.informers += [self.cidrs, self.ips]

    def _all(self) -> None:
        for c in self.cidrs.list():
            self.queue.add(c["metadata"]["name"])

    def _can_delete(self, cidr: dict) -> bool:
        mine = ipa.active_ranges([{"spec": cidr.get("spec")}], 4) + ipa.active_ranges([{"spec": cidr.get("spec")}], 6)
        others = [c for c in self.cidrs.list() if c["metadata"]["name"] != cidr["metadata"]["name"]]
        other_ranges = ipa.active_ranges(others, 4) + ipa.active_ranges(others, 6)
        for ip in self.ips.list():
            name = ip["metadata"]["name"]
            if ipa.in_ranges(name, mine) and not ipa.in_ranges(name, other_ranges):
                return False
        return True

    def _ready(self, cidr: dict, status: str, reason: str, message: str) -> None:
        conds = (cidr.get("status") or {}).get("conditions") or []
        cur = next((c for c in conds if c.get("type") == "Ready"), None)
        if cur is not None and cur.get("status") == status and (status == "True" or cur.get("reason") == reason):
            return  # a Ready=True already there (the default ServiceCIDR's own message) stays
        new = clone(cidr)
        cond = {
            "type": "Ready",
            "status": status,
            "lastTransitionTime": meta.rfc3339(self.server.clock()),
            "reason": reason,
            "message": message,
        }
        new["status"] = {"conditions": [c for c in conds if c.get("type") != "Ready"] + [cond]}
        self.client.update_status(self.cidr_rt, new)

    def reconcile(self, key: Hashable) -> None:
        cidr = self.cidrs.get("", str(key))
        if cidr is None:
            return
        finalizers = list(cidr["metadata"].get("finalizers") or [])
        try:
            if cidr["metadata"].get("deletionTimestamp"):
                if not self._can_delete(cidr):
                    self._ready(
                        cidr,
                        "False",
                        "Terminating",
                        "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new "
                        "ServiceCIDR",
                    )
                elif FINALIZER in finalizers:
                    new = clone(cidr)
                    new["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
                    self.client.update(self.cidr_rt, new)
                return
            if FINALIZER not in finalizers:
                new = clone(cidr)
                new["metadata"]["finalizers"] = finalizers + [FINALIZER]
                cidr = self.client.update(self.cidr_rt, new)
            self._ready(cidr, "True", "", "Kubernetes Service CIDR is ready")
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise


async def start(server: "Server") -> list:
    c = ServiceCIDRsController(server)
    await c.start()
    return [c]
