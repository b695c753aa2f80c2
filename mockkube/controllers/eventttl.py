"""Events expire as kube-apiserver's ``--event-ttl`` makes them (default 1h): etcd holds each
Event under a lease of that length renewed by every write, so an Event nobody updates for
an hour is deleted (a DELETED watch event, like any delete). Without it a cluster that lives
for a day keeps every Event its pods ever caused (the soak benchmark saw them grow without
end). The time of an Event's last write is read from the cluster clock when this controller
sees the write (a server restarted on a kept database gives the stored Events a full TTL
from its start, as a lease would have been renewed on re-creation).
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

from mockkube.client.informer import YIELD_EVERY, Controller, Informer
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "event-ttl"
DEFAULT_TTL = 3600.0  # kube-apiserver's --event-ttl default
_DUE = "due"  # the work queue's one key: look at the oldest leases


class EventTTL(Controller):
    name = NAME

    def __init__(self, server: "Server", ttl: float) -> None:
        super().__init__()
        self.server = server
        self.ttl = ttl
        self.client = server.client("kube-apiserver")
        # core/v1 and events.k8s.io/v1 Events are one resource, stored once (docs/compatibility.md):
        # one informer sees both (two had every write leased twice and deleted twice)
        self.rt = self.client.rt("events", "")
        inf = Informer(server.store, self.rt)
        inf.add_handler(lambda typ, obj, prev: self._on_event(typ, obj))
        self.informers.append(inf)
        # one lease per write, in the order of the writes, so in the order they run out (the
        # TTL is one for all): (when it runs out, namespace, name, the resourceVersion it
        # renewed). A later write to the Event renews its lease: the older entry then fails the
        # delete's precondition. One tuple per write, where a map of leases and a timer per
        # Event (twice: one per API group) held ~1 KB per Event, five a pod.
        self.leases: deque[tuple[float, str, str, int]] = deque()

    def _on_event(self, typ: str, obj: dict) -> None:
        if typ == "DELETED":
            return  # its leases fail the delete's precondition when they run out
        md = obj["metadata"]
        at = self.server.clock() + self.ttl
        self.leases.append((at, meta.namespace_of(obj), md["name"], int(md.get("resourceVersion") or 0)))
        if len(self.leases) == 1:
            self.queue.add_after(_DUE, self.ttl + 0.01)

    def resync(self) -> None:
        """The clock moved: leases may have run out."""
        self.queue.add(_DUE)

    def reconcile(self, key: str) -> None:
        """Delete the Events whose lease ran out, oldest first (a clock moved back leaves the
        later ones until the first runs out: an Event outlives its TTL, never the reverse)."""
        now = self.server.clock()
        leases = self.leases
        # a slice at a time (the clock moved by an hour: thousands at once), as every controller
        # hands the loop back
        slice_end = time.monotonic() + YIELD_EVERY
        while leases and leases[0][0] <= now:
            if time.monotonic() > slice_end:
                self.queue.add(_DUE)  # again once this reconcile has handed the loop back
                return
            _, namespace, name, rv = leases.popleft()
            try:
                # the lease of this write ran out: a later write (another rv) renewed it
                self.client.delete(self.rt, namespace, name, {"preconditions": {"resourceVersion": str(rv)}})
            except errors.APIError as e:
                if e.code not in (404, 409):
                    leases.appendleft((now, namespace, name, rv))
                    raise
        if leases:
            self.queue.add_after(_DUE, leases[0][0] - now + 0.01)


async def start(server: "Server") -> list:
    ttl = getattr(server, "event_ttl", DEFAULT_TTL)
    if not ttl:
        return []
    c = EventTTL(server, ttl)
    await c.start()
    return [c]
