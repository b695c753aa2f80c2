"""The namespace controller: empties a terminating namespace, then finalizes it.

As kube-controller-manager's ``pkg/controller/namespace/deletion``: for a namespace
with a deletionTimestamp and the ``kubernetes`` spec finalizer, delete every object of
every namespaced resource in it (Background propagation), keep the status conditions
(NamespaceDeletionDiscoveryFailure, NamespaceDeletionGroupVersionParsingFailure,
NamespaceDeletionContentFailure, NamespaceContentRemaining,
NamespaceFinalizersRemaining) up to date with upstream's reasons and messages, and once
nothing is left call ``namespaces/finalize`` without ``kubernetes``; the API removes the
namespace when no finalizer remains.

Graceful pods: upstream deletes pods with their default grace period and waits for the
kubelet to remove them (PodGC steps in only for pods on vanished nodes). mockkube does
the same, then acts as the kubelet of last resort: a pod still present once its own
deletion deadline (``metadata.deletionTimestamp``, i.e. now + grace) has passed is
force-deleted (grace 0), unless finalizers hold it. A kubelet simulator finishes the
graceful deletion first when there is one; without one, a namespace with a bound pod is
gone after the pod's grace period, never stuck. Objects held by finalizers keep the
namespace terminating until the finalizers are removed (as upstream).

Event-driven: changes to any object in a terminating namespace requeue that namespace;
graceful-deletion deadlines are timed with ``server.clock``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Hashable

from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta
from mockkube.machinery.registry import ResourceType

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.namespace")

FINALIZER = "kubernetes"

CONDITION_TYPES = (
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
)
OK_REASONS = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": (
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentRemoved", "All content successfully removed"),
}


def deletion_conditions(remaining: dict[str, int], finalizers: dict[str, int], failures: list[str]) -> list[dict]:
    """The failing conditions for one pass (type, status True, reason, message), upstream wording.

    ``remaining`` maps ``resource.group`` to a count, ``finalizers`` a finalizer to a count,
    ``failures`` holds delete error messages.
    """
    out = []
    if failures:
        out.append(
            {
                "type": "NamespaceDeletionContentFailure",
                "status": "True",
                "reason": "ContentDeletionFailed",
                "message": f"Failed to delete all resource types, {len(failures)} remaining: "
                + ", ".join(sorted(failures)),
            }
        )
    rem = sorted(f"{gr} has {n} resource instances" for gr, n in remaining.items() if n)
    if rem:
        out.append(
            {
                "type": "NamespaceContentRemaining",
                "status": "True",
                "reason": "SomeResourcesRemain",
                "message": "Some resources are remaining: " + ", ".join(rem),
            }
        )
    fins = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items() if n)
    if fins:
        out.append(
            {
                "type": "NamespaceFinalizersRemaining",
                "status": "True",
                "reason": "SomeFinalizerRemain",
                "message": "Some finalizers are remaining: " + ", ".join(fins),
            }
        )
    return out


def merge_conditions(current: list[dict], failing: list[dict], now: str) -> list[dict] | None:
    """Apply one pass's conditions to the status (all five types, OK variants for the
    rest); None when nothing changed. lastTransitionTime moves only on a status flip."""
    out = [dict(c) for c in current or []]
    changed = False
    for typ in CONDITION_TYPES:
        new = next((c for c in failing if c["type"] == typ), None)
        if new is None:
            reason, msg = OK_REASONS[typ]
            new = {"type": typ, "status": "False", "reason": reason, "message": msg}
        old = next((c for c in out if c.get("type") == typ), None)
        if old is None:
            out.append({**new, "lastTransitionTime": now})
            changed = True
        elif (old.get("status"), old.get("reason"), old.get("message")) != (
            new["status"],
            new["reason"],
            new["message"],
        ):
            if old.get("status") != new["status"]:
                old["lastTransitionTime"] = now
            old.update(status=new["status"], reason=new["reason"], message=new["message"])
            changed = True
    return out if changed else None


class NamespaceController(Controller):
    name = "namespace-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.store = server.store
        self.ns_rt = self.client.rt("namespaces")
        self.content: list[ResourceType] = []
        seen: set[str] = set()
        for rt in server.registry.all():
            if rt.namespaced and "delete" in rt.verbs and rt.storage_key not in seen:
                seen.add(rt.storage_key)
                self.content.append(rt)
        ns_inf = Informer(self.store, self.ns_rt)
        ns_inf.add_handler(self._on_namespace)
        self.informers.append(ns_inf)
        for rt in self.content:
            inf = Informer(self.store, rt)
            inf.add_handler(self._on_content)
            self.informers.append(inf)
        self.follow_types(server.registry, self._new_type)

    def _new_type(self, rt: ResourceType) -> Informer | None:
        """A custom resource served from now on is namespace content too."""
        if not rt.namespaced or "delete" not in rt.verbs:
            return None
        self.content = [c for c in self.content if c.storage_key != rt.storage_key] + [rt]
        inf = Informer(self.store, rt)
        inf.add_handler(self._on_content)
        return inf

    def _on_namespace(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ != "DELETED" and obj["metadata"].get("deletionTimestamp"):
            self.queue.add(obj["metadata"]["name"])

    def _on_content(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "ADDED":
            return
        ns = obj["metadata"].get("namespace", "")
        nso = self.client.get(self.ns_rt, "", ns)
        if nso is not None and nso["metadata"].get("deletionTimestamp"):
            self.queue.add(ns)

    def reconcile(self, key: Hashable) -> None:
        name = str(key)
        ns = self.client.get(self.ns_rt, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        if (ns.get("status") or {}).get("phase") != "Terminating":
            new = clone(ns)
            new.setdefault("status", {})["phase"] = "Terminating"
            ns = self._write_status(new)
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or []):
            return
        now = self.server.clock()
        wait, failed = self.delete_content(ns, now)
        ns = self.client.get(self.ns_rt, "", name)
        if ns is None:
            return
        if failed:
            self.queue.add_rate_limited(name)  # as upstream: retry errors with backoff
        elif wait is None:
            self.finalize(ns)
        elif wait > 0:
            self.queue.add_after(name, wait)

    def delete_content(self, ns: dict, now: float) -> tuple[float | None, bool]:
        """One deletion pass; returns (wait, failed): wait is None when the namespace is
        empty, else the seconds until a graceful deadline passes (0: wait for events,
        e.g. finalizers); failed when some delete was refused."""
        name = ns["metadata"]["name"]
        failures: list[str] = []
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        wait: float | None = None
        for rt in self.content:
            for obj in list(self.client.list(rt, name)):
                m = obj["metadata"]
                try:
                    if not m.get("deletionTimestamp"):
                        self.client.delete(rt, name, m["name"], {"propagationPolicy": "Background"})
                    elif not m.get("finalizers") and meta.parse_time(m["deletionTimestamp"]) <= now:
                        # graceful deletion over and nobody finished it: the kubelet of last resort
                        self.client.delete(rt, name, m["name"], {"gracePeriodSeconds": 0})
                except errors.APIError as e:
                    if e.code != 404:
                        failures.append(e.message)
            left = self.client.list(rt, name)
            if not left:
                continue
            remaining[f"{rt.plural}.{rt.group}"] = len(left)
            for obj in left:
                m = obj["metadata"]
                for f in m.get("finalizers") or []:
                    finalizers[f] = finalizers.get(f, 0) + 1
                wait = wait or 0.0
                if not m.get("finalizers") and m.get("deletionTimestamp"):
                    left_s = max(meta.parse_time(m["deletionTimestamp"]) - now, 0) + 0.05
                    wait = left_s if wait == 0 else min(wait, left_s)
        self._set_conditions(ns, deletion_conditions(remaining, finalizers, failures))
        return wait, bool(failures)

    def _set_conditions(self, ns: dict, failing: list[dict]) -> None:
        conds = merge_conditions(
            (ns.get("status") or {}).get("conditions") or [], failing, meta.rfc3339(self.server.clock())
        )
        if conds is None:
            return
        cur = self.client.get(self.ns_rt, "", ns["metadata"]["name"])
        if cur is None:
            return
        new = clone(cur)
        new.setdefault("status", {})["conditions"] = conds
        self._write_status(new)

    def _write_status(self, new: dict) -> dict:
        return self.client.update_status(self.ns_rt, new)

    def finalize(self, ns: dict) -> None:
        new = clone(ns)
        fins = sorted({f for f in (new.get("spec") or {}).get("finalizers") or [] if f != FINALIZER})
        new.setdefault("spec", {})["finalizers"] = fins
        try:
            self.client.finalize_namespace(ns["metadata"]["name"], new)
        except errors.APIError as e:
            if e.code != 404:
                raise


async def start(server: "Server") -> list:
    c = NamespaceController(server)
    await c.start()
    return [c]
