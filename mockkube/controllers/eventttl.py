"""Events expire as kube-apiserver's ``--event-ttl`` makes them (default 1h): etcd holds each
Event under a lease of that length renewed by every write, so an Event nobody updates for
an hour is deleted (a DELETED watch event, like any delete). Without it a cluster that lives
for a day keeps every Event its pods ever caused (the soak benchmark saw them grow without
end). The time of an Event's last write is read from the cluster clock when this controller
sees the write (a server restarted on a kept database gives the stored Events a full TTL
from its start, as a lease would have been renewed on re-creation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "event-ttl"
DEFAULT_TTL = 3600.0  # kube-apiserver's --event-ttl default


class EventTTL(Controller):
    name = NAME

    def __init__(self, server: "Server", ttl: float) -> None:
        super().__init__()
        self.server = server
        self.ttl = ttl
        self.client = server.client("kube-apiserver")
        # core/v1 and events.k8s.io/v1 Events (stored apart here, docs/compatibility.md)
        self.rts = {g: self.client.rt("events", g) for g in ("", "events.k8s.io")}
        for g, rt in self.rts.items():
            inf = Informer(server.store, rt)
            inf.add_handler(lambda typ, obj, prev, g=g: self._on_event(g, typ, obj))
            self.informers.append(inf)
        # (group, namespace, name) -> (when its lease runs out, the resourceVersion it renewed)
        self.expires: dict[tuple[str, str, str], tuple[float, str]] = {}

    def _on_event(self, group: str, typ: str, obj: dict) -> None:
        key = (group, meta.namespace_of(obj), meta.name_of(obj))
        if typ == "DELETED":
            self.expires.pop(key, None)
            return
        self.expires[key] = (self.server.clock() + self.ttl, obj["metadata"].get("resourceVersion", ""))
        self.queue.add_after(key, self.ttl + 0.01)

    def resync(self) -> None:
        """The clock moved: leases may have run out."""
        for key in list(self.expires):
            self.queue.add(key)

    def reconcile(self, key: tuple[str, str, str]) -> None:
        due = self.expires.get(key)
        if due is None:
            return
        at, rv = due
        now = self.server.clock()
        if now < at:
            self.queue.add_after(key, at - now + 0.01)
            return
        try:
            # the lease of this write ran out: a later write (another rv) renewed it
            self.client.delete(self.rts[key[0]], key[1], key[2], {"preconditions": {"resourceVersion": rv}})
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise


async def start(server: "Server") -> list:
    ttl = getattr(server, "event_ttl", DEFAULT_TTL)
    if not ttl:
        return []
    c = EventTTL(server, ttl)
    await c.start()
    return [c]
