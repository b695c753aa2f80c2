"""apiextensions.k8s.io/v1 CustomResourceDefinitions and the serving of their resources.

The CRD itself is an ordinary resource (defaults, validation with upstream's messages,
status conditions). ``CRDServing`` is wired into the generic registry's ``after_commit``:
when a CRD write commits it adds, replaces or removes the custom resource types in the
server's registry at once (upstream's naming and establishing controllers and
crdHandler, in one step, so a CRD is served within the same request); a deleted CRD
first deletes its objects (the ``customresourcecleanup`` finalizer) and then stops
being served. ``load_stored`` re-adds stored CRDs' types before the store fills its
caches, so custom resources survive a restart.
"""

from __future__ import annotations

import logging
from typing import Any

from mockkube.apiserver.resources.apiextensions_validation import validate_crd
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.meta import clone
from mockkube.machinery.registry import REGISTRY, Registry, ResourceType, Subresource

log = logging.getLogger("mockkube.crd")

FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
STORAGE_KEY = "apiextensions.k8s.io/customresourcedefinitions"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"


def _condition(ctype: str, status: str, reason: str, message: str, now: str) -> dict:
    return {"type": ctype, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}


def set_condition(status: dict, cond: dict) -> None:
    """Replace the condition of the same type, keeping lastTransitionTime when status holds."""
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            if c.get("status") == cond["status"]:
                cond = dict(cond, lastTransitionTime=c.get("lastTransitionTime", cond["lastTransitionTime"]))
            conds[i] = cond
            return
    conds.append(cond)


def _accepted_names(names: dict) -> dict:
    return {k: v for k, v in names.items() if v not in (None, "", [])}


class CRDStrategy(SpecStatusStrategy):
    tracks_generation = True
    reset_status_on_create = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict) and names.get("kind"):
            names.setdefault("singular", names["kind"].lower())
            names.setdefault("listKind", names["kind"] + "List")
        spec.setdefault("conversion", {"strategy": "None"})
        if isinstance(spec.get("conversion"), dict) and spec["conversion"].get("strategy") == "Webhook":
            wh = spec["conversion"].get("webhook") or {}
            svc = (wh.get("clientConfig") or {}).get("service")
            if isinstance(svc, dict):
                svc.setdefault("port", 443)

    def initial_status(self, obj: dict) -> dict | None:
        versions = (obj.get("spec") or {}).get("versions") or []
        stored = [v.get("name") for v in versions if v.get("storage")]
        return {"acceptedNames": {"kind": "", "plural": ""}, "conditions": [], "storedVersions": stored[:1]}

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        fins = obj["metadata"].setdefault("finalizers", [])
        if FINALIZER not in fins:
            fins.append(FINALIZER)

    def prepare_update(self, new: dict, old: dict) -> None:
        super().prepare_update(new, old)
        stored = list((new.get("status") or {}).get("storedVersions") or [])
        for v in (new.get("spec") or {}).get("versions") or []:
            if v.get("storage") and v.get("name") not in stored:
                stored.append(v.get("name"))
        if "status" in new:
            new["status"]["storedVersions"] = stored

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_crd(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = validate_crd(new, old)
        ospec, nspec = old.get("spec") or {}, new.get("spec") or {}
        if ospec.get("scope") != nspec.get("scope"):
            errs.append(fe.invalid("spec.scope", nspec.get("scope"), "field is immutable"))
        if ospec.get("group") != nspec.get("group"):
            errs.append(fe.invalid("spec.group", nspec.get("group"), "field is immutable"))
        stored = (new.get("status") or {}).get("storedVersions") or []
        names = {v.get("name") for v in nspec.get("versions") or []}
        for i, sv in enumerate(stored):
            if sv not in names:
                errs.append(fe.invalid("status.storedVersions[%d]" % i, sv, "must appear in spec.versions"))
        return errs


def desired_status(res: Any, crd: dict) -> dict:
    """Upstream's naming and establishing controllers in one step: accept the names unless
    another CRD of the group uses them; a CRD is Established once its names are accepted."""
    now = res.now()
    status = clone(crd.get("status") or {})
    names = (crd.get("spec") or {}).get("names") or {}
    conflict = _name_conflict(res, crd)
    if conflict:
        set_condition(status, _condition("NamesAccepted", "False", "NameConflict", conflict, now))
        if not any(
            c.get("type") == "Established" and c.get("status") == "True" for c in status.get("conditions") or []
        ):
            set_condition(status, _condition("Established", "False", "NotAccepted", "not all names are accepted", now))
    else:
        status["acceptedNames"] = _accepted_names(names)
        set_condition(status, _condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now))
        set_condition(
            status,
            _condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now),
        )
    return status


