"""The ResourceQuota controller (kube-controller-manager's pkg/controller/resourcequota):
keeps every quota's status.hard equal to spec.hard and status.used equal to what the
namespace's pods and ResourceClaims charge (mockkube.rules.quota), recomputed when a
quota, pod, claim or DeviceClass (its extendedResourceName decides which quota names a
claim charges) changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.rules import quota as q

if TYPE_CHECKING:
    from mockkube.server.server import Server


class ResourceQuotaController(Controller):
    name = "resourcequota-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        self.quotas_rt = self.client.rt("resourcequotas")
        self.pods_rt = self.client.rt("pods")
        self.claims_rt = self.client.rt("resourceclaims", "resource.k8s.io")
        self.classes_rt = self.client.rt("deviceclasses", "resource.k8s.io")
        self.quota_inf = Informer(server.store, self.quotas_rt)
        self.pod_inf = Informer(server.store, self.pods_rt)
        self.claim_inf = Informer(server.store, self.claims_rt)
        self.class_inf = Informer(server.store, self.classes_rt)
        self.quota_inf.add_handler(self._on_quota)
        self.pod_inf.add_handler(self._on_namespaced)
        self.claim_inf.add_handler(self._on_namespaced)
        self.class_inf.add_handler(self._on_class)
        self.informers += [self.class_inf, self.pod_inf, self.claim_inf, self.quota_inf]

    def _on_quota(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ != "DELETED":
            m = obj["metadata"]
            self.queue.add((m.get("namespace", ""), m["name"]))

    def _queue_namespace(self, ns: str) -> None:
        for quota in self.quota_inf.list(ns):
            self.queue.add((ns, quota["metadata"]["name"]))

    def _on_namespaced(self, typ: str, obj: dict, prev: dict | None) -> None:
        self._queue_namespace((obj.get("metadata") or {}).get("namespace", ""))

    def _on_class(self, typ: str, obj: dict, prev: dict | None) -> None:
        for quota in self.quota_inf.list(None):
            self.queue.add((quota["metadata"].get("namespace", ""), quota["metadata"]["name"]))

    def _owner(self, claim: dict) -> dict | None:
        meta = claim.get("metadata") or {}
        for o in meta.get("ownerReferences") or ():
            if o.get("controller") and o.get("kind") == "Pod" and o.get("apiVersion") == "v1":
                pod = self.pod_inf.get(meta.get("namespace", ""), o.get("name", ""))
                if pod is not None and pod["metadata"].get("uid") == o.get("uid"):
                    return pod
        return None

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        quota = self.quota_inf.get(ns, name)
        if quota is None:
            return
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        used = q.total_usage(
            hard,
            self.pod_inf.list(ns),
            self.claim_inf.list(ns),
            q.class_extended_names(self.class_inf.list(None)),
            self._owner,
        )
        status = {"hard": {k: q._q(v).canonical() for k, v in sorted(hard.items())}, "used": used}
        if quota.get("status") == status:
            return
        upd = dict(quota)
        upd["status"] = status
        self.client.update_status(self.quotas_rt, upd)


async def start(server: "Server") -> list:
    c = ResourceQuotaController(server)
    await c.start()
    return [c]
