"""DefaultPreemption (kube-scheduler ``pkg/scheduler/framework/plugins/defaultpreemption``):
when a pod fits nowhere, find a node where removing lower-priority pods makes it fit,
keeping as many of them as possible (reprieve, highest priority first), pick the node
whose victims matter least, then mark each victim with a DisruptionTarget condition,
delete it gracefully and nominate the node for the preemptor.

Removing a victim in the simulation also frees what its DRA claims hold when no pod but
victims uses them (the claim would be deallocated once the victims are gone), so a pod
waiting for a device can preempt the pod that holds it.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from mockkube.machinery import errors, meta
from mockkube.scheduler import framework as fw

log = logging.getLogger("mockkube.scheduler.preemption")

PREEMPTION_REASON = "PreemptionByScheduler"


def priority(pod: dict) -> int:
    return int((pod.get("spec") or {}).get("priority") or 0)


def eligible(pod: dict) -> bool:
    """PodEligibleToPreemptOthers: not for preemptionPolicy Never."""
    return (pod.get("spec") or {}).get("preemptionPolicy") != "Never"


class Preemptor:
    def __init__(self, sched: Any) -> None:
        self.s = sched

    # -- simulation -------------------------------------------------------------------------
    def _claims_of(self, pods: list[dict]) -> list[dict]:
        """Allocated claims that only these pods use."""
        uids = {p["metadata"]["uid"] for p in pods}
        out = []
        seen = set()
        for p in pods:
            ns = p["metadata"].get("namespace", "")
            names = [s.get("resourceClaimName") for s in (p.get("status") or {}).get("resourceClaimStatuses") or ()]
            names += [pc.get("resourceClaimName") for pc in (p.get("spec") or {}).get("resourceClaims") or ()]
            ext = (p.get("status") or {}).get("extendedResourceClaimStatus") or {}
            names.append(ext.get("resourceClaimName"))
            for n in names:
                if not n or (ns, n) in seen:
                    continue
                seen.add((ns, n))
                claim = self.s.dra.get_claim(ns, n)
                if claim is None or not (claim.get("status") or {}).get("allocation"):
                    continue
                users = {r.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or ()}
                if users <= uids:
                    out.append(claim)
        return out

    def _fits_without(
        self, state: fw.CycleState, pod: dict, node_name: str, removed: list[dict], filters: list[fw.Plugin]
    ) -> bool:
        cache, dra = self.s.cache, self.s.dra
        claims = self._claims_of(removed)
        counted = [dra._counted.get(c["metadata"]["uid"]) for c in claims]
        counted = [a for a in counted if a is not None]
        for p in removed:
            cache.remove_pod(p["metadata"]["uid"])
        for a in counted:
            dra.state.remove(a)
        node = cache.nodes.get(node_name)
        extended = [p for p in filters if fw.has_pod_extensions(p)] if node is not None else []
        for ext in extended:
            for p in removed:
                ext.remove_pod(state, pod, p, node)
        try:
            if node is None:
                return False
            for p in filters:
                st = p.filter(state, pod, node)
                if st is not None and not st.ok:
                    return False
            return True
        finally:
            for ext in extended:
                for p in removed:
                    ext.add_pod(state, pod, p, node)
            for a in counted:
                dra.state.add(a)
            for p in removed:
                cache.set_pod(p)

    def select_victims(
        self, state: fw.CycleState, pod: dict, node_name: str, filters: list[fw.Plugin]
    ) -> list[dict] | None:
        prio = priority(pod)
        lower = [p for p in self.s.assigned_pods(node_name) if priority(p) < prio]
        if not lower or not self._fits_without(state, pod, node_name, lower, filters):
            return None
        # reprieve as many as possible: first the pods whose eviction would violate a
        # PodDisruptionBudget, then the others, most important first within each group
        lower.sort(key=lambda p: (-priority(p), (p.get("status") or {}).get("startTime") or ""))
        violating, ok = self._split_by_pdb(lower)
        victims: list[dict] = []
        order = violating + ok
        for i, p in enumerate(order):
            rest = order[i + 1 :]
            if not self._fits_without(state, pod, node_name, victims + rest, filters):
                victims.append(p)
        return victims

    def _split_by_pdb(self, pods: list[dict]) -> tuple[list[dict], list[dict]]:
        """filterPodsWithPDBViolation: evicting in this order, which pods exceed a budget."""
        from mockkube.rules.disruption import selects

        pdbs = self.s.pdbs() if hasattr(self.s, "pdbs") else []
        allowed = {id(b): int((b.get("status") or {}).get("disruptionsAllowed", 0)) for b in pdbs}
        violating, ok = [], []
        for p in pods:
            hit = False
            for b in pdbs:
                if b["metadata"].get("namespace") != p["metadata"].get("namespace") or not selects(b, p):
                    continue
                if p["metadata"]["name"] in ((b.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[id(b)] -= 1
                if allowed[id(b)] < 0:
                    hit = True
            (violating if hit else ok).append(p)
        return violating, ok

    def violations(self, victims: list[dict]) -> int:
        return len(self._split_by_pdb(victims)[0])

    def find(
        self, state: fw.CycleState, pod: dict, statuses: dict[str, fw.Status], filters: list[fw.Plugin]
    ) -> tuple[str, list[dict]] | None:
        """The best (node, victims), or None."""
        best: tuple[tuple, str, list[dict]] | None = None
        for name, st in statuses.items():
            if st.code == fw.UNSCHEDULABLE_AND_UNRESOLVABLE:
                continue
            victims = self.select_victims(state, pod, name, filters)
            if not victims:
                continue
            # pickOneNodeForPreemption: fewest budget violations, lowest highest-victim priority, sum, count
            key = (
                self.violations(victims),
                max(priority(v) for v in victims),
                sum(priority(v) for v in victims),
                len(victims),
                name,
            )
            if best is None or key < best[0]:
                best = (key, name, victims)
        return (best[1], best[2]) if best else None

    # -- acting --------------------------------------------------------------------------------
    def preempt(self, pod: dict, node_name: str, victims: list[dict], now: Callable[[], str]) -> None:
        client, rt = self.s.client, self.s.pods_rt
        pm = pod["metadata"]
        for v in victims:
            vm = v["metadata"]
            cond = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": PREEMPTION_REASON,
                "message": f"{self.s.scheduler_name}: preempting to accommodate a higher priority pod",
                "lastProbeTime": None,
                "lastTransitionTime": now(),
            }
            try:
                client.patch(
                    rt,
                    vm["namespace"],
                    vm["name"],
                    {"metadata": {"uid": vm["uid"]}, "status": {"conditions": [cond]}},
                    "strategic",
                    "status",
                )
                client.delete(rt, vm["namespace"], vm["name"], {"preconditions": {"uid": vm["uid"]}})
            except errors.APIError as e:
                log.debug("preempting %s failed: %s", vm.get("name"), e)
                continue
            self.s.recorder.event(
                v,
                "Normal",
                "Preempted",
                f"Preempted by pod {pm.get('uid')} on node {node_name}",
                action="Preempting",
                related=pod,
            )
        try:
            client.patch(
                rt,
                pm["namespace"],
                pm["name"],
                {"metadata": {"uid": pm["uid"]}, "status": {"nominatedNodeName": node_name}},
                "strategic",
                "status",
            )
        except errors.APIError as e:
            log.debug("nominating %s failed: %s", pm.get("name"), e)


__all__ = ["Preemptor", "eligible", "priority", "meta"]