def _name_conflict(res: Any, crd: dict) -> str:
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    names = spec.get("names") or {}
    me = crd["metadata"].get("name")
    rt = res.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    for other in res.store.objects(rt):
        if other["metadata"].get("name") == me or (other.get("spec") or {}).get("group") != group:
            continue
        acc = (other.get("status") or {}).get("acceptedNames") or {}
        if names.get("plural") and names.get("plural") == acc.get("plural"):
            return f'"{names["plural"]}" is already in use'
        if names.get("singular") and names.get("singular") in (acc.get("singular"), acc.get("plural")):
            return f'"{names["singular"]}" is already in use'
        if names.get("kind") and names.get("kind") == acc.get("kind"):
            return f'"{names["kind"]}" is already in use'
        if names.get("listKind") and names.get("listKind") == acc.get("listKind"):
            return f'"{names["listKind"]}" is already in use'
        for s in names.get("shortNames") or []:
            if s in (acc.get("shortNames") or []):
                return f'"{s}" is already in use'
    return ""


crds = REGISTRY.add(
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=(Subresource("status", "CustomResourceDefinition"),),
        strategy=CRDStrategy(),
        table="default",
    )
)


# -- serving -----------------------------------------------------------------------------------


def types_of(crd: dict) -> list[ResourceType]:
    """The types an established CRD serves (none before it is established)."""
    from mockkube.apiserver.resources.customresources import served_types
    from mockkube.machinery.customresource import is_established

    if not is_established(crd):
        return []
    try:
        return served_types(crd)
    except Exception:  # a CRD the strategy let through but that cannot be served: log, do not fail writes
        log.exception("cannot serve %s", crd["metadata"].get("name"))
        return []


def load_stored(registry: Registry, stored: list[dict]) -> None:
    """Serve the types of CRDs read from the database (before the store loads its caches)."""
    for crd in stored:
        if crd["metadata"].get("deletionTimestamp") and not _finalizer_pending(crd):
            continue
        for rt in types_of(crd):
            registry.add(rt)


def _finalizer_pending(crd: dict) -> bool:
    return FINALIZER in (crd["metadata"].get("finalizers") or [])


