"""The resource registry: every served resource declared once.

A ``ResourceType`` carries what discovery, routing, storage and the generic verb path
need; per-resource behaviour lives in its ``Strategy`` (as in kube-apiserver's
``pkg/registry/*/strategy.go``). Adding a resource is one declaration in
``mockkube/apiserver/resources/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from mockkube.machinery.fielderrors import FieldError

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


class Strategy:
    """Per-resource hooks on the generic create/update/delete path.

    The defaults suit a plain object with no status subresource; resources override
    only what differs upstream.
    """

    tracks_generation = False  # metadata.generation starts at 1 and counts spec changes
    allow_create_on_update = False  # a PUT of a missing object creates it (leases, events)
    # the cache holds the object as JSON alone, decoded at each read: many objects that few
    # read as dicts (Events: five a pod, a 1 KB Event being 4.4 KB of dicts)
    held_as_json = False

    def default(self, obj: dict, now: str | None = None) -> None:
        """Fill defaulted fields (runs on every decoded write, like upstream defaulting);
        ``now`` (RFC 3339, from the server clock) stamps times such as taints' timeAdded."""

    def prepare_create(self, obj: dict) -> None:
        """Reset fields a client may not set on create (e.g. status where it is a subresource)."""

    def prepare_update(self, new: dict, old: dict) -> None:
        """Carry over fields the main resource may not change (e.g. status)."""

    def prepare_status_update(self, new: dict, old: dict) -> None:
        """For the status subresource: keep everything but status (and metadata labels etc.)."""

    def validate(self, obj: dict) -> list[FieldError]:
        return []

    def validate_update(self, new: dict, old: dict) -> list[FieldError]:
        return self.validate(new)

    def validate_status_update(self, new: dict, old: dict) -> list[FieldError]:
        return []

    def prepare_resize_update(self, new: dict, old: dict) -> None:
        """For pods/resize: keep everything but what an in-place resize may change."""

    def validate_resize_update(self, new: dict, old: dict) -> list[FieldError]:
        return []

    def namespace_errors(self, obj: dict, namespace: dict | None, subresource: str) -> list[FieldError]:
        """Validation that needs the containing namespace object (create, and status writes)."""
        return []

    def grace_period(self, obj: dict, requested: int | None) -> int | None:
        """Seconds of graceful deletion; None or 0 deletes at once (only pods wait upstream)."""
        return None

    def delays_deletion(self, obj: dict) -> bool:
        """True when a delete must wait for something beyond metadata.finalizers
        (a namespace's spec.finalizers)."""
        return False

    def on_deleting(self, obj: dict) -> None:
        """Mark an object whose deletion has started (a namespace turns Terminating)."""

    def admit(self, obj: dict, old: dict | None, res: "Any") -> None:
        """Admission that reads other objects (upstream admission plugins such as Priority
        and LimitRanger): mutate ``obj`` or raise an APIError. ``old`` is None on create;
        ``res`` is the generic registry (``mockkube.apiserver.rest.Resources``)."""

    def can_delete(self, obj: dict) -> str:
        """A non-empty reason forbids the delete (upstream's protected objects)."""
        return ""

    def after_create(self, obj: dict) -> None:
        """Hook after a committed create (e.g. a namespace's default ServiceAccount)."""


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str  # response kind, e.g. Pod for status, Scale for scale
    group: str = ""
    version: str = ""  # "" = same group/version as the parent
    verbs: tuple[str, ...] = ("get", "patch", "update")


