"""The disruption controller (kube-controller-manager ``pkg/controller/disruption``): keeps
each PodDisruptionBudget's status (expected, current and desired healthy pods, disruptions
allowed, the DisruptionAllowed condition) from the pods it selects, and forgets the
``disruptedPods`` entries of evicted pods once they are gone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import meta
from mockkube.rules import disruption

if TYPE_CHECKING:
    from mockkube.server.server import Server

# controller kinds whose scale sets the expected pod count (upstream's finders)
_SCALE_KINDS = {
    "ReplicaSet": ("replicasets", "apps"),
    "StatefulSet": ("statefulsets", "apps"),
    "ReplicationController": ("replicationcontrollers", ""),
    "Deployment": ("deployments", "apps"),
}


class DisruptionController(Controller):
    name = "disruption-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.clock = server.clock
        self.client = server.client("kube-controller-manager")
        self.pdb_rt = self.client.rt("poddisruptionbudgets", "policy")
        self.pod_rt = self.client.rt("pods")
        self.pdbs = Informer(server.store, self.pdb_rt)
        self.pods = Informer(server.store, self.pod_rt)
        self.pdbs.add_handler(
            lambda t, o, p: t != "DELETED" and self.queue.add((o["metadata"]["namespace"], o["metadata"]["name"]))
        )
        self.pods.add_handler(self._on_pod)
        self.informers += [self.pdbs, self.pods]

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        ns = obj["metadata"].get("namespace", "")
        for pdb in self.pdbs.list(ns):
            if disruption.selects(pdb, obj) or (prev is not None and disruption.selects(pdb, prev)):
                self.queue.add((ns, pdb["metadata"]["name"]))

    def _expected(self, pdb: dict, pods: list[dict]) -> int:
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is None and not str(spec.get("minAvailable", "")).endswith("%"):
            return len(pods)
        total, seen, loose = 0, set(), 0
        for p in pods:
            ref = next((r for r in p["metadata"].get("ownerReferences") or () if r.get("controller")), None)
            if ref is None or ref.get("kind") not in _SCALE_KINDS and ref.get("kind") != "DaemonSet":
                loose += 1
                continue
            if ref["uid"] in seen:
                continue
            seen.add(ref["uid"])
            if ref["kind"] == "DaemonSet":
                ds = (
                    self.client.get(self.client.rt("daemonsets", "apps"), p["metadata"]["namespace"], ref["name"])
                    if self._has("daemonsets", "apps")
                    else None
                )
                total += int(((ds or {}).get("status") or {}).get("desiredNumberScheduled", 1))
                continue
            plural, group = _SCALE_KINDS[ref["kind"]]
            owner = (
                self.client.get(self.client.rt(plural, group), p["metadata"]["namespace"], ref["name"])
                if self._has(plural, group)
                else None
            )
            total += int(((owner or {}).get("spec") or {}).get("replicas", 1))
        return total + loose

    def _has(self, plural: str, group: str) -> bool:
        try:
            self.client.rt(plural, group)
            return True
        except KeyError:
            return False

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        pdb = self.pdbs.get(ns, name)
        if pdb is None:
            return
        pods = [
            p
            for p in self.pods.list(ns)
            if disruption.selects(pdb, p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        status = disruption.compute_status(pdb, pods, self._expected(pdb, pods), meta.rfc3339(self.clock()))
        if status == pdb.get("status"):
            return
        new = dict(pdb)
        new["status"] = status
        self.client.update_status(self.pdb_rt, new)


async def start(server: "Server") -> list:
    c = DisruptionController(server)
    await c.start()
    return [c]
