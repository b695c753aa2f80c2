"""The ReplicaSet controller (upstream pkg/controller/replicaset): keeps ``spec.replicas``
active pods that match the selector, adopting orphans and releasing pods that no longer
match, deleting the least valuable pods first, and reports status from pod conditions.

Writes land in the cache before the client call returns, so the upstream "expectations"
bookkeeping (waiting for the informer to catch up with our own creates) is not needed.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.machinery import errors, meta
from mockkube.machinery.selectors import label_selector_from_object, selector_from_set

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.replicaset")

NAME = "replicaset-controller"
BURST_REPLICAS = 500  # upstream's per-sync limit on creations/deletions
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


# --- pod predicates (k8s.io/kubernetes/pkg/api/v1/pod) ------------------------------------------


def _ready_condition(pod: dict) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return c
    return None


def is_pod_ready(pod: dict) -> bool:
    c = _ready_condition(pod)
    return c is not None and c.get("status") == "True"


def is_pod_available(pod: dict, min_ready_seconds: int, now: float) -> bool:
    """Ready for at least ``min_ready_seconds``."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    since = (_ready_condition(pod) or {}).get("lastTransitionTime")
    return bool(since) and meta.parse_time(since) + min_ready_seconds < now


def is_active(pod: dict) -> bool:
    """controller.FilterActivePods: not terminal and not being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not (
        pod.get("metadata") or {}
    ).get("deletionTimestamp")


def is_terminating(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and bool(
        (pod.get("metadata") or {}).get("deletionTimestamp")
    )


# --- which pods go first (controller.ActivePodsWithRanks) ---------------------------------------

_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def _ready_time(pod: dict) -> float | None:
    c = _ready_condition(pod)
    if c is None or c.get("status") != "True" or not c.get("lastTransitionTime"):
        return None
    return meta.parse_time(c["lastTransitionTime"])


def _created(pod: dict) -> float | None:
    ts = (pod.get("metadata") or {}).get("creationTimestamp")
    return meta.parse_time(ts) if ts else None


def _deletion_cost(pod: dict) -> int:
    try:
        return int(((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST, "0"))
    except ValueError:
        return 0


def _restarts(pod: dict) -> int:
    return max(
        (int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or ()), default=0
    )


def _log_rank(t: float, now: float) -> int:
    d = (now - t) * 1e9
    return int(math.log2(d)) if d > 1 else 0


def _newer_or_zero(a: float | None, b: float | None) -> int:
    """afterOrZero as a comparison: a missing time first, then the later time."""
    if a is None or b is None:
        return -1 if a is None and b is not None else (1 if b is None and a is not None else 0)
    return -1 if a > b else (1 if a < b else 0)


def _uid_cmp(a: dict, b: dict) -> int:
    ua, ub = a["metadata"].get("uid", ""), b["metadata"].get("uid", "")
    return -1 if ua < ub else (1 if ua > ub else 0)


def rank_for_deletion(pods: list[dict], ranks: dict[str, int], now: float) -> list[dict]:
    """Pods ordered most-deletable first: unscheduled, then pending/unknown, not ready,
    lower deletion cost, more related pods on the same node, more recently ready
    (log-scale buckets), more restarts, newer."""

    def cmp(a: dict, b: dict) -> int:
        sa, sb = bool((a.get("spec") or {}).get("nodeName")), bool((b.get("spec") or {}).get("nodeName"))
        if sa != sb:
            return -1 if not sa else 1
        pa = _PHASE_ORDER.get((a.get("status") or {}).get("phase"), 0)
        pb = _PHASE_ORDER.get((b.get("status") or {}).get("phase"), 0)
        if pa != pb:
            return -1 if pa < pb else 1
        ra, rb = is_pod_ready(a), is_pod_ready(b)
        if ra != rb:
            return -1 if not ra else 1
        ca, cb = _deletion_cost(a), _deletion_cost(b)
        if ca != cb:
            return -1 if ca < cb else 1
        ka, kb = ranks.get(a["metadata"].get("uid", ""), 0), ranks.get(b["metadata"].get("uid", ""), 0)
        if ka != kb:
            return -1 if ka > kb else 1
        if ra and rb:
            ta, tb = _ready_time(a), _ready_time(b)
            if ta != tb:
                if ta is None or tb is None:
                    return _newer_or_zero(ta, tb)
                la, lb = _log_rank(ta, now), _log_rank(tb, now)
                if la == lb:
                    return _uid_cmp(a, b)
                return -1 if la < lb else 1
        xa, xb = _restarts(a), _restarts(b)
        if xa != xb:
            return -1 if xa > xb else 1
        ta, tb = _created(a), _created(b)
        if ta != tb:
            if ta is None or tb is None:
                return _newer_or_zero(ta, tb)
            la, lb = _log_rank(ta, now), _log_rank(tb, now)
            if la != lb:
                return -1 if la < lb else 1
        return _uid_cmp(a, b)

    return sorted(pods, key=functools.cmp_to_key(cmp))


def same_node_ranks(pods: list[dict], related: list[dict]) -> dict[str, int]:
    """getPodsRankedByRelatedPodsOnSameNode: for each pod, how many related active pods
    share its node (doubled-up pods go first)."""
    on_node: dict[str, int] = {}
    for p in related:
        node = (p.get("spec") or {}).get("nodeName")
        if node and is_active(p):
            on_node[node] = on_node.get(node, 0) + 1
    return {
        p["metadata"].get("uid", ""): on_node.get((p.get("spec") or {}).get("nodeName") or "", 0)
        for p in pods
        if (p.get("spec") or {}).get("nodeName")
    }


# --- objects ------------------------------------------------------------------------------------


def pod_from_template(rs: dict, api_version: str = "apps/v1", kind: str = "ReplicaSet") -> dict:
    """controller.GetPodFromTemplate: template labels/annotations/finalizers/spec,
    ``generateName: <rs>-`` and a controller reference to the ReplicaSet."""
    tpl = (rs.get("spec") or {}).get("template") or {}
    tm = tpl.get("metadata") or {}
    m: dict = {"generateName": rs["metadata"]["name"] + "-", "namespace": rs["metadata"].get("namespace", "")}
    for k in ("labels", "annotations", "finalizers"):
        if tm.get(k):
            m[k] = clone(tm[k])
    m["ownerReferences"] = [cref.new_controller_ref(rs, api_version, kind)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": clone(tpl.get("spec") or {})}


def calculate_status(
    rs: dict, pods: list[dict], terminating: list[dict], now: float, manage_error: str | None = None
) -> dict:
    """ReplicaSet status from its active pods (zero counts omitted, as Go's omitempty)."""
    old = rs.get("status") or {}
    tpl_sel = selector_from_set(((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels"))
    min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
    labeled = sum(1 for p in pods if tpl_sel.matches((p.get("metadata") or {}).get("labels") or {}))
    ready = [p for p in pods if is_pod_ready(p)]
    available = sum(1 for p in ready if is_pod_available(p, min_ready, now))
    st: dict = {"replicas": len(pods)}
    for k, v in (
        ("fullyLabeledReplicas", labeled),
        ("readyReplicas", len(ready)),
        ("availableReplicas", available),
        ("observedGeneration", old.get("observedGeneration", 0)),
    ):
        if v:
            st[k] = v
    st["terminatingReplicas"] = len(terminating)
    conds = [c for c in old.get("conditions") or () if c.get("type") != "ReplicaFailure"]
    failure = next((c for c in old.get("conditions") or () if c.get("type") == "ReplicaFailure"), None)
    if manage_error is not None:
        failure = failure or {
            "type": "ReplicaFailure",
            "status": "True",
            "lastTransitionTime": meta.rfc3339(now),
            "reason": manage_error.split(":", 1)[0],
            "message": manage_error,
        }
        conds.append(failure)
    if conds:
        st["conditions"] = conds
    return st


# --- the controller -----------------------------------------------------------------------------


def selector_of(rs: dict, kind: str = "ReplicaSet"):
    """A ReplicaSet's label selector; a ReplicationController's plain map (defaulted from
    the template's labels and required non-empty by validation)."""
    sel = (rs.get("spec") or {}).get("selector")
    if kind == "ReplicationController":
        return selector_from_set(sel or {})
    return label_selector_from_object(sel)


class ReplicaSetController(Controller):
    """Also the replication manager: ReplicationControllers share the logic (upstream's
    replication controller wraps the ReplicaSet controller the same way)."""

    name = NAME
    kind, api_version, plural, group = "ReplicaSet", "apps/v1", "replicasets", "apps"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.rs_rt = self.client.rt(self.plural, self.group)
        self.pod_rt = self.client.rt("pods")
        self.rs_inf = Informer(server.store, self.rs_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.rs_inf.add_handler(self._on_rs)
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.rs_inf, self.pod_inf]

    # handlers ---------------------------------------------------------------------------
    def _on_rs(self, typ: str, obj: dict, prev: dict | None) -> None:
        self.queue.add((meta.namespace_of(obj), meta.name_of(obj)))

    def _owners_of(self, pod: dict) -> list[tuple[str, str]]:
        ns = meta.namespace_of(pod)
        ref = cref.controller_of(pod)
        if ref is not None:
            return [(ns, ref["name"])] if ref.get("kind") == self.kind else []
        labels = (pod.get("metadata") or {}).get("labels") or {}
        out = []
        for rs in self.rs_inf.list(ns):
            try:
                if selector_of(rs, self.kind).matches(labels):
                    out.append((ns, meta.name_of(rs)))
            except errors.APIError:
                continue
        return out

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        keys = set(self._owners_of(obj))
        if prev is not None:
            keys.update(self._owners_of(prev))
        for k in keys:
            self.queue.add(k)

    # reconcile --------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        rs = self.client.get(self.rs_rt, ns, name)
        if rs is None:
            return
        try:
            selector = selector_of(rs, self.kind)
        except errors.APIError:
            return  # an invalid selector never heals by retrying
        all_pods = self.client.list(self.pod_rt, ns)
        pods = self._claim_pods(rs, selector, [p for p in all_pods if is_active(p)])
        uid = rs["metadata"]["uid"]
        terminating = [
            p
            for p in all_pods
            if is_terminating(p)
            and (cref.controller_of(p) or {}).get("uid") == uid
            and selector.matches((p.get("metadata") or {}).get("labels") or {})
        ]
        manage_error = None
        if not cref.is_terminating(rs):
            try:
                self._manage_replicas(rs, pods)
            except errors.APIError as e:
                manage_error = f"{'FailedCreate' if len(pods) < _replicas(rs) else 'FailedDelete'}: {e.message}"
            pods = [
                p
                for p in self.client.list(self.pod_rt, ns)
                if is_active(p) and (cref.controller_of(p) or {}).get("uid") == uid
            ]
        now = self.server.clock()
        status = calculate_status(rs, pods, terminating, now, manage_error)
        if self.kind == "ReplicationController":
            status.pop("terminatingReplicas", None)  # not a field of ReplicationControllerStatus
        self._update_status(rs, status)
        min_ready = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        ready = sum(1 for p in pods if is_pod_ready(p))
        available = sum(1 for p in pods if is_pod_available(p, min_ready, now))
        if manage_error is None and min_ready > 0 and ready == _replicas(rs) and available != ready:
            self.queue.add_after(key, min_ready)
        if manage_error is not None:
            raise errors.internal(manage_error)

    def _patch_meta(self, pod: dict) -> dict:
        return self.client.patch(self.pod_rt, meta.namespace_of(pod), meta.name_of(pod), cref.metadata_patch(pod))

    def _claim_pods(self, rs: dict, selector, pods: list[dict]) -> list[dict]:
        out = []
        ref = cref.new_controller_ref(rs, self.api_version, self.kind)
        for p in pods:
            decision = cref.claim_decision(rs, p, selector)
            if decision == "keep":
                out.append(p)
            elif decision == "adopt":
                try:
                    out.append(self._patch_meta(cref.with_owner(clone(p), ref)))
                except errors.APIError as e:
                    if e.code not in (404, 409, 422):
                        raise
            elif decision == "release":
                try:
                    self._patch_meta(cref.without_owner(clone(p), rs["metadata"]["uid"]))
                except errors.APIError as e:
                    if e.code not in (404, 409, 422):
                        raise
        return out

    def _related_pods(self, rs: dict) -> list[dict]:
        """Pods of every ReplicaSet under the same controller (getIndirectlyRelatedPods)."""
        ns = meta.namespace_of(rs)
        owner = cref.controller_of(rs)
        if owner is None:
            siblings = {rs["metadata"]["uid"]}
        else:
            siblings = {
                r["metadata"]["uid"]
                for r in self.rs_inf.list(ns)
                if (cref.controller_of(r) or {}).get("uid") == owner.get("uid")
            }
        return [p for p in self.client.list(self.pod_rt, ns) if (cref.controller_of(p) or {}).get("uid") in siblings]

    def _manage_replicas(self, rs: dict, pods: list[dict]) -> None:
        diff = len(pods) - _replicas(rs)
        now = self.server.clock()
        if diff < 0:
            for _ in range(min(-diff, BURST_REPLICAS)):
                created = self.client.create(self.pod_rt, pod_from_template(rs, self.api_version, self.kind))
                recorder.record(
                    self.client,
                    rs,
                    self.api_version,
                    self.kind,
                    "Normal",
                    "SuccessfulCreate",
                    f"Created pod: {meta.name_of(created)}",
                    self.name,
                    now,
                )
        elif diff > 0:
            diff = min(diff, BURST_REPLICAS)
            victims = pods
            if diff < len(pods):
                victims = rank_for_deletion(pods, same_node_ranks(pods, self._related_pods(rs)), now)
            for p in victims[:diff]:
                self.client.delete(self.pod_rt, meta.namespace_of(p), meta.name_of(p))
                recorder.record(
                    self.client,
                    rs,
                    self.api_version,
                    self.kind,
                    "Normal",
                    "SuccessfulDelete",
                    f"Deleted pod: {meta.name_of(p)}",
                    self.name,
                    now,
                )

    def _update_status(self, rs: dict, status: dict) -> None:
        gen = (rs.get("metadata") or {}).get("generation", 0)
        status = dict(status)
        if gen:
            status["observedGeneration"] = gen
        cur = self.client.get(self.rs_rt, meta.namespace_of(rs), meta.name_of(rs))
        if cur is None or cur["metadata"].get("uid") != rs["metadata"]["uid"]:
            return
        if (cur.get("status") or {}) == status:
            return
        new = clone(cur)
        new["status"] = status
        self.client.update_status(self.rs_rt, new)


def _replicas(rs: dict) -> int:
    v = (rs.get("spec") or {}).get("replicas")
    return 1 if v is None else int(v)


async def start(server: "Server") -> list:
    c = ReplicaSetController(server)
    await c.start()
    return [c]