class CRDServing:
    """Keeps the server's registry in step with committed CRD writes (``after_commit``)."""

    def __init__(self, resources: Any) -> None:
        self.res = resources
        self.reg: Registry = resources.registry
        self.crd_rt = self.reg.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        self._served: dict[str, list[ResourceType]] = {}
        for crd in resources.store.objects(self.crd_rt):
            name = crd["metadata"]["name"]
            spec = crd.get("spec") or {}
            self._served[name] = [
                rt
                for rt in self.reg.all()
                if rt.group == spec.get("group")
                and rt.plural == (spec.get("names") or {}).get("plural")
                and rt.schema is not None
            ]
        resources.after_commit.append(self.on_commit)
        for crd in resources.store.objects(self.crd_rt):
            if crd["metadata"].get("deletionTimestamp"):
                self._cleanup(crd)

    def after_reset(self, baseline: Any) -> None:
        """Serve what the stored CRDs define after ``mockkube.storage.reset.restore`` wrote the store
        back (it writes around the generic registry): types of CRDs gone are removed, those
        of CRDs back are added and their objects restored too."""
        from mockkube.storage.reset import restore

        stored = {c["metadata"]["name"]: c for c in self.res.store.objects(self.crd_rt)}
        for name in list(self._served):
            if name not in stored:
                for rt in self._served.pop(name):
                    self.reg.remove(rt)
        added = False
        for name, crd in stored.items():
            want = types_of(crd)
            was = {(r.group, r.version, r.plural) for r in self._served.get(name) or []}
            keep = {(r.group, r.version, r.plural) for r in want}
            for rt in self._served.get(name) or []:
                if (rt.group, rt.version, rt.plural) not in keep:
                    self.reg.remove(rt)
            for rt in want:
                self.reg.add(rt)  # the definition may have changed back too
            self._served[name] = want
            added = added or bool(keep - was)
        if added and baseline is not None:
            restore(self.res.store, baseline)  # the objects of types served again

    def on_commit(self, rt: ResourceType, verb: str, obj: dict) -> None:
        if rt is self.crd_rt:
            self._crd_changed(verb, obj)
        elif rt.schema is not None and verb == "delete":
            self._maybe_finish(rt)

    def _crd_changed(self, verb: str, crd: dict) -> None:
        name = crd["metadata"]["name"]
        old = self._served.pop(name, [])
        if verb == "delete":
            for rt in old:
                self.reg.remove(rt)
            self._sync_apiservices()
            return
        if crd["metadata"].get("deletionTimestamp"):
            self._served[name] = old
            for rt in old:
                rt.strategy.terminating = True
            self._cleanup(crd)
            return
        status = desired_status(self.res, crd)
        if status != crd.get("status"):
            self._served[name] = old
            new_obj = clone(crd)
            new_obj["status"] = status
            self.res.update(self.crd_rt, "", name, new_obj, subresource="status")  # commits: served from there
            return
        self._serve(name, old, types_of(crd))
        self._sync_apiservices()

    def _serve(self, name: str, old: list[ResourceType], new: list[ResourceType]) -> None:
        keep = {(r.group, r.version, r.plural) for r in new}
        for rt in old:
            if (rt.group, rt.version, rt.plural) not in keep:
                self.reg.remove(rt)
        for rt in new:
            self.reg.add(rt)
        self._served[name] = new

    def on_remote(self, key: str, typ: str, crd: dict) -> None:
        """A CRD change another API server committed (PostgreSQL replicas): serve what it
        defines here too. That server writes the CRD's status and APIServices; this one
        only follows."""
        if key != self.crd_rt.storage_key:
            return
        name = crd["metadata"]["name"]
        old = self._served.pop(name, [])
        if typ == "DELETED":
            for rt in old:
                self.reg.remove(rt)
        elif crd["metadata"].get("deletionTimestamp"):
            self._served[name] = old
            for rt in old:
                rt.strategy.terminating = True
        else:
            self._serve(name, old, types_of(crd))

    def _sync_apiservices(self) -> None:
        """kube-aggregator's crdRegistrationController: one automanaged Local APIService per
        custom resource group-version (group priority 1000, version priority 100)."""
        api_rt = self.reg.get("apiregistration.k8s.io", "v1", "apiservices")
        if api_rt is None:
            return
        wanted = {(rt.group, rt.version) for rts in self._served.values() for rt in rts}
        builtin = {(rt.group, rt.version) for rt in self.reg.all() if rt.schema is None}
        for obj in list(self.res.store.objects(api_rt)):
            labels = obj["metadata"].get("labels") or {}
            spec = obj.get("spec") or {}
            gv = (spec.get("group", ""), spec.get("version", ""))
            if labels.get(AUTOMANAGED) == "true" and gv not in wanted and gv not in builtin:
                try:
                    self.res.delete(api_rt, "", obj["metadata"]["name"])
                except errors.APIError:
                    pass
            wanted.discard(gv)
        for group, version in sorted(wanted):
            try:
                self.res.create(
                    api_rt,
                    "",
                    {
                        "apiVersion": "apiregistration.k8s.io/v1",
                        "kind": "APIService",
                        "metadata": {"name": f"{version}.{group}", "labels": {AUTOMANAGED: "true"}},
                        "spec": {
                            "group": group,
                            "version": version,
                            "groupPriorityMinimum": 1000,
                            "versionPriority": 100,
                        },
                    },
                )
                entry = self.res.store.get(api_rt, "", f"{version}.{group}")
                if entry is not None:
                    obj = clone(entry.obj)
                    obj["status"] = {
                        "conditions": [
                            {
                                "type": "Available",
                                "status": "True",
                                "lastTransitionTime": self.res.now(),
                                "reason": "Local",
                                "message": "Local APIServices are always available",
                            }
                        ]
                    }
                    self.res.update(api_rt, "", obj["metadata"]["name"], obj, subresource="status")
            except errors.APIError:
                log.exception("could not register the APIService of %s/%s", group, version)

    def _cleanup(self, crd: dict) -> None:
        """Delete every object of a terminating CRD, then drop its finalizer."""
        name = crd["metadata"]["name"]
        rts = self._served.get(name) or []
        if rts:
            rt = rts[0]
            for obj in list(self.res.store.objects(rt)):
                m = obj["metadata"]
                if m.get("deletionTimestamp"):
                    continue
                try:
                    self.res.delete(rt, m.get("namespace", ""), m["name"])
                except errors.APIError:
                    pass
        self._maybe_finish_crd(name)
        entry = self.res.store.get(self.crd_rt, "", name)
        if entry is None or not _finalizer_pending(entry.obj):
            return
        # objects with finalizers still wait: say so, as upstream's finalizer controller does
        status = clone(entry.obj.get("status") or {})
        set_condition(
            status,
            _condition(
                "Terminating",
                "True",
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
                self.res.now(),
            ),
        )
        if status != entry.obj.get("status"):
            new = clone(entry.obj)
            new["status"] = status
            self.res.update(self.crd_rt, "", name, new, subresource="status")

    def _maybe_finish(self, rt: ResourceType) -> None:
        for name, rts in list(self._served.items()):
            if rt in rts:
                self._maybe_finish_crd(name)

    def _maybe_finish_crd(self, name: str) -> None:
        entry = self.res.store.get(self.crd_rt, "", name)
        if entry is None or not entry.obj["metadata"].get("deletionTimestamp"):
            return
        rts = self._served.get(name) or []
        if rts and any(True for _ in self.res.store.entries(rts[0])):
            return
        crd = clone(entry.obj)
        fins = [f for f in crd["metadata"].get("finalizers") or [] if f != FINALIZER]
        if len(fins) == len(crd["metadata"].get("finalizers") or []):
            return
        crd["metadata"]["finalizers"] = fins
        try:
            self.res.update(self.crd_rt, "", name, crd)
        except errors.APIError:
            log.exception("could not remove the cleanup finalizer of %s", name)
