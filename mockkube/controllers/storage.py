"""Simulated persistent storage: the PV binder and a dynamic provisioner for every
StorageClass (kube-controller-manager's ``persistentvolume`` controller plus an external
provisioner), and the pvc/pv-protection finalizers.

A Pending claim binds to a volume pre-bound to it (``claimRef``), else under ``Immediate``
to an Available PersistentVolume that fits (class, access modes, capacity) or a volume
provisioned for it at once. Under ``WaitForFirstConsumer`` the scheduler's VolumeBinding
decides for the first pod using it: it pre-binds a volume, or sets the claim's
``volume.kubernetes.io/selected-node`` and the provisioner creates a volume with that
node's affinity (a pod given ``spec.nodeName`` directly counts as that choice too). A
released volume is deleted or kept per its reclaim policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors
from mockkube.machinery.quantity import parse_quantity
from mockkube.rules.volumes import PV_PROTECTION, PVC_PROTECTION

if TYPE_CHECKING:
    from mockkube.server.server import Server

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def claim_names(pod: dict) -> list[str]:
    return [
        v["persistentVolumeClaim"]["claimName"]
        for v in (pod.get("spec") or {}).get("volumes") or ()
        if isinstance(v, dict) and (v.get("persistentVolumeClaim") or {}).get("claimName")
    ]


def _size(q) -> int:
    try:
        return parse_quantity(q).value()
    except Exception:
        return 0


class StorageController(Controller):
    name = "persistentvolume-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        self.pvc_rt = self.client.rt("persistentvolumeclaims")
        self.pv_rt = self.client.rt("persistentvolumes")
        self.sc_rt = self.client.rt("storageclasses", "storage.k8s.io")
        self.pod_rt = self.client.rt("pods")
        self.pvcs = Informer(server.store, self.pvc_rt)
        self.pvs = Informer(server.store, self.pv_rt)
        self.pods = Informer(server.store, self.pod_rt)
        self.pvcs.add_handler(self._on_claim)
        self.pvs.add_handler(self._on_pv)
        self.pods.add_handler(self._on_pod)
        self.informers += [self.pvcs, self.pvs, self.pods]

    def _on_claim(self, typ: str, obj: dict, prev: dict | None) -> None:
        self.queue.add(("pvc", obj["metadata"]["namespace"], obj["metadata"]["name"]))
        volume = (obj.get("spec") or {}).get("volumeName")
        if typ == "DELETED" and volume:
            self.queue.add(("pv", "", volume))

    def _on_pv(self, typ: str, obj: dict, prev: dict | None) -> None:
        self.queue.add(("pv", "", obj["metadata"]["name"]))
        if typ == "ADDED" or (obj.get("status") or {}).get("phase") == "Available":
            for pvc in self.pvcs.list():  # a new volume may fit a pending claim
                if (pvc.get("status") or {}).get("phase") == "Pending":
                    self.queue.add(("pvc", pvc["metadata"]["namespace"], pvc["metadata"]["name"]))

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        for name in claim_names(obj):
            self.queue.add(("pvc", obj["metadata"]["namespace"], name))

    # -- claims ---------------------------------------------------------------------------------
    def _in_use(self, ns: str, name: str) -> bool:
        return any(
            name in claim_names(p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            for p in self.pods.list(ns)
        )

    def reconcile(self, key: Hashable) -> None:
        kind, ns, name = key  # type: ignore[misc]
        if kind == "pv":
            self._sync_volume(name)
        else:
            self._sync_claim(ns, name)

    def _sync_claim(self, ns: str, name: str) -> None:
        pvc = self.pvcs.get(ns, name)
        if pvc is None:
            return
        m = pvc["metadata"]
        if m.get("deletionTimestamp"):
            if PVC_PROTECTION in (m.get("finalizers") or ()) and not self._in_use(ns, name):
                new = dict(pvc, metadata=dict(m, finalizers=[f for f in m["finalizers"] if f != PVC_PROTECTION]))
                self.client.update(self.pvc_rt, new)
            return
        spec = pvc.get("spec") or {}
        if (pvc.get("status") or {}).get("phase") == "Bound":
            return
        if spec.get("volumeName"):
            pv = self.pvs.get("", spec["volumeName"])
            if pv is not None:
                self._bind(pvc, pv)
            return
        pv = self._prebound_volume(pvc)  # pre-bound by a user, or by the scheduler's VolumeBinding
        if pv is not None:
            self._bind(pvc, pv)
            return
        cls_name = spec.get("storageClassName")
        sc = self.client.get(self.sc_rt, "", cls_name) if cls_name else None
        node = None
        if sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer":
            # the scheduler's VolumeBinding picks a volume (claimRef) or a node to provision
            # on (the selected-node annotation) for the first pod using the claim
            node = (m.get("annotations") or {}).get(SELECTED_NODE)
            if not node:
                node = next(
                    (
                        (p.get("spec") or {}).get("nodeName")
                        for p in self.pods.list(ns)
                        if name in claim_names(p) and (p.get("spec") or {}).get("nodeName")
                    ),
                    None,
                )  # a pod placed without the scheduler (spec.nodeName)
            if not node:
                return
        else:
            pv = self._matching_volume(pvc)
            if pv is not None:
                self._bind(pvc, pv)
                return
        if sc is None or sc.get("provisioner") == "kubernetes.io/no-provisioner":
            return  # static volumes only: the claim waits for one
        self._bind(pvc, self._provision(pvc, sc, node))

    def _prebound_volume(self, pvc: dict) -> dict | None:
        m = pvc["metadata"]
        for pv in self.pvs.list():
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            if (
                ref.get("namespace") == m["namespace"]
                and ref.get("name") == m["name"]
                and (not ref.get("uid") or ref.get("uid") == m.get("uid"))
                and not (pv.get("metadata") or {}).get("deletionTimestamp")
            ):
                return pv
        return None

    def _matching_volume(self, pvc: dict) -> dict | None:
        spec = pvc.get("spec") or {}
        want = _size(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        modes = set(spec.get("accessModes") or ())
        cls = spec.get("storageClassName") or ""
        best = None
        for pv in self.pvs.list():
            ps = pv.get("spec") or {}
            if (pv.get("status") or {}).get("phase") != "Available" or ps.get("claimRef"):
                continue
            if (ps.get("storageClassName") or "") != cls or not modes <= set(ps.get("accessModes") or ()):
                continue
            size = _size((ps.get("capacity") or {}).get("storage", 0))
            if size >= want and (best is None or size < best[0]):
                best = (size, pv)
        return best[1] if best else None

    def _provision(self, pvc: dict, sc: dict, node: str | None) -> dict:
        m, spec = pvc["metadata"], pvc.get("spec") or {}
        name = f"pvc-{m['uid']}"
        pv_spec: dict = {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage")},
            "accessModes": list(spec.get("accessModes") or ()),
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy", "Delete"),
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": spec.get("volumeMode", "Filesystem"),
            "hostPath": {"path": f"/var/lib/mockkube/volumes/{name}", "type": "DirectoryOrCreate"},
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": m["namespace"],
                "name": m["name"],
                "uid": m["uid"],
                "apiVersion": "v1",
                "resourceVersion": m.get("resourceVersion"),
            },
        }
        if sc.get("mountOptions"):
            pv_spec["mountOptions"] = sc["mountOptions"]
        if node:
            pv_spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
                    ]
                }
            }
        existing = self.client.get(self.pv_rt, "", name)
        if existing is not None:
            return existing
        pv = self.client.create(
            self.pv_rt,
            {
                "metadata": {
                    "name": name,
                    "annotations": {"pv.kubernetes.io/provisioned-by": sc.get("provisioner", "")},
                },
                "spec": pv_spec,
            },
        )
        return pv

    def _bind(self, pvc: dict, pv: dict) -> None:
        m = pvc["metadata"]
        ps = dict(pv.get("spec") or {})
        if not ps.get("claimRef"):
            ps["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "namespace": m["namespace"],
                "name": m["name"],
                "uid": m["uid"],
                "apiVersion": "v1",
                "resourceVersion": m.get("resourceVersion"),
            }
            pv = self.client.update(self.pv_rt, dict(pv, spec=ps))
        if (pv.get("status") or {}).get("phase") != "Bound":
            pv = self.client.update_status(self.pv_rt, dict(pv, status={"phase": "Bound"}))
        ann = dict(m.get("annotations") or {})
        ann["pv.kubernetes.io/bind-completed"] = "yes"
        ann["pv.kubernetes.io/bound-by-controller"] = "yes"
        prov = (pv["metadata"].get("annotations") or {}).get("pv.kubernetes.io/provisioned-by")
        if prov:
            ann["volume.beta.kubernetes.io/storage-provisioner"] = prov
            ann["volume.kubernetes.io/storage-provisioner"] = prov
        spec = dict(pvc.get("spec") or {}, volumeName=pv["metadata"]["name"])
        if spec.get("storageClassName") is None and ps.get("storageClassName"):
            spec["storageClassName"] = ps["storageClassName"]
        cur = self.client.update(self.pvc_rt, dict(pvc, metadata=dict(m, annotations=ann), spec=spec))
        self.client.update_status(
            self.pvc_rt,
            dict(
                cur,
                status={
                    "phase": "Bound",
                    "accessModes": list(ps.get("accessModes") or ()),
                    "capacity": dict(ps.get("capacity") or {}),
                },
            ),
        )

    # -- volumes --------------------------------------------------------------------------------
    def _sync_volume(self, name: str) -> None:
        pv = self.pvs.get("", name)
        if pv is None:
            return
        m, spec = pv["metadata"], pv.get("spec") or {}
        phase = (pv.get("status") or {}).get("phase")
        ref = spec.get("claimRef")
        if m.get("deletionTimestamp"):
            if PV_PROTECTION in (m.get("finalizers") or ()) and phase != "Bound":
                self.client.update(
                    self.pv_rt,
                    dict(pv, metadata=dict(m, finalizers=[f for f in m["finalizers"] if f != PV_PROTECTION])),
                )
            return
        if ref is None:
            if phase != "Available":
                self.client.update_status(self.pv_rt, dict(pv, status={"phase": "Available"}))
            return
        claim = self.pvcs.get(ref.get("namespace", ""), ref.get("name", ""))
        if claim is not None and (not ref.get("uid") or claim["metadata"]["uid"] == ref["uid"]):
            return
        if phase == "Bound" or phase == "Pending":
            if phase == "Pending" and claim is None and not ref.get("uid"):
                return  # pre-bound to a claim that does not exist yet
            pv = self.client.update_status(self.pv_rt, dict(pv, status={"phase": "Released"}))
        if spec.get("persistentVolumeReclaimPolicy") == "Delete":
            try:
                self.client.delete(self.pv_rt, "", name)
            except errors.APIError as e:
                if e.code != 404:
                    raise


async def start(server: "Server") -> list:
    c = StorageController(server)
    await c.start()
    return [c]
