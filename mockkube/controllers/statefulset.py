"""The StatefulSet controller (upstream pkg/controller/statefulset): pods with stable names
``<set>-<ordinal>`` and hostnames, PersistentVolumeClaims from ``volumeClaimTemplates``
(kept or deleted by ``persistentVolumeClaimRetentionPolicy``), OrderedReady and Parallel
pod management, RollingUpdate with ``partition`` and OnDelete, ControllerRevisions and
the status ``kubectl rollout status sts`` reads.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import daemonset_util as revs
from mockkube.controllers.replicaset import is_pod_available, is_pod_ready
from mockkube.machinery import errors, meta
from mockkube.machinery.selectors import label_selector_from_object

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.statefulset")

NAME = "statefulset-controller"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def ordinal_of(sts: dict, pod: dict) -> int | None:
    """The ordinal in ``<set>-<ordinal>``, or None for a pod not named by this set."""
    prefix = sts["metadata"]["name"] + "-"
    name = pod["metadata"]["name"]
    if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
        return None
    return int(name[len(prefix) :])


def _spec(sts: dict) -> dict:
    return sts.get("spec") or {}


def replicas(sts: dict) -> int:
    v = _spec(sts).get("replicas")
    return 1 if v is None else int(v)


def start_ordinal(sts: dict) -> int:
    return int((_spec(sts).get("ordinals") or {}).get("start") or 0)


def claim_name(template: dict, sts: dict, ordinal: int) -> str:
    return f"{template['metadata']['name']}-{sts['metadata']['name']}-{ordinal}"


def new_pod(sts: dict, ordinal: int, hash_: str) -> dict:
    """newVersionedStatefulSetPod: the template named and labelled for its ordinal, with
    its claims mounted in place of the template's volumes of the same name."""
    tpl = _spec(sts).get("template") or {}
    tm = tpl.get("metadata") or {}
    name = f"{sts['metadata']['name']}-{ordinal}"
    labels = dict(tm.get("labels") or {})
    labels.update({POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), revs.REVISION_HASH: hash_})
    spec = clone(tpl.get("spec") or {})
    spec["hostname"] = name
    if _spec(sts).get("serviceName"):
        spec["subdomain"] = _spec(sts)["serviceName"]
    volumes = [
        v
        for v in spec.get("volumes") or ()
        if v.get("name") not in {t["metadata"]["name"] for t in _spec(sts).get("volumeClaimTemplates") or ()}
    ]
    for t in _spec(sts).get("volumeClaimTemplates") or ():
        volumes.append(
            {"name": t["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim_name(t, sts, ordinal)}}
        )
    if volumes:
        spec["volumes"] = volumes
    m: dict = {
        "name": name,
        "namespace": sts["metadata"].get("namespace", ""),
        "labels": labels,
        "ownerReferences": [cref.new_controller_ref(sts, "apps/v1", "StatefulSet")],
    }
    for k in ("annotations", "finalizers"):
        if tm.get(k):
            m[k] = clone(tm[k])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec}


def new_claim(sts: dict, template: dict, ordinal: int) -> dict:
    """A claim from a volumeClaimTemplate, labelled with the set's selector labels and owned
    by the set when the retention policy deletes claims with it."""
    sel = (_spec(sts).get("selector") or {}).get("matchLabels") or {}
    tm = template.get("metadata") or {}
    labels = dict(tm.get("labels") or {})
    labels.update(sel)
    m: dict = {
        "name": claim_name(template, sts, ordinal),
        "namespace": sts["metadata"].get("namespace", ""),
        "labels": labels,
    }
    if tm.get("annotations"):
        m["annotations"] = clone(tm["annotations"])
    if (_spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted") == "Delete":
        ref = cref.new_controller_ref(sts, "apps/v1", "StatefulSet")
        ref.pop("controller")
        m["ownerReferences"] = [ref]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": m,
        "spec": clone(template.get("spec") or {}),
    }


def _running_ready(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


class StatefulSetController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.sts_rt = self.client.rt("statefulsets", "apps")
        self.pod_rt = self.client.rt("pods")
        self.pvc_rt = self.client.rt("persistentvolumeclaims")
        self.rev_rt = self.client.rt("controllerrevisions", "apps")
        self.sts_inf = Informer(server.store, self.sts_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.sts_inf.add_handler(lambda t, o, p: self.queue.add((meta.namespace_of(o), meta.name_of(o))))
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.sts_inf, self.pod_inf]

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        ref = cref.controller_of(obj)
        if ref is not None and ref.get("kind") == "StatefulSet":
            self.queue.add((meta.namespace_of(obj), ref["name"]))

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        sts = self.client.get(self.sts_rt, ns, name)
        if sts is None:
            return
        try:
            label_selector_from_object(_spec(sts).get("selector"))
        except errors.APIError:
            return
        uid = sts["metadata"]["uid"]
        pods = {
            ordinal_of(sts, p): p
            for p in self.client.list(self.pod_rt, ns)
            if (cref.controller_of(p) or {}).get("uid") == uid and ordinal_of(sts, p) is not None
        }
        update_hash = self._revision(sts)
        status = clone(sts.get("status") or {})
        current_hash = status.get("currentRevision") or update_hash
        now = self.server.clock()
        if not cref.is_terminating(sts):
            self._sync(sts, pods, current_hash, update_hash, now)
            pods = {
                ordinal_of(sts, p): p
                for p in self.client.list(self.pod_rt, ns)
                if (cref.controller_of(p) or {}).get("uid") == uid and ordinal_of(sts, p) is not None
            }
        self._status(sts, status, pods, current_hash, update_hash, now)

    def _revision(self, sts: dict) -> str:
        """The update revision's hash, creating its ControllerRevision if new."""
        ns, uid = meta.namespace_of(sts), sts["metadata"]["uid"]
        existing = [r for r in self.client.list(self.rev_rt, ns) if (cref.controller_of(r) or {}).get("uid") == uid]
        for r in existing:
            if revs.same_template(r, sts):
                return (r["metadata"].get("labels") or {}).get(revs.REVISION_HASH) or revs.template_hash(sts)
        hash_ = revs.template_hash(sts)
        rev = revs.new_revision(
            sts, max((int(r.get("revision") or 0) for r in existing), default=0) + 1, hash_, "StatefulSet"
        )
        try:
            self.client.create(self.rev_rt, rev)
        except errors.APIError as e:
            if e.code != 409:
                raise
        return hash_

    def _sync(self, sts: dict, pods: dict, current_hash: str, update_hash: str, now: float) -> None:
        spec = _spec(sts)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        start = start_ordinal(sts)
        want = range(start, start + replicas(sts))
        strategy = spec.get("updateStrategy") or {}
        partition = int(((strategy.get("rollingUpdate") or {}).get("partition")) or 0)
        on_delete = strategy.get("type") == "OnDelete"
        # failed pods are replaced; terminating ones are waited for
        for o, p in list(pods.items()):
            if (p.get("status") or {}).get("phase") == "Failed" and not p["metadata"].get("deletionTimestamp"):
                self._delete_pod(sts, p, now)
                pods.pop(o)
        # create the missing pods (and their claims), in order unless Parallel
        for o in want:
            p = pods.get(o)
            if p is None:
                hash_ = (
                    update_hash
                    if (on_delete or o >= partition + start or current_hash == update_hash)
                    else current_hash
                )
                self._claims(sts, o)
                created = self.client.create(self.pod_rt, new_pod(sts, o, hash_))
                recorder.record(
                    self.client,
                    sts,
                    "apps/v1",
                    "StatefulSet",
                    "Normal",
                    "SuccessfulCreate",
                    f"create Pod {created['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
                    NAME,
                    now,
                )
                pods[o] = created
                if not parallel:
                    return
            elif not parallel and (p["metadata"].get("deletionTimestamp") or not _running_ready(p)):
                return  # OrderedReady: wait for this one
        # scale down from the highest ordinal
        condemned = sorted((o for o in pods if o not in want), reverse=True)
        for o in condemned:
            p = pods[o]
            if p["metadata"].get("deletionTimestamp"):
                if not parallel:
                    return
                continue
            self._delete_pod(sts, p, now)
            self._scaled_claims(sts, o)
            if not parallel:
                return
        if condemned or on_delete:
            return
        # RollingUpdate: from the highest ordinal down to the partition, one at a time
        for o in sorted((o for o in want if o >= partition + start), reverse=True):
            p = pods[o]
            if (p["metadata"].get("labels") or {}).get(revs.REVISION_HASH) != update_hash:
                if p["metadata"].get("deletionTimestamp"):
                    return
                self._delete_pod(sts, p, now)
                return
            if not _running_ready(p):
                return

    def _claims(self, sts: dict, ordinal: int) -> None:
        for t in _spec(sts).get("volumeClaimTemplates") or ():
            try:
                self.client.create(self.pvc_rt, new_claim(sts, t, ordinal))
            except errors.APIError as e:
                if e.code != 409:  # an existing claim is reused: that is the point of a stable identity
                    raise

    def _scaled_claims(self, sts: dict, ordinal: int) -> None:
        """whenScaled: Delete removes the claims of a pod the scale-down condemned."""
        if (_spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}).get("whenScaled") != "Delete":
            return
        for t in _spec(sts).get("volumeClaimTemplates") or ():
            try:
                self.client.delete(self.pvc_rt, meta.namespace_of(sts), claim_name(t, sts, ordinal))
            except errors.APIError as e:
                if e.code != 404:
                    raise

    def _delete_pod(self, sts: dict, pod: dict, now: float) -> None:
        try:
            self.client.delete(self.pod_rt, meta.namespace_of(pod), meta.name_of(pod))
        except errors.APIError as e:
            if e.code != 404:
                raise
            return
        recorder.record(
            self.client,
            sts,
            "apps/v1",
            "StatefulSet",
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
            NAME,
            now,
        )

    def _status(self, sts: dict, status: dict, pods: dict, current_hash: str, update_hash: str, now: float) -> None:
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
        min_ready = int(_spec(sts).get("minReadySeconds") or 0)
        hashes = [(p["metadata"].get("labels") or {}).get(revs.REVISION_HASH) for p in live]
        updated = sum(1 for h in hashes if h == update_hash)
        st = {
            "replicas": len(live),
            "readyReplicas": sum(1 for p in live if _running_ready(p)),
            "currentReplicas": sum(1 for h in hashes if h == current_hash),
            "updatedReplicas": updated,
            "availableReplicas": sum(1 for p in live if _running_ready(p) and is_pod_available(p, min_ready, now)),
            "currentRevision": current_hash,
            "updateRevision": update_hash,
            "collisionCount": status.get("collisionCount", 0),
        }
        if updated == replicas(sts) == len(live) and all(_running_ready(p) for p in live):
            st["currentRevision"] = update_hash  # the rollout is done
            st["currentReplicas"] = updated
        gen = sts["metadata"].get("generation")
        if gen:
            st["observedGeneration"] = gen
        for k in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not st[k]:
                del st[k]  # omitempty
        if status.get("conditions"):
            st["conditions"] = status["conditions"]
        cur = self.client.get(self.sts_rt, meta.namespace_of(sts), meta.name_of(sts))
        if cur is None or cur["metadata"].get("uid") != sts["metadata"]["uid"] or (cur.get("status") or {}) == st:
            return
        new = clone(cur)
        new["status"] = st
        self.client.update_status(self.sts_rt, new)


async def start(server: "Server") -> list:
    c = StatefulSetController(server)
    await c.start()
    return [c]
