"""The DaemonSet controller (upstream pkg/controller/daemon): a daemon pod on every node
that should run one, ControllerRevisions for the template, RollingUpdate (maxUnavailable,
maxSurge) and OnDelete, and the status ``kubectl rollout status`` and ``helm --wait`` read.
The decisions are pure functions in daemonset_util; this module does the I/O.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import daemonset_util as du
from mockkube.controllers.replicaset import is_pod_ready
from mockkube.machinery import errors, meta
from mockkube.machinery.selectors import label_selector_from_object

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.daemonset")

NAME = "daemon-set-controller"
BURST = 250  # upstream creates in slow-start batches; this caps one sync


class DaemonSetController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.ds_rt = self.client.rt("daemonsets", "apps")
        self.pod_rt = self.client.rt("pods")
        self.node_rt = self.client.rt("nodes")
        self.rev_rt = self.client.rt("controllerrevisions", "apps")
        self.ds_inf = Informer(server.store, self.ds_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.node_inf = Informer(server.store, self.node_rt)
        self.ds_inf.add_handler(self._on_ds)
        self.pod_inf.add_handler(self._on_pod)
        self.node_inf.add_handler(self._on_node)
        self.informers = [self.ds_inf, self.node_inf, self.pod_inf]

    # handlers ---------------------------------------------------------------------------
    def _on_ds(self, typ: str, obj: dict, prev: dict | None) -> None:
        self.queue.add((meta.namespace_of(obj), meta.name_of(obj)))

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        for p in (obj, prev):
            ref = cref.controller_of(p) if p is not None else None
            if ref is not None and ref.get("kind") == "DaemonSet":
                self.queue.add((meta.namespace_of(p), ref["name"]))

    def _on_node(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "MODIFIED" and prev is not None and not _placement_changed(obj, prev):
            return  # heartbeats and status: no daemon pod moves for them
        for ds in self.ds_inf.list():
            self.queue.add((meta.namespace_of(ds), meta.name_of(ds)))

    # reconcile --------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        ds = self.client.get(self.ds_rt, ns, name)
        if ds is None:
            return
        try:
            selector = label_selector_from_object((ds.get("spec") or {}).get("selector"))
        except errors.APIError:
            return
        nodes = self.node_inf.list()
        pods = self._claim_pods(ds, selector)
        hash_ = self._ensure_revision(ds)
        now = self.server.clock()
        by_node = _by_node(pods)
        if not cref.is_terminating(ds):
            plan = du.plan_nodes(ds, nodes, by_node)
            rolling = du.rolling_update(ds, nodes, by_node, hash_, now)
            deleting = {p["metadata"]["uid"] for p in plan.delete}
            plan.delete += [p for p in rolling.delete if p["metadata"]["uid"] not in deleting]
            plan.create += [n for n in rolling.create if n not in plan.create]
            self._apply(ds, plan, hash_, now)
            pods = self._claim_pods(ds, selector)
            by_node = _by_node(pods)
        self._update_status(ds, du.status(ds, nodes, by_node, hash_, now))
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready and any(is_pod_ready(p) for p in pods):
            self.queue.add_after(key, min_ready)  # availability comes with time, not with an event

    def _claim_pods(self, ds: dict, selector) -> list[dict]:
        out = []
        ref = cref.new_controller_ref(ds, "apps/v1", "DaemonSet")
        for p in self.client.list(self.pod_rt, meta.namespace_of(ds)):
            decision = cref.claim_decision(ds, p, selector)
            if decision == "keep":
                out.append(p)
            elif decision in ("adopt", "release"):
                new = (
                    cref.with_owner(clone(p), ref)
                    if decision == "adopt"
                    else cref.without_owner(clone(p), ds["metadata"]["uid"])
                )
                try:
                    updated = self.client.patch(
                        self.pod_rt, meta.namespace_of(new), meta.name_of(new), cref.metadata_patch(new)
                    )
                except errors.APIError as e:
                    if e.code not in (404, 409, 422):
                        raise
                    continue
                if decision == "adopt":
                    out.append(updated)
        return out

    def _ensure_revision(self, ds: dict) -> str:
        """The current revision's hash; creates its ControllerRevision (and bumps the
        revision number of an old one that matches again), as constructHistory does."""
        ns = meta.namespace_of(ds)
        uid = ds["metadata"]["uid"]
        revs = [r for r in self.client.list(self.rev_rt, ns) if (cref.controller_of(r) or {}).get("uid") == uid]
        top = max((int(r.get("revision") or 0) for r in revs), default=0)
        for r in revs:
            if du.same_template(r, ds):
                hash_ = (r["metadata"].get("labels") or {}).get(du.REVISION_HASH) or du.template_hash(ds)
                if int(r.get("revision") or 0) < top:
                    new = clone(r)
                    new["revision"] = top + 1
                    self.client.update(self.rev_rt, new)
                return hash_
        hash_ = du.template_hash(ds)
        try:
            self.client.create(self.rev_rt, du.new_revision(ds, top + 1, hash_))
        except errors.APIError as e:
            if e.code != 409:
                raise
        self._cleanup_history(ds, revs, hash_)
        return hash_

    def _cleanup_history(self, ds: dict, revs: list[dict], current: str) -> None:
        """Keep revisionHistoryLimit (default 10) old revisions that no pod uses."""
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        limit = 10 if limit is None else int(limit)
        old = sorted(
            (r for r in revs if (r["metadata"].get("labels") or {}).get(du.REVISION_HASH) != current),
            key=lambda r: int(r.get("revision") or 0),
        )
        used = {
            (p["metadata"].get("labels") or {}).get(du.REVISION_HASH)
            for p in self.client.list(self.pod_rt, meta.namespace_of(ds))
        }
        for r in [r for r in old if (r["metadata"].get("labels") or {}).get(du.REVISION_HASH) not in used][
            : max(0, len(old) - limit)
        ]:
            try:
                self.client.delete(self.rev_rt, meta.namespace_of(r), meta.name_of(r))
            except errors.APIError as e:
                if e.code != 404:
                    raise

    def _apply(self, ds: dict, plan: du.Plan, hash_: str, now: float) -> None:
        for node in plan.create[:BURST]:
            try:
                pod = self.client.create(self.pod_rt, du.daemon_pod(ds, node, hash_))
            except errors.APIError as e:
                recorder.record(
                    self.client,
                    ds,
                    "apps/v1",
                    "DaemonSet",
                    "Warning",
                    "FailedCreate",
                    f"Error creating: {e.message}",
                    NAME,
                    now,
                )
                raise
            recorder.record(
                self.client,
                ds,
                "apps/v1",
                "DaemonSet",
                "Normal",
                "SuccessfulCreate",
                f"Created pod: {meta.name_of(pod)}",
                NAME,
                now,
            )
        for pod in plan.delete[:BURST]:
            try:
                self.client.delete(self.pod_rt, meta.namespace_of(pod), meta.name_of(pod))
            except errors.APIError as e:
                if e.code != 404:
                    raise
                continue
            recorder.record(
                self.client,
                ds,
                "apps/v1",
                "DaemonSet",
                "Normal",
                "SuccessfulDelete",
                f"Deleted pod: {meta.name_of(pod)}",
                NAME,
                now,
            )

    def _update_status(self, ds: dict, status: dict) -> None:
        cur = self.client.get(self.ds_rt, meta.namespace_of(ds), meta.name_of(ds))
        if cur is None or cur["metadata"].get("uid") != ds["metadata"]["uid"]:
            return
        if (cur.get("status") or {}) == status:
            return
        new = clone(cur)
        new["status"] = status
        self.client.update_status(self.ds_rt, new)


def _by_node(pods: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for p in pods:
        out.setdefault(du.pod_node(p), []).append(p)
    return out


def _placement_changed(node: dict, prev: dict) -> bool:
    """Labels, taints and readiness decide where daemon pods go; the rest does not."""
    return (node.get("metadata") or {}).get("labels") != (prev.get("metadata") or {}).get("labels") or (
        node.get("spec") or {}
    ) != (prev.get("spec") or {})


async def start(server: "Server") -> list:
    c = DaemonSetController(server)
    await c.start()
    return [c]
