"""Device taint eviction (upstream pkg/controller/devicetainteviction, KEP-5055): a scheduled
pod whose allocated, reserved ResourceClaim uses a device with a NoExecute taint (on the
ResourceSlice device, or from a DeviceTaintRule selecting it) that the allocation's
tolerations do not tolerate gets a ``DisruptionTarget`` condition and is deleted, at the
taint's ``timeAdded`` plus the smallest matching ``tolerationSeconds``. DeviceTaintRules
get an ``EvictionInProgress`` status condition as upstream v1.36 writes it.

Time comes from ``server.clock``; delays are queued with ``queue.add_after``. When a test
advances an injected clock, ``resync()`` makes the controller look again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer, NoInformer
from mockkube.dra import taints as dtaints
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.devicetaint")

NAME = "device-taint-eviction-controller"
RULE_STATUS_PERIOD = 10.0  # seconds between DeviceTaintRule status refreshes while evicting
CONDITION = "EvictionInProgress"
NO_EXECUTE = "NoExecute"


# --- pure evaluation --------------------------------------------------------------------------


@dataclass(frozen=True)
class Reason:
    """One taint that causes eviction: from a rule (``rule`` = name, ``uid``) or from a
    slice device (``rule`` empty)."""

    rule: str = ""
    uid: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    index: int = 0

    def sort_key(self) -> tuple:
        return (0, self.rule, "", "", 0) if self.rule else (1, self.driver, self.pool, self.device, self.index)


@dataclass
class Eviction:
    when: float
    reasons: list[Reason] = field(default_factory=list)

    def rule_uids(self) -> set[str]:
        return {r.uid for r in self.reasons if r.rule}


TimeAdded = Callable[[dict, tuple], float]  # (taint, identity) -> epoch seconds


def _has_taints(slice_: dict) -> bool:
    return any(d.get("taints") for d in (slice_.get("spec") or {}).get("devices") or ())


def pool_devices(slices: Iterable[dict], driver: str, pool: str) -> dict[str, dict]:
    """The devices of one pool, from its slices of the newest generation only."""
    mine = [
        s
        for s in slices
        if (s.get("spec") or {}).get("driver") == driver
        and ((s.get("spec") or {}).get("pool") or {}).get("name") == pool
    ]
    if not mine:
        return {}
    gen = max(int(s["spec"]["pool"].get("generation") or 0) for s in mine)
    out: dict[str, dict] = {}
    for s in mine:
        if int(s["spec"]["pool"].get("generation") or 0) == gen:
            for d in s["spec"].get("devices") or ():
                out.setdefault(d.get("name", ""), d)
    return out


def evicting_taints(result: dict, device: dict | None, rules: Iterable[dict]) -> list[tuple[dict, Reason, tuple]]:
    """(taint, reason, identity) for every NoExecute taint on an allocated device."""
    drv, pool, dev = result.get("driver", ""), result.get("pool", ""), result.get("device", "")
    out = []
    if device is not None:
        for i, t in enumerate(device.get("taints") or ()):
            if t.get("effect") == NO_EXECUTE:
                out.append(
                    (
                        t,
                        Reason(driver=drv, pool=pool, device=dev, index=i),
                        ("slice", drv, pool, dev, t.get("key", ""), t.get("value", ""), t.get("effect")),
                    )
                )
    for rule in rules:
        taint = (rule.get("spec") or {}).get("taint") or {}
        if taint.get("effect") == NO_EXECUTE and dtaints.rule_selects(rule, drv, pool, dev):
            m = rule.get("metadata") or {}
            out.append((taint, Reason(rule=m.get("name", ""), uid=m.get("uid", "")), ("rule", m.get("uid", ""))))
    return out


def claim_eviction(
    claim: dict, devices: Callable[[str, str], dict[str, dict]], rules: list[dict], time_added: TimeAdded
) -> Eviction | None:
    """claimEvictionTime: the earliest moment any untolerated NoExecute taint of an allocated
    device evicts. Only tolerations with effect NoExecute count; one without
    tolerationSeconds tolerates forever; negative seconds count as zero."""
    alloc = (claim.get("status") or {}).get("allocation")
    if not alloc:
        return None
    when: float | None = None
    reasons: set[Reason] = set()
    for result in (alloc.get("devices") or {}).get("results") or ():
        device = devices(result.get("driver", ""), result.get("pool", "")).get(result.get("device", ""))
        for taint, reason, ident in evicting_taints(result, device, rules):
            at = time_added(taint, ident)
            seconds: int | None = None
            forever = False
            for tol in result.get("tolerations") or ():
                if tol.get("effect") == NO_EXECUTE and dtaints.tolerates(tol, taint):
                    if tol.get("tolerationSeconds") is None:
                        forever = True
                        break
                    s = max(int(tol["tolerationSeconds"]), 0)
                    seconds = s if seconds is None else min(seconds, s)
            if forever:
                continue
            if seconds is not None:
                at += seconds
            reasons.add(reason)
            when = at if when is None else min(when, at)
    if when is None:
        return None
    return Eviction(when, sorted(reasons, key=Reason.sort_key))


def pod_claim_names(pod: dict) -> list[tuple[str, bool]]:
    """(claim name, generated-for-this-pod) for each claim a pod uses (resourceclaim.Name),
    plus the claim created for DRA-backed extended resources (KEP-5004)."""
    out = []
    statuses = {
        s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        if pc.get("resourceClaimName"):
            out.append((pc["resourceClaimName"], False))
        elif pc.get("resourceClaimTemplateName") and statuses.get(pc.get("name")):
            out.append((statuses[pc["name"]], True))
    ext = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if ext:
        out.append((ext, True))
    return out


def _owned_by(claim: dict, pod: dict) -> bool:
    uid = pod["metadata"].get("uid")
    return any(
        r.get("controller") and r.get("uid") == uid for r in (claim.get("metadata") or {}).get("ownerReferences") or ()
    )


def reserved_for(claim: dict, pod: dict) -> bool:
    uid = pod["metadata"].get("uid")
    return any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or ())


def pod_eviction(
    pod: dict, claim_evictions: Callable[[str, str], tuple[dict, Eviction | None] | None]
) -> Eviction | None:
    """podEvictionTime: the earliest eviction over the pod's claims (reasons joined).
    Unscheduled pods, claims not reserved for this pod and foreign generated claims are ignored."""
    if not (pod.get("spec") or {}).get("nodeName"):
        return None
    ns = pod["metadata"].get("namespace", "")
    out: Eviction | None = None
    for name, generated in pod_claim_names(pod):
        got = claim_evictions(ns, name)
        if got is None:
            continue
        claim, ev = got
        if ev is None or (generated and not _owned_by(claim, pod)) or not reserved_for(claim, pod):
            continue
        if out is None:
            out = Eviction(ev.when, list(ev.reasons))
        else:
            out = Eviction(min(out.when, ev.when), sorted(set(out.reasons) | set(ev.reasons), key=Reason.sort_key))
    return out


def rule_condition(
    rule: dict,
    pending_pods: int,
    pending_namespaces: int,
    evicted: int,
    selected_slice_devices: int = 0,
    selected_allocated_devices: int = 0,
) -> dict:
    """The EvictionInProgress condition (without lastTransitionTime), worded as upstream."""
    effect = ((rule.get("spec") or {}).get("taint") or {}).get("effect", "")
    cond = {
        "type": CONDITION,
        "status": "False",
        "observedGeneration": rule["metadata"].get("generation", 0),
        "reason": "Effect" + effect,
        "message": "",
    }

    def n(count: int, one: str, many: str) -> str:
        return one if count == 1 else many % count

    if effect == NO_EXECUTE:
        if pending_pods > 0:
            cond["status"], cond["reason"] = "True", "PodsPendingEviction"
            cond["message"] = (
                n(pending_pods, "1 pod needs", "%d pods need")
                + " to be evicted in "
                + n(pending_namespaces, "1 namespace.", "%d different namespaces.")
            )
        else:
            cond["reason"] = "Completed" if evicted > 0 else "NotStarted"
    elif effect == "None":
        cond["reason"] = "NoEffect"
        cond["message"] = (
            n(selected_slice_devices, "1 published device selected. ", "%d published devices selected. ")
            + n(selected_allocated_devices, "1 allocated device selected. ", "%d allocated devices selected. ")
            + n(pending_pods, "1 pod would be evicted in ", "%d pods would be evicted in ")
            + n(pending_namespaces, "1 namespace ", "%d different namespaces ")
            + "if the effect was NoExecute. This information will not be updated again. "
            "Recreate the DeviceTaintRule to trigger an update."
        )
    else:
        cond["reason"] = "OtherEffect"
        cond["message"] = "Eviction only happens for the NoExecute effect."
    if evicted > 0:
        cond["message"] = (
            (cond["message"] + " " if cond["message"] else "")
            + n(evicted, "1 pod ", "%d pods ")
            + "evicted since starting the controller."
        )
    return cond


# --- the controller ---------------------------------------------------------------------------


class DeviceTaintEvictionController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.pod_rt = self.client.rt("pods")
        self.claim_rt = self.client.rt("resourceclaims", "resource.k8s.io")
        self.slice_rt = self.client.rt("resourceslices", "resource.k8s.io")
        served = self.client.served("devicetaintrules", "resource.k8s.io")  # DRADeviceTaintRules
        self.rule_rt = self.client.rt("devicetaintrules", "resource.k8s.io") if served else None
        self.pods = Informer(server.store, self.pod_rt)
        self.claims = Informer(server.store, self.claim_rt)
        self.slices = Informer(server.store, self.slice_rt)
        self.rules = Informer(server.store, self.rule_rt) if self.rule_rt else NoInformer("devicetaintrules")
        self.pods.add_handler(self._on_pod)
        self.claims.add_handler(self._on_claim)
        self.slices.add_handler(self._on_slice)
        self.rules.add_handler(self._on_rule)
        self.informers = [i for i in (self.rules, self.slices, self.claims, self.pods) if isinstance(i, Informer)]
        self._first_seen: dict[tuple, float] = {}
        self.pending: dict[tuple[str, str], tuple[str, Eviction]] = {}  # pod key -> (uid, eviction)
        self._tainted_slices: set[str] = set()  # slices with any device taint
        self.evicted_by_rule: dict[str, int] = {}

    # evaluation over the caches ---------------------------------------------------------------
    def _time_added(self, taint: dict, ident: tuple) -> float:
        if taint.get("timeAdded"):
            return meta.parse_time(taint["timeAdded"])
        # Not stamped by the API server: count from when this controller first saw it.
        return self._first_seen.setdefault(ident, self.server.clock())

    def _evaluate(self, pod: dict, rules: list[dict] | None = None) -> Eviction | None:
        rules = self.rules.list() if rules is None else rules
        slices = self.slices.list()

        def devices(driver: str, pool: str) -> dict[str, dict]:
            return pool_devices(slices, driver, pool)

        def claim_ev(ns: str, name: str):
            claim = self.claims.get(ns, name)
            if claim is None:
                return None
            return claim, claim_eviction(claim, devices, rules, self._time_added)

        return pod_eviction(pod, claim_ev)

    # handlers ---------------------------------------------------------------------------------
    def _pods_of_claim(self, claim: dict | None) -> list[tuple[str, str]]:
        if claim is None:
            return []
        ns = meta.namespace_of(claim)
        return [
            ("pod", ns, r.get("name", ""))
            for r in (claim.get("status") or {}).get("reservedFor") or ()
            if r.get("resource") == "pods" and not r.get("apiGroup")
        ]

    def _idle(self) -> bool:
        """No tainted device, no DeviceTaintRule, no eviction pending: no pod can concern
        this controller, so pod and claim events are not even queued."""
        return not self._tainted_slices and not self.pending and not self.rules.list()

    def _on_claim(self, typ: str, obj: dict, prev: dict | None) -> None:
        if self._idle():
            return
        for k in set(self._pods_of_claim(obj)) | set(self._pods_of_claim(prev)):
            self.queue.add(k)

    def _all_reserved_pods(self, pool: tuple[str, str] | None = None) -> set[tuple[str, str, str]]:
        out: set = set()
        for claim in self.claims.list():
            alloc = (claim.get("status") or {}).get("allocation")
            if not alloc:
                continue
            if pool is not None and not any(
                (r.get("driver"), r.get("pool")) == pool for r in (alloc.get("devices") or {}).get("results") or ()
            ):
                continue
            out.update(self._pods_of_claim(claim))
        return out

    def _on_slice(self, typ: str, obj: dict, prev: dict | None) -> None:
        name = meta.name_of(obj)
        had = name in self._tainted_slices
        if typ != "DELETED" and _has_taints(obj):
            self._tainted_slices.add(name)
        else:
            self._tainted_slices.discard(name)
        if not had and name not in self._tainted_slices:
            return  # untainted before and after: no reserved pod's fate changed
        spec = obj.get("spec") or {}
        for k in self._all_reserved_pods((spec.get("driver"), (spec.get("pool") or {}).get("name"))):
            self.queue.add(k)

    def _on_rule(self, typ: str, obj: dict, prev: dict | None) -> None:
        uid = (obj.get("metadata") or {}).get("uid", "")
        if typ == "DELETED":
            self.evicted_by_rule.pop(uid, None)
        elif prev is None or (prev.get("metadata") or {}).get("uid") != uid:
            self.queue.add(("rule", meta.name_of(obj)))  # status at least once
        if prev is not None and typ != "DELETED" and prev.get("spec") == obj.get("spec"):
            return
        for k in self._all_reserved_pods():
            self.queue.add(k)

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        key = ("pod", meta.namespace_of(obj), meta.name_of(obj))
        if typ == "DELETED":
            self.pending.pop(key[1:], None)
            return
        if self._idle():
            return
        if prev is not None:
            ps, os_ = prev.get("status") or {}, obj.get("status") or {}
            if (
                (prev.get("spec") or {}).get("nodeName") == (obj.get("spec") or {}).get("nodeName")
                and ps.get("resourceClaimStatuses") == os_.get("resourceClaimStatuses")
                and ps.get("extendedResourceClaimStatus") == os_.get("extendedResourceClaimStatus")
            ):
                return
        self.queue.add(key)

    def resync(self) -> None:
        """Look again at pending evictions and rule statuses (after an injected clock moved)."""
        for ns, name in list(self.pending):
            self.queue.add(("pod", ns, name))
        for rule in self.rules.list():
            self.queue.add(("rule", meta.name_of(rule)))

    # work -------------------------------------------------------------------------------------
    def reconcile(self, key: tuple) -> None:
        if key[0] == "pod":
            self._reconcile_pod(key[1], key[2])
        else:
            self._reconcile_rule(key[1])

    def _reconcile_pod(self, ns: str, name: str) -> None:
        pod = self.pods.get(ns, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            self.pending.pop((ns, name), None)
            return
        ev = self._evaluate(pod)
        now = self.server.clock()
        if ev is None:
            if self.pending.pop((ns, name), None) is not None:
                recorder.record(
                    self.client,
                    pod,
                    "v1",
                    "Pod",
                    "Normal",
                    "DeviceTaintManagerEviction",
                    "Cancelling deletion",
                    NAME,
                    now,
                )
            return
        uid = pod["metadata"].get("uid", "")
        self.pending[(ns, name)] = (uid, ev)
        for r in ev.reasons:
            if r.rule:
                self.queue.add(("rule", r.rule))
        if ev.when > now:
            self.queue.add_after(("pod", ns, name), ev.when - now)
            return
        self._evict(pod, now)
        self.pending.pop((ns, name), None)
        for r in ev.reasons:
            if r.rule:
                self.evicted_by_rule[r.uid] = self.evicted_by_rule.get(r.uid, 0) + 1
                self.queue.add_after(("rule", r.rule), RULE_STATUS_PERIOD)

    def _evict(self, pod: dict, now: float) -> None:
        """addConditionAndDeletePod: DisruptionTarget first, then a UID-preconditioned delete."""
        ns, name, uid = meta.namespace_of(pod), meta.name_of(pod), pod["metadata"].get("uid")
        recorder.record(
            self.client, pod, "v1", "Pod", "Normal", "DeviceTaintManagerEviction", "Marking for deletion", NAME, now
        )
        want = {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": meta.rfc3339(now),
            "reason": "DeletionByDeviceTaintManager",
            "message": "Device Taint manager: deleting due to NoExecute taint",
        }
        conds = (pod.get("status") or {}).get("conditions") or []
        cur = next((c for c in conds if c.get("type") == "DisruptionTarget"), None)
        if cur is None or any(cur.get(k) != want[k] for k in ("status", "reason", "message")):
            new = clone(pod)
            if cur is not None and cur.get("status") == want["status"]:
                want["lastTransitionTime"] = cur.get("lastTransitionTime")
            new.setdefault("status", {})["conditions"] = [c for c in conds if c.get("type") != "DisruptionTarget"] + [
                want
            ]
            try:
                self.client.update_status(self.pod_rt, new)
            except errors.APIError as e:
                if e.code == 404:
                    return
                raise
        try:
            self.client.delete(self.pod_rt, ns, name, {"preconditions": {"uid": uid}})
        except errors.APIError as e:
            if e.code != 409:  # replaced by another pod of the same name: nothing to do
                raise

    def _reconcile_rule(self, name: str) -> None:
        rule = self.rules.get("", name)
        if rule is None:
            return
        now = self.server.clock()
        conds = (rule.get("status") or {}).get("conditions") or []
        existing = next((c for c in conds if c.get("type") == CONDITION), None)
        gen = rule["metadata"].get("generation", 0)
        if existing is not None and existing.get("observedGeneration") == gen and existing.get("lastTransitionTime"):
            since = now - meta.parse_time(existing["lastTransitionTime"])
            if since < RULE_STATUS_PERIOD:
                self.queue.add_after(("rule", name), RULE_STATUS_PERIOD - since)
                return
        uid = rule["metadata"].get("uid", "")
        effect = ((rule.get("spec") or {}).get("taint") or {}).get("effect")
        pending = namespaces = slice_devs = alloc_devs = 0
        if effect in (NO_EXECUTE, "None"):
            rules = self.rules.list()
            if effect == "None":
                sim = clone(rule)
                sim["spec"]["taint"]["effect"] = NO_EXECUTE
                rules = [r for r in rules if r["metadata"].get("uid") != uid] + [sim]
                slice_devs, alloc_devs = self._count_selected(rule)
            nss = set()
            for pod in self.pods.list():
                if pod["metadata"].get("deletionTimestamp"):
                    continue
                ev = self._evaluate(pod, rules)
                if ev is not None and uid in ev.rule_uids():
                    pending += 1
                    nss.add(meta.namespace_of(pod))
            namespaces = len(nss)
        cond = rule_condition(rule, pending, namespaces, self.evicted_by_rule.get(uid, 0), slice_devs, alloc_devs)
        cond["lastTransitionTime"] = (existing or {}).get("lastTransitionTime")
        if existing is not None and all(existing.get(k) == v for k, v in cond.items()):
            return
        cond["lastTransitionTime"] = meta.rfc3339(now)
        order = ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message")
        cond = {k: cond[k] for k in order}
        new = clone(rule)
        new["status"] = {"conditions": [c for c in conds if c.get("type") != CONDITION] + [cond]}
        self.client.update_status(self.rule_rt, new)

    def _count_selected(self, rule: dict) -> tuple[int, int]:
        slices = self.slices.list()
        n_slice = 0
        pools = {
            ((s.get("spec") or {}).get("driver"), ((s.get("spec") or {}).get("pool") or {}).get("name")) for s in slices
        }
        for drv, pool in pools:
            for dev in pool_devices(slices, drv, pool):
                n_slice += dtaints.rule_selects(rule, drv, pool, dev)
        n_alloc = 0
        for claim in self.claims.list():
            alloc = (claim.get("status") or {}).get("allocation") or {}
            for r in (alloc.get("devices") or {}).get("results") or ():
                n_alloc += dtaints.rule_selects(rule, r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        return n_slice, n_alloc


async def start(server: "Server") -> list:
    gates = getattr(server, "feature_gates", None)
    if gates is not None and not gates.enabled("DRADeviceTaints"):
        return []  # kube-controller-manager runs device-taint-eviction-controller only with DRADeviceTaints
    c = DeviceTaintEvictionController(server)
    await c.start()
    return [c]
