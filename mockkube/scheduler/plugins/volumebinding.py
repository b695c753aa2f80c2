"""VolumeBinding: a pod's PersistentVolumeClaims decided before the pod is bound, as
kube-scheduler's plugin does with its volume binder.

PreFilter sorts the pod's claims (its ``persistentVolumeClaim`` volumes and the claims of
its generic ephemeral volumes): a missing or terminating claim, or an unbound claim of an
``Immediate`` class, makes the pod unschedulable and unresolvable. A pod without claims is
skipped (no cost in Filter). Filter, per node: a bound claim's volume must exist and its
``nodeAffinity`` admit the node; an unbound ``WaitForFirstConsumer`` claim needs an
Available volume that fits it on that node (class, access modes, volume mode, capacity,
node affinity; the smallest, not one another claim of the pod or another assumed pod
took), else a class that can provision there (a provisioner other than
``kubernetes.io/no-provisioner``, ``allowedTopologies`` admitting the node). Reserve
assumes the chosen volumes; PreBind writes the decisions: the volume's ``claimRef`` for a
static binding, the claim's ``volume.kubernetes.io/selected-node`` annotation for
provisioning (the persistentvolume controller and the simulated provisioner complete
them). Upstream's reasons and codes: every Filter reason is UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from typing import Callable

from mockkube.machinery import errors
from mockkube.machinery.quantity import parse_quantity
from mockkube.machinery.selectors import node_selector_term_matches
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo

NAME = "VolumeBinding"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WFFC = "WaitForFirstConsumer"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


def pod_claim_names(pod: dict) -> list[str]:
    """The claims a pod's volumes use: ``persistentVolumeClaim`` volumes and generic
    ephemeral volumes (their claim is ``<pod>-<volume>``)."""
    spec = pod.get("spec") or {}
    pod_name = (pod.get("metadata") or {}).get("name", "")
    out = []
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        pvc = v.get("persistentVolumeClaim")
        if isinstance(pvc, dict) and pvc.get("claimName"):
            out.append(pvc["claimName"])
        elif isinstance(v.get("ephemeral"), dict):
            out.append(f"{pod_name}-{v.get('name', '')}")
    return out


def _size(q) -> int:
    try:
        return parse_quantity(q).value()
    except Exception:  # noqa: BLE001 - validated on write; a bad value counts as 0
        return 0


def node_affinity_admits(pv: dict, node: dict) -> bool:
    """CheckNodeAffinity: the volume's required node selector (no terms: any node)."""
    terms = ((((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")) or {}).get("nodeSelectorTerms")
    if not terms:
        return True
    return any(node_selector_term_matches(t, node) for t in terms)


def topology_admits(sc: dict, node: dict) -> bool:
    """A class's allowedTopologies (none: everywhere) against the node's labels."""
    topos = sc.get("allowedTopologies") or ()
    if not topos:
        return True
    labels = ((node.get("metadata") or {}).get("labels")) or {}
    for term in topos:
        exprs = term.get("matchLabelExpressions") or ()
        if all(labels.get(e.get("key")) in (e.get("values") or ()) for e in exprs):
            return True
    return False


def claim_ref_of(pvc: dict) -> dict:
    m = pvc["metadata"]
    return {
        "kind": "PersistentVolumeClaim",
        "namespace": m.get("namespace", ""),
        "name": m.get("name", ""),
        "uid": m.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": m.get("resourceVersion", ""),
    }


def _prebound_to(pv: dict, pvc: dict) -> bool:
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    m = pvc["metadata"]
    return (
        ref.get("namespace") == m.get("namespace")
        and ref.get("name") == m.get("name")
        and (not ref.get("uid") or ref.get("uid") == m.get("uid"))
    )


def fits(pv: dict, pvc: dict) -> bool:
    """FindMatchingVolume's checks apart from node affinity: available (or pre-bound to
    this claim), same class, volume mode, access modes, enough capacity."""
    ps = pv.get("spec") or {}
    if (pv.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if ps.get("claimRef"):
        if not _prebound_to(pv, pvc):
            return False
    elif (pv.get("status") or {}).get("phase") not in (None, "", "Available"):
        return False
    spec = pvc.get("spec") or {}
    if (ps.get("storageClassName") or "") != (spec.get("storageClassName") or ""):
        return False
    if (ps.get("volumeMode") or "Filesystem") != (spec.get("volumeMode") or "Filesystem"):
        return False
    if not set(spec.get("accessModes") or ()) <= set(ps.get("accessModes") or ()):
        return False
    want = _size(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
    return _size((ps.get("capacity") or {}).get("storage", 0)) >= want


class _State:
    __slots__ = ("bound", "delayed", "decisions")

    def __init__(self, bound: list, delayed: list) -> None:
        self.bound = bound  # [(claim, volume name)]
        self.delayed = delayed  # [(claim, storage class or None)]
        self.decisions: dict[str, list] = {}  # node -> [(claim, volume or None = provision)]


class VolumeBinding(fw.Plugin):
    name = NAME

    def __init__(
        self,
        get_claim: Callable[[str, str], dict | None],
        get_volume: Callable[[str], dict | None],
        list_volumes: Callable[[], list[dict]],
        get_class: Callable[[str], dict | None],
        client=None,
    ) -> None:
        self.get_claim, self.get_volume, self.list_volumes, self.get_class = (
            get_claim,
            get_volume,
            list_volumes,
            get_class,
        )
        self.client = client
        self.assumed: dict[str, str] = {}  # volume name -> uid of the pod it is assumed for

    def events_to_register(self):
        return [
            # a claim the pod uses was created or changed (bound, provisioned, resized)
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.PERSISTENT_VOLUME_CLAIM, fw.ADD | fw.UPDATE), volume_after_claim_change
            ),
            # a volume to bind to, or the one a claim is bound to, appeared or changed
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.PERSISTENT_VOLUME, fw.ADD | fw.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.STORAGE_CLASS, fw.ADD | fw.UPDATE), volume_after_class_change),
            # a node matching a volume's node affinity
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL | fw.UPDATE_NODE_TAINT)),
        ]

    def pre_filter(self, state, pod):
        names = pod_claim_names(pod)
        if not names:
            return fw.Status(fw.SKIP)
        ns = (pod.get("metadata") or {}).get("namespace", "")
        bound, delayed = [], []
        for n in names:
            pvc = self.get_claim(ns, n)
            if pvc is None:
                return fw.unresolvable(f'persistentvolumeclaim "{n}" not found')
            if (pvc.get("metadata") or {}).get("deletionTimestamp"):
                return fw.unresolvable(f'persistentvolumeclaim "{n}" is being deleted')
            spec = pvc.get("spec") or {}
            if spec.get("volumeName"):
                bound.append((pvc, spec["volumeName"]))
                continue
            sc = self.get_class(spec.get("storageClassName") or "") if spec.get("storageClassName") else None
            if sc is not None and sc.get("volumeBindingMode") == WFFC:
                delayed.append((pvc, sc))
            else:
                return fw.unresolvable(ERR_IMMEDIATE)
        state[self.name] = _State(bound, delayed)
        return None

    def filter(self, state, pod, node: NodeInfo):
        s: _State = state[self.name]
        reasons: list[str] = []
        for _pvc, vol in s.bound:
            pv = self.get_volume(vol)
            if pv is None:
                reasons.append(ERR_PV_NOT_EXIST)
                break
            if not node_affinity_admits(pv, node.node):
                reasons.append(ERR_NODE_CONFLICT)
                break
        decisions: list = []
        if s.delayed:
            uid = (pod.get("metadata") or {}).get("uid", "")
            taken: set[str] = set()
            volumes = self.list_volumes()
            unmatched = []
            for pvc, sc in s.delayed:
                best = None
                for pv in volumes:
                    name = pv["metadata"]["name"]
                    if name in taken or self.assumed.get(name, uid) != uid:
                        continue
                    if not fits(pv, pvc) or not node_affinity_admits(pv, node.node):
                        continue
                    if _prebound_to(pv, pvc):
                        best = (-1, pv)
                        break
                    size = _size(((pv.get("spec") or {}).get("capacity") or {}).get("storage", 0))
                    if best is None or size < best[0]:
                        best = (size, pv)
                if best is None:
                    unmatched.append((pvc, sc))
                    continue
                taken.add(best[1]["metadata"]["name"])
                decisions.append((pvc, best[1]))
            for pvc, sc in unmatched:
                if sc.get("provisioner") == NO_PROVISIONER or not topology_admits(sc, node.node):
                    reasons.append(ERR_BIND_CONFLICT)
                    break
                decisions.append((pvc, None))
        if reasons:
            return fw.unresolvable(*reasons)
        s.decisions[node.name] = decisions
        return None

    def reserve(self, state, pod, node_name):
        s: _State | None = state.get(self.name)
        if s is None:
            return None
        uid = (pod.get("metadata") or {}).get("uid", "")
        for _pvc, pv in s.decisions.get(node_name, ()):
            if pv is not None:
                self.assumed[pv["metadata"]["name"]] = uid
        return None

    def unreserve(self, state, pod, node_name):
        s: _State | None = state.get(self.name)
        if s is None:
            return
        for _pvc, pv in s.decisions.get(node_name, ()):
            if pv is not None:
                self.assumed.pop(pv["metadata"]["name"], None)

    def pre_bind(self, state, pod, node_name):
        """BindPodVolumes: the volumes' claimRefs and the claims' selected-node written;
        the persistentvolume controller and the provisioner finish the binding."""
        s: _State | None = state.get(self.name)
        if s is None or self.client is None:
            return None
        pv_rt, pvc_rt = self.client.rt("persistentvolumes"), self.client.rt("persistentvolumeclaims")
        try:
            for pvc, pv in s.decisions.get(node_name, ()):
                if pv is not None:
                    if not _prebound_to(pv, pvc) or not (pv.get("spec") or {}).get("claimRef", {}).get("uid"):
                        ann = dict(pv["metadata"].get("annotations") or {})
                        ann.setdefault("pv.kubernetes.io/bound-by-controller", "yes")
                        self.client.update(
                            pv_rt,
                            dict(
                                pv,
                                metadata=dict(pv["metadata"], annotations=ann),
                                spec=dict(pv.get("spec") or {}, claimRef=claim_ref_of(pvc)),
                            ),
                        )
                else:
                    m = pvc["metadata"]
                    self.client.patch(
                        pvc_rt,
                        m["namespace"],
                        m["name"],
                        {"metadata": {"annotations": {SELECTED_NODE: node_name}}},
                        "merge",
                    )
        except errors.APIError as e:
            return fw.error(f"binding volumes: {e}")
        finally:
            for _pvc, pv in s.decisions.get(node_name, ()):
                if pv is not None:
                    self.assumed.pop(pv["metadata"]["name"], None)
        return None


# -- queueing hints ---------------------------------------------------------------------------
def volume_after_claim_change(pod: dict, old, new) -> int:
    """VolumeBinding.isSchedulableAfterPersistentVolumeClaimChange: a claim the pod uses."""
    m, pm = (new or {}).get("metadata") or {}, pod.get("metadata") or {}
    if m.get("namespace") != pm.get("namespace"):
        return fw.QUEUE_SKIP
    return fw.QUEUE if m.get("name") in pod_claim_names(pod) else fw.QUEUE_SKIP


def volume_after_class_change(pod: dict, old, new) -> int:
    """VolumeBinding.isSchedulableAfterStorageClassChange: a class added, or one whose
    allowedTopologies changed."""
    if old is None:
        return fw.QUEUE
    return fw.QUEUE if old.get("allowedTopologies") != new.get("allowedTopologies") else fw.QUEUE_SKIP
