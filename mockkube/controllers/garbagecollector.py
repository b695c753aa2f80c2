"""The garbage collector: ownerReferences, cascading deletion and orphaning.

Semantics follow kube-controller-manager's ``pkg/controller/garbagecollector``:

- An owner reference is *dangling* when no object of that kind and name exists (looked
  up in the dependent's namespace, or cluster-wide for a cluster-scoped owner kind) or
  the object found has another ``uid``. It is *waiting* when the owner is being deleted
  with the ``foregroundDeletion`` finalizer, and *solid* otherwise.
- A dependent with at least one solid owner survives; its dangling and waiting
  references are removed. A dependent with no solid owner is deleted (Background, or
  Foreground when a waiting owner needs its own dependents gone first).
- An owner being deleted with ``orphan`` has the reference stripped from every
  dependent, then loses the finalizer. With ``foregroundDeletion``, all its dependents
  are deleted and the finalizer is removed once no dependent with
  ``blockOwnerDeletion: true`` is left.
- A reference to a kind this server does not serve, or a cluster-scoped dependent
  naming a namespaced owner kind, is unresolvable: upstream retries it forever, so such
  a dependent is never collected here either.

Event-driven: one informer per served storage key keeps an owner-uid -> dependents
index; only objects that may need action are queued.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Hashable

from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors
from mockkube.machinery.registry import ResourceType

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.gc")

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"

Key = tuple[str, str, str]  # (storage key, namespace, name)

# resources the garbage collector never watches (upstream's DefaultIgnoredResources): Events,
# of either API, are neither collected through their ownerReferences nor kept in the graph
# (five a pod, each an entry of the graph here until they were ignored as upstream does)
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events")})


def owner_refs(obj: dict | None) -> list[dict]:
    if not obj:
        return []
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [r for r in refs if isinstance(r, dict)]


def is_deleting_dependents(obj: dict | None) -> bool:
    """Being deleted in the foreground: dependents go first."""
    m = (obj or {}).get("metadata") or {}
    return bool(m.get("deletionTimestamp")) and FOREGROUND in (m.get("finalizers") or [])


def deletion_policy(obj: dict) -> str:
    """The propagation the GC uses for a dependent, from its own finalizers (as upstream)."""
    fins = obj["metadata"].get("finalizers") or []
    if ORPHAN in fins:
        return "Orphan"
    if FOREGROUND in fins:
        return "Foreground"
    return "Background"


class GarbageCollector(Controller):
    name = "garbage-collector"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.store = server.store
        self.types: dict[str, ResourceType] = {}
        ignored = {rt.storage_key for rt in server.registry.all() if (rt.group, rt.plural) in IGNORED}
        for rt in server.registry.all():
            if rt.storage_key not in ignored:
                self.types.setdefault(rt.storage_key, rt)
        self.dependents: dict[str, set[Key]] = {}  # owner uid -> dependent keys
        self.by_uid: dict[str, Key] = {}
        self._kinds: dict[tuple[str, str], ResourceType | None] = {}
        for skey, rt in self.types.items():
            inf = Informer(self.store, rt)
            inf.add_handler(self._handler(skey))
            self.informers.append(inf)
        self.follow_types(server.registry, self._new_type)

    def _new_type(self, rt: ResourceType) -> Informer | None:
        """Objects of a resource served from now on (custom resources) own and depend too."""
        self._kinds.clear()  # an owner kind may resolve now
        self.types[rt.storage_key] = rt
        inf = Informer(self.store, rt)
        inf.add_handler(self._handler(rt.storage_key))
        return inf

    # -- lookups ---------------------------------------------------------------
    def rt_for(self, api_version: str, kind: str) -> ResourceType | None:
        """Resolve an owner reference's kind by group and kind (any served version)."""
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        k = (group, kind)
        if k not in self._kinds:
            found = None
            for rt in self.server.registry.all():
                if rt.group == group and rt.kind == kind:
                    found = rt
                    break
            self._kinds[k] = found
        return self._kinds[k]

    def get(self, key: Key) -> dict | None:
        skey, ns, name = key
        return self.client.get(self.types[skey], ns, name)

    def owner_of(self, dependent: dict, ref: dict) -> tuple[str, dict | None]:
        """Classify one reference: ("unresolvable"|"dangling"|"waiting"|"solid", owner)."""
        rt = self.rt_for(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        if rt is None:
            return "unresolvable", None
        dep_ns = dependent["metadata"].get("namespace", "")
        if rt.namespaced and not dep_ns:
            return "unresolvable", None
        owner = self.client.get(rt, dep_ns if rt.namespaced else "", str(ref.get("name") or ""))
        if owner is None or owner["metadata"].get("uid") != ref.get("uid"):
            return "dangling", None
        if is_deleting_dependents(owner):
            return "waiting", owner
        return "solid", owner

    def _owner_key(self, uid: str) -> Key | None:
        return self.by_uid.get(uid)

    # -- events ----------------------------------------------------------------
    def _handler(self, skey: str):
        def handle(typ: str, obj: dict, prev: dict | None) -> None:
            self.on_event(skey, typ, obj, prev)

        return handle

    def on_event(self, skey: str, typ: str, obj: dict, prev: dict | None) -> None:
        m = obj["metadata"]
        key: Key = (skey, m.get("namespace", ""), m["name"])
        uid = m.get("uid", "")
        new_owners = {r.get("uid") for r in owner_refs(obj)} if typ != "DELETED" else set()
        old_owners = {r.get("uid") for r in owner_refs(prev)}
        if typ == "DELETED":
            old_owners |= {r.get("uid") for r in owner_refs(obj)}
        for o in old_owners - new_owners:
            deps = self.dependents.get(o)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self.dependents[o]
        for o in new_owners:
            self.dependents.setdefault(o, set()).add(key)

        if typ == "DELETED":
            if self.by_uid.get(uid) == key:
                del self.by_uid[uid]
            for dep in self.dependents.get(uid, ()):  # their owner is gone
                self.queue.add(dep)
            self._wake_owners(old_owners)
            return
        self.by_uid[uid] = key
        if m.get("deletionTimestamp"):
            fins = m.get("finalizers") or []
            if ORPHAN in fins or FOREGROUND in fins:
                self.queue.add(key)
            if FOREGROUND in fins:
                for dep in self.dependents.get(uid, ()):
                    self.queue.add(dep)
        elif new_owners and self._may_need_work(obj):
            self.queue.add(key)
        if prev is not None and owner_refs(prev) != owner_refs(obj):
            self._wake_owners(old_owners | new_owners)

    def _wake_owners(self, uids: set) -> None:
        """Owners in foreground deletion recheck whether they are still blocked."""
        for o in uids:
            k = self._owner_key(o)
            if k is not None and is_deleting_dependents(self.get(k)):
                self.queue.add(k)

    def _may_need_work(self, obj: dict) -> bool:
        return any(self.owner_of(obj, r)[0] in ("dangling", "waiting") for r in owner_refs(obj))

    # -- reconcile -------------------------------------------------------------
    def reconcile(self, key: Hashable) -> None:
        obj = self.get(key)
        if obj is None:
            return
        rt = self.types[key[0]]
        m = obj["metadata"]
        if m.get("deletionTimestamp"):
            fins = m.get("finalizers") or []
            if ORPHAN in fins:
                self.orphan_dependents(rt, obj)
            elif FOREGROUND in fins:
                self.delete_dependents(rt, obj)
            return
        refs = owner_refs(obj)
        if refs:
            self.attempt_to_delete(rt, obj, refs)

    def attempt_to_delete(self, rt: ResourceType, obj: dict, refs: list[dict]) -> None:
        kinds = {"solid": [], "dangling": [], "waiting": [], "unresolvable": []}
        for r in refs:
            kinds[self.owner_of(obj, r)[0]].append(r)
        m = obj["metadata"]
        if kinds["unresolvable"]:
            return  # upstream keeps retrying the REST mapping and never acts
        if kinds["solid"]:
            drop = {r.get("uid") for r in kinds["dangling"] + kinds["waiting"]}
            if drop:
                new = clone(obj)
                new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") not in drop]
                if not new["metadata"]["ownerReferences"]:
                    del new["metadata"]["ownerReferences"]
                self.client.update(rt, new)
            return
        if kinds["waiting"] and self.dependents.get(m.get("uid", "")):
            self._unblock_if_cyclic(rt, obj)
            policy = "Foreground"
        else:
            policy = deletion_policy(obj)
        log.debug("gc: deleting %s %s/%s (%s)", rt.plural, m.get("namespace", ""), m["name"], policy)
        self.client.delete(
            rt,
            m.get("namespace", ""),
            m["name"],
            {
                "propagationPolicy": policy,
                "preconditions": {"uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")},
            },
        )

    def _unblock_if_cyclic(self, rt: ResourceType, obj: dict) -> None:
        """A dependent that is itself deleting dependents could wait on us forever:
        make our references non-blocking first (upstream's cycle guard)."""
        for dk in self.dependents.get(obj["metadata"].get("uid", ""), ()):
            if is_deleting_dependents(self.get(dk)):
                new = clone(obj)
                for r in new["metadata"].get("ownerReferences") or []:
                    if r.get("blockOwnerDeletion"):
                        r["blockOwnerDeletion"] = False
                if new != obj:
                    self.client.update(rt, new)
                return

    def orphan_dependents(self, rt: ResourceType, owner: dict) -> None:
        uid = owner["metadata"].get("uid", "")
        for dk in sorted(self.dependents.get(uid, ())):
            dep = self.get(dk)
            if dep is None:
                continue
            refs = owner_refs(dep)
            keep = [r for r in refs if r.get("uid") != uid]
            if len(keep) == len(refs):
                continue
            new = clone(dep)
            if keep:
                new["metadata"]["ownerReferences"] = keep
            else:
                new["metadata"].pop("ownerReferences", None)
            self.client.update(self.types[dk[0]], new)
        self.remove_finalizer(rt, owner, ORPHAN)

    def delete_dependents(self, rt: ResourceType, owner: dict) -> None:
        uid = owner["metadata"].get("uid", "")
        blocking = []
        for dk in sorted(self.dependents.get(uid, ())):
            dep = self.get(dk)
            if dep is None:
                continue
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in owner_refs(dep)):
                blocking.append(dk)
                if not dep["metadata"].get("deletionTimestamp") or is_deleting_dependents(dep):
                    self.queue.add(dk)
        if not blocking:
            self.remove_finalizer(rt, owner, FOREGROUND)

    def remove_finalizer(self, rt: ResourceType, obj: dict, finalizer: str) -> None:
        new = clone(obj)
        fins = [f for f in new["metadata"].get("finalizers") or [] if f != finalizer]
        if fins:
            new["metadata"]["finalizers"] = fins
        else:
            new["metadata"].pop("finalizers", None)
        try:
            self.client.update(rt, new)
        except errors.APIError as e:
            if e.code != 404:
                raise


async def start(server: "Server") -> list:
    gc = GarbageCollector(server)
    await gc.start()
    return [gc]
