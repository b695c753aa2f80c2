"""kube-apiserver's API Priority and Fairness configuration controllers, as far as objects go
(``k8s.io/apiserver/pkg/util/flowcontrol``): the bootstrap configuration ensurer puts back a
missing mandatory or suggested object and, while it carries
``apf.kubernetes.io/autoupdate-spec: "true"``, its spec; the configuration consumer keeps each
FlowSchema's ``Dangling`` condition (whether its priority level exists). Requests are never
queued or rejected by these objects (docs/compatibility.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta
from mockkube.machinery.meta import clone
from mockkube.rules import flowcontrol_bootstrap as boot

if TYPE_CHECKING:
    from mockkube.server.server import Server

GROUP = "flowcontrol.apiserver.k8s.io"
CONSUMER = "api-priority-and-fairness-config-consumer-v1"  # its field manager
PRODUCER = "api-priority-and-fairness-config-producer-v1"  # the bootstrap configuration ensurer's


def dangling_condition(fs: dict, levels: set[str]) -> dict:
    pl = ((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name", "")
    if pl in levels:
        return {
            "type": "Dangling",
            "status": "False",
            "reason": "Found",
            "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{pl}" and it exists',
        }
    return {
        "type": "Dangling",
        "status": "True",
        "reason": "NotFound",
        "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{pl}" but there is no '
        "such object",
    }


def dangling_update(fs: dict, levels: set[str], now: str) -> dict | None:
    """``fs`` with the Dangling condition the configuration consumer keeps, or None when it
    holds that already."""
    cond = dangling_condition(fs, levels)
    conds = list((fs.get("status") or {}).get("conditions") or [])
    old = next((c for c in conds if c.get("type") == "Dangling"), None)
    if old is not None and all(old.get(k) == cond[k] for k in ("status", "reason", "message")):
        return None
    cond["lastTransitionTime"] = now
    new = clone(fs)
    new["status"] = {"conditions": [c for c in conds if c.get("type") != "Dangling"] + [cond]}
    return new


def write_dangling(server: "Server") -> None:
    """The consumer's first pass over the FlowSchemas, made as it makes it but by the
    bootstrap, so that it is part of what a start replays (server/bootstraptemplate.py): the
    controller then finds every condition current (it was 8-15 ms of a start)."""
    client = server.client(CONSUMER)
    fs_rt = client.rt("flowschemas", GROUP)
    levels = {o["metadata"]["name"] for o in server.store.objects(client.rt("prioritylevelconfigurations", GROUP))}
    now = server.resources.now()
    for fs in server.store.objects(fs_rt):
        new = dangling_update(fs, levels, now)
        if new is None:
            continue
        try:
            client.update_status(fs_rt, new)
        except errors.APIError as e:
            if e.code not in (404, 409):  # another API server (PostgreSQL) wrote it first
                raise


class APFConfigController(Controller):
    name = "apf-configuration-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client(CONSUMER)
        self.ensurer = server.client(PRODUCER)
        self.fs_rt = self.client.rt("flowschemas", GROUP)
        self.pl_rt = self.client.rt("prioritylevelconfigurations", GROUP)
        self.bootstrap = {("flowschemas", o["metadata"]["name"]): o for o in boot.flow_schemas()} | {
            ("prioritylevelconfigurations", o["metadata"]["name"]): o for o in boot.priority_levels()
        }
        self.fss = Informer(server.store, self.fs_rt)
        self.pls = Informer(server.store, self.pl_rt)
        self.fss.add_handler(lambda t, o, p: self.queue.add(("flowschemas", o["metadata"]["name"])))
        self.pls.add_handler(self._on_level)
        self.informers += [self.fss, self.pls]

    def identity(self) -> dict | None:
        from mockkube.rules.identities import APISERVER

        return APISERVER  # the API server's own loopback client

    def _on_level(self, typ: str, obj: dict, prev: dict | None) -> None:
        self.queue.add(("prioritylevelconfigurations", obj["metadata"]["name"]))
        if typ != "MODIFIED":
            for fs in self.fss.list():
                self.queue.add(("flowschemas", fs["metadata"]["name"]))

    def reconcile(self, key: Hashable) -> None:
        plural, name = key  # type: ignore[misc]
        rt, inf = (self.fs_rt, self.fss) if plural == "flowschemas" else (self.pl_rt, self.pls)
        cur = inf.get("", name)
        want = self.bootstrap.get((plural, name))
        try:
            if want is not None:
                if cur is None:
                    self.ensurer.create(rt, clone(want))
                    return
                auto = ((cur["metadata"].get("annotations") or {}).get(boot.AUTO_UPDATE)) == "true"
                if auto and not cur["metadata"].get("deletionTimestamp") and cur.get("spec") != want["spec"]:
                    new = clone(cur)
                    new["spec"] = clone(want["spec"])
                    cur = self.ensurer.update(rt, new)
            if plural == "flowschemas" and cur is not None:
                self._dangling(cur)
        except errors.APIError as e:
            if e.code not in (404, 409, 422):
                raise

    def _dangling(self, fs: dict) -> None:
        new = dangling_update(fs, {p["metadata"]["name"] for p in self.pls.list()}, meta.rfc3339(self.server.clock()))
        if new is not None:
            self.client.update_status(self.fs_rt, new)


async def start(server: "Server") -> list:
    c = APFConfigController(server)
    await c.start()
    return [c]