@dataclass(eq=False)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    strategy: Strategy = field(default_factory=Strategy)
    # field selector name -> function(obj) -> str, beyond metadata.name/namespace
    selectable_fields: dict[str, Callable[[dict], str]] = field(default_factory=dict)
    # those the cache indexes (None: all); the others are matched object by object. Upstream's
    # watch cache indexes pods' spec.nodeName alone; an index costs a set per value (a pod's
    # IP, an Event's uid and resourceVersion) and a slot per object and field
    indexed_fields: tuple[str, ...] | None = None
    # the key this resource's objects are stored under (shared by events.k8s.io/core events)
    storage_key: str = ""
    verbs: tuple[str, ...] = VERBS
    # metadata.name rule (names.NameValidator); None: a DNS subdomain, as most kinds
    name_validator: Callable[[str, bool], list[str]] | None = None
    # a resource defined at run time (a CustomResourceDefinition's version) carries its own
    # schema (a ``mockkube.machinery.schema.Node``) and Table printer instead of upstream's
    schema: Any = None
    table: Any = None  # printer columns (list of dicts with jsonPath) or "default"; see api/tables_custom.py
    version_priority: int = 0  # lower sorts first in discovery (custom resources' version order)
    feature_gate: str = ""  # served only while this gate is on (mockkube.config.features)

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()
        if not self.storage_key:
            self.storage_key = f"{self.group or 'core'}/{self.plural}"

    def indexes(self, name: str) -> bool:
        return name in self.selectable_fields and (self.indexed_fields is None or name in self.indexed_fields)

    def indexed(self) -> dict[str, Callable[[dict], str]]:
        """The selectable fields the cache indexes."""
        if self.indexed_fields is None:
            return dict(self.selectable_fields)
        return {f: fn for f, fn in self.selectable_fields.items() if f in self.indexed_fields}

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def strategy_converts(self) -> bool:
        """A built-in resource served at a version other than the one it is stored at
        (autoscaling/v1 HorizontalPodAutoscalers): its strategy carries the converter."""
        return getattr(self.strategy, "converter", None) is not None

    @property
    def has_status(self) -> bool:
        return any(s.name == "status" for s in self.subresources)

    def subresource(self, name: str) -> Subresource | None:
        for s in self.subresources:
            if s.name == name:
                return s
        return None

    def field_value(self, obj: dict, fieldname: str) -> str | None:
        """The value of a selectable field, None if the field is not selectable."""
        meta = obj.get("metadata", {})
        if fieldname == "metadata.name":
            return meta.get("name", "")
        if fieldname == "metadata.namespace":
            return meta.get("namespace", "") if self.namespaced else ""
        fn = self.selectable_fields.get(fieldname)
        return fn(obj) if fn else None

    def __repr__(self) -> str:
        return f"ResourceType({self.api_version} {self.plural})"


class Registry:
    """All served resources, indexed the ways routing and clients look them up.

    The built-in resources are declared once in the process-wide ``REGISTRY``; each server
    serves a ``child()`` of it, to which resources defined at run time (custom resources)
    are added and from which they are removed, so one server's definitions never reach
    another's. Listeners hear of every change (the store makes room for a new resource).
    """

    def __init__(self) -> None:
        self._types: list[ResourceType] = []
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_gvk: dict[tuple[str, str, str], ResourceType] = {}
        self._listeners: list[Callable[[str, ResourceType], None]] = []
        self._changes = 0  # bumped by every add and remove: derived views are keyed on it
        self._gv_cache: tuple[int, dict[tuple[str, str], None]] = (-1, {})

    def child(self) -> Registry:
        """A registry serving everything this one serves now, changed independently."""
        out = Registry()
        for rt in self._types:
            out.add(rt)
        return out

    def subscribe(self, listener: Callable[[str, ResourceType], None]) -> None:
        """Call ``listener("added"|"removed", rt)`` after each later change."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[str, ResourceType], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def add(self, rt: ResourceType) -> ResourceType:
        """Serve ``rt``; a resource already served at the same group/version/plural is
        replaced (a custom resource whose definition changed)."""
        old = self._by_gvr.get((rt.group, rt.version, rt.plural))
        if old is not None:
            self._types.remove(old)
            self._by_gvk.pop((old.group, old.version, old.kind), None)
        self._types.append(rt)
        self._changes += 1
        self._by_gvr[(rt.group, rt.version, rt.plural)] = rt
        self._by_gvk[(rt.group, rt.version, rt.kind)] = rt
        for listener in list(self._listeners):
            listener("added", rt)
        return rt

    def remove(self, rt: ResourceType) -> None:
        """Stop serving ``rt`` (its stored objects are the caller's to delete)."""
        if self._by_gvr.get((rt.group, rt.version, rt.plural)) is not rt:
            return
        self._types.remove(rt)
        self._changes += 1
        del self._by_gvr[(rt.group, rt.version, rt.plural)]
        if self._by_gvk.get((rt.group, rt.version, rt.kind)) is rt:
            del self._by_gvk[(rt.group, rt.version, rt.kind)]
        for listener in list(self._listeners):
            listener("removed", rt)

    def all(self) -> list[ResourceType]:
        return list(self._types)

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return self._by_gvk.get((group, version, kind))

    def for_api_version(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        return self.by_kind(group, version, kind)

    def group_versions(self) -> list[tuple[str, str]]:
        return list(self._group_versions())

    def has_group_version(self, group: str, version: str) -> bool:
        """Whether any resource is served at ``group/version`` (asked on every /apis request)."""
        return (group, version) in self._group_versions()

    def _group_versions(self) -> dict[tuple[str, str], None]:
        """In first-served order; rebuilt after a type is added or removed."""
        changes, gvs = self._gv_cache
        if changes != self._changes:
            changes = self._changes  # read first: a change meanwhile makes the next call rebuild
            gvs = {}
            for rt in list(self._types):
                gvs.setdefault((rt.group, rt.version), None)
            self._gv_cache = (changes, gvs)
        return gvs

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for rt in self._types if rt.group == group and rt.version == version]

    def storage_keys(self) -> Iterable[str]:
        return sorted({rt.storage_key for rt in self._types})


REGISTRY = Registry()
