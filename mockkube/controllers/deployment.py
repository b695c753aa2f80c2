"""The Deployment controller (upstream pkg/controller/deployment): owns one ReplicaSet per
pod template (``<deployment>-<pod-template-hash>``), rolls between them with RollingUpdate
(maxSurge/maxUnavailable) or Recreate, scales proportionally, keeps revision annotations,
prunes history beyond revisionHistoryLimit, and reports status with the Available and
Progressing conditions that kubectl rollout status and kstatus (helm --wait) read.

The arithmetic lives in ``deployment_util`` (pure); this module does the reads and writes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import deployment_util as du
from mockkube.machinery import errors, meta
from mockkube.machinery.selectors import label_selector_from_object

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.deployment")

NAME = "deployment-controller"


def _uid(obj: dict | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("uid", "")


class DeploymentController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.d_rt = self.client.rt("deployments", "apps")
        self.rs_rt = self.client.rt("replicasets", "apps")
        self.pod_rt = self.client.rt("pods")
        self.d_inf = Informer(server.store, self.d_rt)
        self.rs_inf = Informer(server.store, self.rs_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.d_inf.add_handler(lambda typ, obj, prev: self.queue.add((meta.namespace_of(obj), meta.name_of(obj))))
        self.rs_inf.add_handler(self._on_rs)
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.d_inf, self.rs_inf, self.pod_inf]

    # handlers -----------------------------------------------------------------------------
    def _deployments_for_rs(self, rs: dict) -> list[tuple[str, str]]:
        ns = meta.namespace_of(rs)
        ref = cref.controller_of(rs)
        if ref is not None:
            return [(ns, ref["name"])] if ref.get("kind") == "Deployment" else []
        labels = (rs.get("metadata") or {}).get("labels") or {}
        out = []
        for d in self.d_inf.list(ns):
            try:
                sel = label_selector_from_object((d.get("spec") or {}).get("selector"))
            except errors.APIError:
                continue
            if not sel.empty and sel.matches(labels):
                out.append((ns, meta.name_of(d)))
        return out

    def _on_rs(self, typ: str, obj: dict, prev: dict | None) -> None:
        keys = set(self._deployments_for_rs(obj))
        if prev is not None:
            keys.update(self._deployments_for_rs(prev))
        for k in keys:
            self.queue.add(k)

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        # Recreate waits for old pods to be gone: their deletion is what lets it go on.
        if typ != "DELETED":
            return
        rs = cref.resolve_owner(obj, "ReplicaSet", lambda ns, n: self.rs_inf.get(ns, n))
        if rs is not None:
            for k in self._deployments_for_rs(rs):
                self.queue.add(k)

    # reads --------------------------------------------------------------------------------
    def _now(self) -> float:
        return self.server.clock()

    def _claim_rss(self, d: dict, selector) -> list[dict]:
        """getReplicaSetsForDeployment: ours that match, plus adopted orphans; release the rest."""
        out = []
        ref = cref.new_controller_ref(d, "apps/v1", "Deployment")
        for rs in self.client.list(self.rs_rt, meta.namespace_of(d)):
            decision = cref.claim_decision(d, rs, selector)
            try:
                if decision == "keep":
                    out.append(rs)
                elif decision == "adopt":
                    out.append(self.client.update(self.rs_rt, cref.with_owner(clone(rs), ref)))
                elif decision == "release":
                    self.client.update(self.rs_rt, cref.without_owner(clone(rs), _uid(d)))
            except errors.APIError as e:
                if e.code not in (404, 409, 422):
                    raise
        return out

    def _pod_map(self, d: dict, selector, rss: list[dict]) -> dict[str, list[dict]]:
        by_uid: dict[str, list[dict]] = {_uid(rs): [] for rs in rss}
        for p in self.client.list(self.pod_rt, meta.namespace_of(d)):
            if not selector.matches((p.get("metadata") or {}).get("labels") or {}):
                continue
            owner = (cref.controller_of(p) or {}).get("uid")
            if owner in by_uid:
                by_uid[owner].append(p)
        return by_uid

    # writes -------------------------------------------------------------------------------
    def _event(self, d: dict, type_: str, reason: str, message: str) -> None:
        recorder.record(self.client, d, "apps/v1", "Deployment", type_, reason, message, NAME, self._now())

    def _write_status(self, d: dict, status: dict) -> dict:
        new = clone(d)
        new["status"] = status
        return self.client.update_status(self.d_rt, new)

    def _set_revision(self, d: dict, revision: str) -> dict:
        """SetDeploymentRevision (a metadata write: our status subresource keeps metadata)."""
        if du.annotations(d).get(du.REVISION) == revision:
            return d
        new = clone(d)
        new["metadata"].setdefault("annotations", {})[du.REVISION] = revision
        return self.client.update(self.d_rt, new)

    def _scale_rs(self, rs: dict, size: int, d: dict, always: bool = False) -> tuple[bool, dict]:
        """scaleReplicaSet(AndRecordEvent): set the size and the replica annotations."""
        if not always and du.replicas(rs) == size:
            return False, rs
        changed_size = du.replicas(rs) != size
        new = clone(rs)
        changed_ann = du.set_replicas_annotations(new, du.replicas(d), du.replicas(d) + du.max_surge(d))
        if not (changed_size or changed_ann):
            return False, rs
        new["spec"]["replicas"] = size
        out = self.client.update(self.rs_rt, new)
        if changed_size:
            verb = "up" if size > du.replicas(rs) else "down"
            self._event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {verb} replica set {meta.name_of(rs)} from {du.replicas(rs)} to {size}",
            )
        return changed_size, out

    # new / old ReplicaSets ------------------------------------------------------------------
    def _get_all(self, d: dict, rss: list[dict], create: bool) -> tuple[dict, dict | None, list[dict]]:
        """getAllReplicaSetsAndSyncRevision: (deployment, new RS or None, old RSs)."""
        rss = self._fresh(rss)
        found = du.find_new_rs(d, rss)
        old = [rs for rs in rss if found is None or _uid(rs) != _uid(found)]
        d, new_rs = self._get_new_rs(d, rss, old, create)
        return d, new_rs, old

    def _get_new_rs(self, d: dict, rss: list[dict], old: list[dict], create: bool) -> tuple[dict, dict | None]:
        existing = du.find_new_rs(d, rss)
        new_revision = du.max_revision(old) + 1
        mrs = int((d.get("spec") or {}).get("minReadySeconds") or 0)
        if existing is not None:
            rs = clone(existing)
            changed = du.set_new_rs_annotations(d, rs, new_revision, True)
            if int(rs["spec"].get("minReadySeconds") or 0) != mrs:
                rs["spec"]["minReadySeconds"] = mrs
                changed = True
            rs = self.client.update(self.rs_rt, rs) if changed else existing
            d = self._set_revision(d, du.annotations(rs).get(du.REVISION, ""))
            st = clone(d.get("status") or {})
            if du.has_progress_deadline(d) and du.get_condition(st, "Progressing") is None:
                du.set_condition(
                    st,
                    du.new_condition(
                        "Progressing",
                        "True",
                        du.FOUND_NEW_RS,
                        f'Found new replica set "{meta.name_of(rs)}"',
                        self._now(),
                    ),
                )
                d = self._write_status(d, st)
            return d, rs
        if not create:
            return d, None
        collision = (d.get("status") or {}).get("collisionCount")
        tpl = clone(d["spec"]["template"])
        h = du.compute_hash(tpl, collision)
        tpl.setdefault("metadata", {})["labels"] = {**(tpl["metadata"].get("labels") or {}), du.HASH_LABEL: h}
        sel = clone(d["spec"]["selector"])
        sel["matchLabels"] = {**(sel.get("matchLabels") or {}), du.HASH_LABEL: h}
        spec: dict = {"replicas": 0}
        if mrs:
            spec["minReadySeconds"] = mrs
        spec.update({"selector": sel, "template": tpl})
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta.name_of(d)}-{h}",
                "namespace": meta.namespace_of(d),
                "labels": dict(tpl["metadata"]["labels"]),
                "ownerReferences": [cref.new_controller_ref(d, "apps/v1", "Deployment")],
            },
            "spec": spec,
        }
        rs["spec"]["replicas"] = du.new_rs_new_replicas(d, old + [rs], rs)
        du.set_new_rs_annotations(d, rs, new_revision, False)
        already = False
        try:
            created = self.client.create(self.rs_rt, rs)
        except errors.APIError as e:
            if e.reason != "AlreadyExists":
                if du.has_progress_deadline(d):
                    st = clone(d.get("status") or {})
                    du.set_condition(
                        st,
                        du.new_condition(
                            "Progressing",
                            "False",
                            du.FAILED_RS_CREATE,
                            f'Failed to create new replica set "{rs["metadata"]["name"]}": {e.message}',
                            self._now(),
                        ),
                    )
                    self._write_status(d, st)
                raise
            cur = self.client.get(self.rs_rt, meta.namespace_of(d), rs["metadata"]["name"])
            if (
                cur is not None
                and (cref.controller_of(cur) or {}).get("uid") == _uid(d)
                and du.equal_ignore_hash(cur["spec"].get("template"), d["spec"].get("template"))
            ):
                created, already = cur, True
            else:
                # A hash collision: bump collisionCount so the next sync hashes differently.
                st = clone(d.get("status") or {})
                st["collisionCount"] = int(collision or 0) + 1
                self._write_status(d, st)
                raise
        if not already and du.replicas(created) > 0:
            self._event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {meta.name_of(created)} from 0 to {du.replicas(created)}",
            )
        d = self._set_revision(d, str(new_revision))
        if not already and du.has_progress_deadline(d):
            st = clone(d.get("status") or {})
            du.set_condition(
                st,
                du.new_condition(
                    "Progressing",
                    "True",
                    du.NEW_RS_CREATED,
                    f'Created new replica set "{meta.name_of(created)}"',
                    self._now(),
                ),
            )
            d = self._write_status(d, st)
        return d, created

    def _fresh(self, rss: list[dict | None]) -> list[dict]:
        out = []
        for rs in rss:
            if rs is None:
                continue
            cur = self.client.get(self.rs_rt, meta.namespace_of(rs), meta.name_of(rs))
            if cur is not None and _uid(cur) == _uid(rs):
                out.append(cur)
        return out

    def _refresh(self, rs: dict | None) -> dict | None:
        got = self._fresh([rs])
        return got[0] if got else None

    # status -------------------------------------------------------------------------------
    def _sync_status(self, d: dict, new_rs: dict | None, old: list[dict]) -> None:
        """syncDeploymentStatus: counts and Available only."""
        new_rs = self._refresh(new_rs)
        st = du.calculate_status(self._fresh(old) + ([new_rs] if new_rs else []), new_rs, d, self._now())
        if st != (d.get("status") or {}):
            self._write_status(d, st)

    def _sync_rollout_status(self, d: dict, new_rs: dict | None, old: list[dict]) -> None:
        new_rs = self._refresh(new_rs)
        now = self._now()
        st = du.rollout_status(self._fresh(old) + ([new_rs] if new_rs else []), new_rs, d, now)
        if st == (d.get("status") or {}):
            self._requeue_stuck(d, st, now)
            return
        self._write_status(d, st)

    def _requeue_stuck(self, d: dict, st: dict, now: float) -> None:
        cur = du.get_condition(d.get("status") or {}, "Progressing")
        if not du.has_progress_deadline(d) or cur is None:
            return
        if du.deployment_complete(d, st) or cur.get("reason") == du.TIMED_OUT or not cur.get("lastUpdateTime"):
            return
        after = meta.parse_time(cur["lastUpdateTime"]) + int(d["spec"]["progressDeadlineSeconds"]) - now
        key = (meta.namespace_of(d), meta.name_of(d))
        self.queue.add_after(key, max(after, 0) + 1)

    def _check_paused(self, d: dict) -> dict:
        if not du.has_progress_deadline(d):
            return d
        st = d.get("status") or {}
        cond = du.get_condition(st, "Progressing")
        if cond is not None and cond.get("reason") == du.TIMED_OUT:
            return d
        paused_cond = cond is not None and cond.get("reason") == du.PAUSED
        paused = bool(d["spec"].get("paused"))
        if paused == paused_cond:
            return d
        st = clone(st)
        if paused:
            c = du.new_condition("Progressing", "Unknown", du.PAUSED, "Deployment is paused", self._now())
        else:
            c = du.new_condition("Progressing", "Unknown", du.RESUMED, "Deployment is resumed", self._now())
        du.set_condition(st, c)
        return self._write_status(d, st)

    # sync paths ---------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        d = self.client.get(self.d_rt, ns, name)
        if d is None:
            return
        selector_obj = (d.get("spec") or {}).get("selector")
        if selector_obj == {}:
            self._event(
                d, "Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required."
            )
            gen = d["metadata"].get("generation", 0)
            if (d.get("status") or {}).get("observedGeneration", 0) < gen:
                self._write_status(d, {**(d.get("status") or {}), "observedGeneration": gen})
            return
        try:
            selector = label_selector_from_object(selector_obj)
        except errors.APIError:
            return
        rss = self._claim_rss(d, selector)
        if cref.is_terminating(d):
            d, new_rs, old = self._get_all(d, rss, create=False)
            self._sync_status(d, new_rs, old)
            return
        d = self._check_paused(d)
        if d["spec"].get("paused"):
            self._sync(d, rss)
            return
        d, scaling = self._is_scaling_event(d, rss)
        if scaling:
            self._sync(d, rss)
            return
        if ((d["spec"].get("strategy") or {}).get("type") or "RollingUpdate") == "Recreate":
            self._rollout_recreate(d, rss, selector)
        else:
            self._rollout_rolling(d, rss)

    def _is_scaling_event(self, d: dict, rss: list[dict]) -> tuple[dict, bool]:
        """A replicas change only (the active ReplicaSets were sized for another count)."""
        d, new_rs, old = self._get_all(d, rss, create=False)
        for rs in du.active(old + [new_rs]):
            desired = du.desired_annotation(rs)
            if desired is not None and desired != du.replicas(d):
                return d, True
        return d, False

    def resync(self) -> None:
        """Re-examine every Deployment (after an injected clock jumped past a deadline)."""
        for d in self.d_inf.list():
            self.queue.add((meta.namespace_of(d), meta.name_of(d)))

    def _sync(self, d: dict, rss: list[dict]) -> None:
        """Scaling and paused deployments: resize without rolling, then status."""
        d, new_rs, old = self._get_all(d, rss, create=False)
        self._scale(d, new_rs, old)
        if d["spec"].get("paused"):
            self._cleanup(d, self._fresh(old))
        self._sync_status(d, new_rs, old)

    def _scale(self, d: dict, new_rs: dict | None, old: list[dict]) -> None:
        target = du.find_active_or_latest(new_rs, old)
        if target is not None:
            if du.replicas(target) != du.replicas(d):
                self._scale_rs(target, du.replicas(d), d)
            return
        if du.is_saturated(d, new_rs):
            for rs in du.active(old):
                self._scale_rs(rs, 0, d)
            return
        if not du.is_rolling_update(d):
            return
        sizes = du.proportional_sizes(d, new_rs, old)
        for rs in du.active(old + [new_rs]):
            self._scale_rs(rs, sizes[meta.name_of(rs)], d, always=True)

    def _cleanup(self, d: dict, old: list[dict]) -> None:
        """cleanupDeployment: delete the oldest empty ReplicaSets beyond revisionHistoryLimit."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in old if not cref.is_terminating(rs)]
        extra = len(alive) - int(limit)
        if extra <= 0:
            return
        alive.sort(key=lambda rs: (du.revision(rs), du.creation_key(rs)))
        for rs in alive[:extra]:
            st = rs.get("status") or {}
            if (
                st.get("replicas", 0) != 0
                or du.replicas(rs) != 0
                or rs["metadata"].get("generation", 0) > st.get("observedGeneration", 0)
            ):
                continue
            self.client.delete(
                self.rs_rt, meta.namespace_of(rs), meta.name_of(rs), {"preconditions": {"uid": _uid(rs)}}
            )

    def _rollout_rolling(self, d: dict, rss: list[dict]) -> None:
        d, new_rs, old = self._get_all(d, rss, create=True)
        if self._reconcile_new_rs(d, new_rs, old):
            self._sync_rollout_status(d, new_rs, old)
            return
        new_rs = self._refresh(new_rs)
        if self._reconcile_old_rss(d, new_rs, self._fresh(old)):
            self._sync_rollout_status(d, new_rs, old)
            return
        if du.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, self._fresh(old))
        self._sync_rollout_status(d, new_rs, old)

    def _reconcile_new_rs(self, d: dict, new_rs: dict, old: list[dict]) -> bool:
        if du.replicas(new_rs) == du.replicas(d):
            return False
        if du.replicas(new_rs) > du.replicas(d):
            return self._scale_rs(new_rs, du.replicas(d), d)[0]
        count = du.new_rs_new_replicas(d, old + [new_rs], new_rs)
        return self._scale_rs(new_rs, count, d)[0]

    def _reconcile_old_rss(self, d: dict, new_rs: dict, old: list[dict]) -> bool:
        if du.sum_spec(old) == 0:
            return False
        all_pods = du.sum_spec(old + [new_rs])
        min_available = du.replicas(d) - du.max_unavailable(d)
        new_unavailable = du.replicas(new_rs) - du.status_int(new_rs, "availableReplicas")
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old, cleaned = self._cleanup_unhealthy(d, old, max_scaled_down)
        scaled = self._scale_down_old_rolling(d, old + [new_rs], old)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, d: dict, old: list[dict], max_cleanup: int) -> tuple[list[dict], int]:
        """Scale down old ReplicaSets' unavailable pods first: they cost no availability."""
        total = 0
        out = []
        for rs in du.by_creation(old):
            if total >= max_cleanup or du.replicas(rs) == 0:
                out.append(rs)
                continue
            unhealthy = du.replicas(rs) - du.status_int(rs, "availableReplicas")
            if unhealthy <= 0:
                out.append(rs)
                continue
            n = min(max_cleanup - total, unhealthy)
            _, rs = self._scale_rs(rs, du.replicas(rs) - n, d)
            total += n
            out.append(rs)
        return out, total

    def _scale_down_old_rolling(self, d: dict, all_rss: list[dict], old: list[dict]) -> int:
        min_available = du.replicas(d) - du.max_unavailable(d)
        available = du.sum_status(all_rss, "availableReplicas")
        if available <= min_available:
            return 0
        budget = available - min_available
        done = 0
        for rs in du.by_creation(old):
            if done >= budget:
                break
            if du.replicas(rs) == 0:
                continue
            n = min(du.replicas(rs), budget - done)
            self._scale_rs(rs, du.replicas(rs) - n, d)
            done += n
        return done

    def _rollout_recreate(self, d: dict, rss: list[dict], selector) -> None:
        d, new_rs, old = self._get_all(d, rss, create=False)
        scaled = False
        for rs in du.active(old):
            scaled = self._scale_rs(rs, 0, d)[0] or scaled
        if scaled:
            self._sync_rollout_status(d, new_rs, old)
            return
        if self._old_pods_running(new_rs, self._fresh(old), self._pod_map(d, selector, rss)):
            self._sync_rollout_status(d, new_rs, old)
            return
        if new_rs is None:
            d, new_rs, old = self._get_all(d, self._fresh(rss), create=True)
        if du.replicas(new_rs) != du.replicas(d):
            self._scale_rs(new_rs, du.replicas(d), d)
        if du.deployment_complete(d, d.get("status") or {}):
            self._cleanup(d, self._fresh(old))
        self._sync_rollout_status(d, new_rs, old)

    @staticmethod
    def _old_pods_running(new_rs: dict | None, old: list[dict], pod_map: dict[str, list[dict]]) -> bool:
        if du.sum_status(old, "replicas") > 0:
            return True
        for uid, pods in pod_map.items():
            if new_rs is not None and uid == _uid(new_rs):
                continue
            for p in pods:
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False


async def start(server: "Server") -> list:
    c = DeploymentController(server)
    await c.start()
    return [c]
