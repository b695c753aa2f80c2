"""The resourcepoolstatusrequest controller (kube-controller-manager's, KEP-5677, runs only
with DRAResourcePoolStatus on): a ResourcePoolStatusRequest without status gets one, once,
computed from the ResourceSlices and ResourceClaims seen now
(resourcepoolstatus_util.pool_status). While some pool has fewer slices than it announces
the request is retried a few times (upstream's rate limiter: 5 ms doubling), then left
pending, as v1.36 does. Completed requests are deleted an hour after completion, pending
ones a day after creation, on the cluster clock (upstream checks every ten minutes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import resourcepoolstatus_util as util
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "resourcepoolstatusrequest-controller"
GATE = "DRAResourcePoolStatus"
GROUP = "resource.k8s.io"


class ResourcePoolStatusController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.req_rt = self.client.rt("resourcepoolstatusrequests", GROUP, "v1alpha3")
        self.req_inf = Informer(server.store, self.req_rt)
        self.req_inf.add_handler(self._on_request)
        self.slice_inf = Informer(server.store, self.client.rt("resourceslices", GROUP, "v1"))
        self.claim_inf = Informer(server.store, self.client.rt("resourceclaims", GROUP, "v1"))
        self.informers = [self.req_inf, self.slice_inf, self.claim_inf]
        self.retries: dict[str, int] = {}

    def _on_request(self, typ: str, obj: dict, prev: dict | None) -> None:
        name = meta.name_of(obj)
        if typ == "DELETED":
            self.retries.pop(name, None)
            return
        self.queue.add(name)

    def resync(self) -> None:
        """The clock moved: TTLs may have run out."""
        for req in self.req_inf.list():
            self.queue.add(meta.name_of(req))

    def reconcile(self, name: str) -> None:
        req = self.client.get(self.req_rt, "", name)
        if req is None:
            return
        now = self.server.clock()
        at = util.expires_at(req, meta.parse_time)
        if at is not None and now >= at:
            try:
                self.client.delete(self.req_rt, "", name, {"preconditions": {"uid": req["metadata"]["uid"]}})
            except errors.APIError as e:
                if e.code not in (404, 409):
                    raise
            return
        if at is not None:
            self.queue.add_after(name, at - now + 0.01)
        if req.get("status") is not None:
            self.retries.pop(name, None)
            return
        status = util.pool_status(req, self.slice_inf.list(), self.claim_inf.list(), meta.rfc3339(now))
        if util.has_incomplete(status):
            tries = self.retries.get(name, 0)
            if tries < util.MAX_RETRIES:
                self.retries[name] = tries + 1
                self.queue.add_after(name, 0.005 * 2**tries)
            else:
                self.retries.pop(name, None)  # dropped, as upstream: pending until it changes
            return
        self.retries.pop(name, None)
        req = clone(req)  # the client hands out the cache's object
        req["status"] = status
        try:
            self.client.update_status(self.req_rt, req)
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise
            if e.code == 409:
                self.queue.add(name)


async def start(server: "Server") -> list:
    gates = getattr(server, "feature_gates", None)
    if gates is None or not gates.enabled(GATE):
        return []
    c = ResourcePoolStatusController(server)
    await c.start()
    return [c]
