"""The node lifecycle controller (kube-controller-manager's, reduced to what clients
see): a node whose Lease is not renewed within the grace period gets Ready=Unknown and
the ``node.kubernetes.io/unreachable`` taints; a node reporting Ready=False gets the
``not-ready`` taints; both are removed once the node is Ready again. A cordoned node
(spec.unschedulable) gets ``node.kubernetes.io/unschedulable:NoSchedule`` (TaintNodesByCondition)."""

from __future__ import annotations

from typing import Callable

from mockkube.client.client import Client, clone
from mockkube.client.informer import Controller, Informer
from mockkube.machinery import meta

GRACE_PERIOD = 50.0  # --node-monitor-grace-period (v1.32+ default)
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def _ready(node: dict) -> str:
    for c in (node.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c.get("status", "Unknown")
    return "Unknown"


def wanted_taints(ready: str, unschedulable: bool = False) -> set[tuple[str, str]]:
    """(key, effect) of the taints this controller keeps on a node."""
    keys = {"True": set(), "False": {NOT_READY}, "Unknown": {UNREACHABLE}}.get(ready, {UNREACHABLE})
    out = {(k, e) for k in keys for e in ("NoSchedule", "NoExecute")}
    if unschedulable:
        out.add((UNSCHEDULABLE, "NoSchedule"))
    return out


def unknown_conditions(conds: list[dict], now: float) -> list[dict]:
    ts = meta.rfc3339(now)
    out = []
    for c in conds:
        c = dict(c)
        if c.get("status") != "Unknown":
            c.update(
                status="Unknown",
                reason="NodeStatusUnknown",
                message="Kubelet stopped posting node status.",
                lastTransitionTime=ts,
            )
        out.append(c)
    return out


class NodeLifecycleController(Controller):
    name = "node-lifecycle"

    def __init__(self, client: Client, clock: Callable[[], float], grace: float = GRACE_PERIOD) -> None:
        super().__init__()
        self.client = client
        self.clock = clock
        self.grace = grace
        self.nodes_rt = client.rt("nodes")
        self.leases_rt = client.rt("leases", "coordination.k8s.io")
        n = Informer(client.store, self.nodes_rt)
        n.add_handler(lambda t, o, p: t != "DELETED" and self.queue.add(o["metadata"]["name"]))
        le = Informer(client.store, self.leases_rt)
        le.add_handler(
            lambda t, o, p: (
                o["metadata"].get("namespace") == "kube-node-lease" and self.queue.add(o["metadata"]["name"])
            )
        )
        self.informers += [n, le]

    def resync(self) -> None:
        for n in self.client.list(self.nodes_rt):
            self.queue.add(n["metadata"]["name"])

    def reconcile(self, name: str) -> None:
        node = self.client.get(self.nodes_rt, "", name)
        if node is None:
            return
        now = self.clock()
        lease = self.client.get(self.leases_rt, "kube-node-lease", name)
        renew = None
        if lease is not None and (lease.get("spec") or {}).get("renewTime"):
            renew = meta.parse_time(lease["spec"]["renewTime"])
        if renew is None:
            renew = meta.parse_time(node["metadata"]["creationTimestamp"])
        deadline = renew + self.grace
        ready = _ready(node)
        if now >= deadline and ready != "Unknown":
            new = clone(node)
            new["status"]["conditions"] = unknown_conditions(node["status"].get("conditions") or [], now)
            node = self.client.update_status(self.nodes_rt, new)
            ready = "Unknown"
        elif now < deadline:
            self.queue.add_after(name, deadline - now)
        self._taints(node, wanted_taints(ready, bool((node.get("spec") or {}).get("unschedulable"))), now)

    def _taints(self, node: dict, target: set[tuple[str, str]], now: float) -> None:
        managed = {UNREACHABLE, NOT_READY, UNSCHEDULABLE}
        taints = list((node.get("spec") or {}).get("taints") or [])
        have = {(t.get("key"), t.get("effect")) for t in taints if t.get("key") in managed}
        if have == target:
            return
        keep = [t for t in taints if t.get("key") not in managed or (t.get("key"), t.get("effect")) in target]
        for k, e in sorted(target - have):
            t = {"key": k, "effect": e}
            if e == "NoExecute":
                t["timeAdded"] = meta.rfc3339(now)
            keep.append(t)
        new = clone(node)
        new.setdefault("spec", {})["taints"] = keep
        if not keep:
            new["spec"].pop("taints")
        self.client.update(self.nodes_rt, new)
