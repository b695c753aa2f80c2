"""The PodGroup protection controller (upstream pkg/controller/podgroupprotection, v1.36,
GenericWorkload): a PodGroup that active pods reference (``spec.schedulingGroup
.podGroupName``, not Succeeded or Failed) carries the ``scheduling.k8s.io/podgroup-protection``
finalizer; once it is being deleted and no active pod references it, the finalizer goes and
the PodGroup with it. A claim reserved for the group (KEP-5729) therefore outlives its pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "podgroup-protection-controller"
FINALIZER = "scheduling.k8s.io/podgroup-protection"


def group_of(pod: dict) -> str:
    return (((pod.get("spec") or {}).get("schedulingGroup")) or {}).get("podGroupName") or ""


def is_terminated(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class PodGroupProtectionController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        self.pods_rt = self.client.rt("pods")
        self.groups_rt = self.client.rt("podgroups", "scheduling.k8s.io")
        self.group_inf = Informer(server.store, self.groups_rt)
        self.pod_inf = Informer(server.store, self.pods_rt)
        self.group_inf.add_handler(self._on_group)
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.group_inf, self.pod_inf]
        self._members: dict[tuple[str, str], set[str]] = {}  # (ns, group) -> active pods' names

    def _on_group(self, typ: str, pg: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            return
        m = pg.get("metadata") or {}
        has = FINALIZER in (m.get("finalizers") or ())
        if (not has and not m.get("deletionTimestamp")) or (has and m.get("deletionTimestamp")):
            self.queue.add((m.get("namespace", ""), m.get("name", "")))

    def _on_pod(self, typ: str, pod: dict, prev: dict | None) -> None:
        names = {group_of(pod), group_of(prev or {})} - {""}
        if not names:
            return
        ns, name = meta.namespace_of(pod), meta.name_of(pod)
        for g in names:
            members = self._members.setdefault((ns, g), set())
            if typ == "DELETED" or is_terminated(pod) or group_of(pod) != g:
                members.discard(name)
            else:
                members.add(name)
            if not members:
                self._members.pop((ns, g), None)
            self.queue.add((ns, g))

    def _in_use(self, key: tuple[str, str]) -> bool:
        return bool(self._members.get(key))

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        pg = self.group_inf.get(ns, name)
        if pg is None:
            return
        m = pg["metadata"]
        finalizers = list(m.get("finalizers") or ())
        if FINALIZER in finalizers and m.get("deletionTimestamp") and not self._in_use((ns, name)):
            finalizers.remove(FINALIZER)
        elif FINALIZER not in finalizers and not m.get("deletionTimestamp") and self._in_use((ns, name)):
            finalizers.append(FINALIZER)
        else:
            return
        upd = meta.clone(pg)
        upd["metadata"]["finalizers"] = finalizers
        try:
            self.client.update(self.groups_rt, upd)
        except errors.APIError as e:
            if e.code == 409:
                self.queue.add(key)  # read again: a newer PodGroup decides
            elif e.code != 404:
                raise


async def start(server: "Server") -> list:
    gates = getattr(server, "feature_gates", None)
    if gates is None or not gates.enabled("GenericWorkload"):
        return []
    ctrl = PodGroupProtectionController(server)
    await ctrl.start()
    return [ctrl]
