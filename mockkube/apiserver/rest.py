"""The generic registry: one create/update/patch/delete/list path for every resource.

Modelled on kube-apiserver's ``registry/generic/registry/store.go``: the verb logic is
shared and resource differences live in each ``Strategy``. HTTP handlers and the
in-process client both come through here, so controllers write exactly as clients do.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from mockkube.apiserver.admission.matching import Attributes
from mockkube.machinery import errors, meta, validation
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import requestcontext as identity
from mockkube.machinery.registry import Registry, ResourceType
from mockkube.storage.cache import Entry
from mockkube.storage.sharedlog import CacheBehind
from mockkube.storage.store import Store

log = logging.getLogger("mockkube.rest")

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}

# kube-apiserver's NamespaceLifecycle admission refuses to delete these
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")

# metadata fields a client never sets directly
_SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink")


@dataclass
class WriteOptions:
    """Per-request options of a write (query parameters and DeleteOptions)."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"  # Strict, Warn, Ignore
    force: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListResult:
    entries: list[Entry]
    rv: int
    continue_token: str = ""
    remaining: int | None = None


_deep = meta.clone


def _serialized(fn: Callable) -> Callable:
    """One write at a time across threads: a verb's read-check-write (strategy, admission,
    managedFields, the rv check) is atomic, as it was when everything shared one loop."""

    @functools.wraps(fn)
    def wrapper(self: "Resources", *args: Any, **kwargs: Any) -> Any:
        store = self.store
        if not store.shared:
            with store.lock:
                return fn(self, *args, **kwargs)
        if store.lock._is_owned():  # a verb inside a verb: the outer one retries
            return fn(self, *args, **kwargs)
        # PostgreSQL, where other API servers write too: the verb runs on this server's cache;
        # when the database finds the object changed meanwhile (CacheBehind), or the verb
        # fails on what may be stale (404, 409) and catching up from the shared log brings
        # something new, it runs again on what is stored now, as GuaranteedUpdate retries
        with store.lock:
            for attempt in range(_SHARED_ATTEMPTS):
                last = attempt == _SHARED_ATTEMPTS - 1
                try:
                    return fn(self, *args, **kwargs)
                except CacheBehind as e:
                    if last:
                        raise e.error from None
                    store.sync()
                except errors.APIError as e:
                    if last or e.code not in (404, 409) or not store.sync():
                        raise
            raise AssertionError("unreachable")

    return wrapper


_SHARED_ATTEMPTS = 5


class Resources:
    """Verbs over the Store with strategies, admission, validation and field management."""

    def __init__(self, store: Store, registry: Registry, clock: Callable[[], float] = meta.wall_clock) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        self._ns_rt = registry.get("", "v1", "namespaces")
        from mockkube.config.features import FeatureGates

        self.feature_gates = FeatureGates()  # the server's (--feature-gates): what strategies drop
        self.after_commit: list[Callable[[ResourceType, str, dict], None]] = []
        # validating admission on create (ResourceQuota): fn(rt, obj, name shown in errors, dry_run)
        self.admission: list[Callable[[ResourceType, dict, str, bool], None]] = []
        # the generic validating admission chain, for every resource and verb (policies, webhooks):
        # fn(attributes, warnings) raises to deny
        from mockkube.apiserver.admission.validating import ValidatingPolicies
        from mockkube.apiserver.admission.webhooks import Webhooks

        self.authorize: Callable[[dict, dict], tuple[bool, str]] | None = None  # the server's, for CEL
        self.webhooks = Webhooks(self)  # admission webhooks; the server sets its service map
        self.validating: list[Callable[[Attributes, list[str]], None]] = [
            ValidatingPolicies(self).validate,
            self.webhooks.validate,
        ]
        # the generic mutating admission chain: objects with active() (anything configured?) and
        # mutate(attributes, warnings) -> the new object or None
        from mockkube.apiserver.admission.mutating import MutatingPolicies

        self.mutating: list[Any] = [MutatingPolicies(self), self.webhooks]  # upstream's plugin order

    # -- helpers ---------------------------------------------------------------
    def now(self) -> str:
        return meta.rfc3339(self.clock())

    def _check_namespace(self, rt: ResourceType, ns: str, creating: bool, name: str = "") -> None:
        if not rt.namespaced:
            return
        if not ns:
            raise errors.bad_request("the server could not find the requested resource")
        entry = self.store.get(self._ns_rt, "", ns)
        if entry is None:
            raise errors.not_found("namespaces", "", ns)
        if creating and entry.obj.get("metadata", {}).get("deletionTimestamp"):
            raise errors.forbidden(
                rt.plural,
                rt.group,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
            )

    def _check_type(self, rt: ResourceType, obj: Any, kind: str | None = None, version: str | None = None) -> None:
        """The body must be an object of this resource's kind and apiVersion (when given)."""
        if not isinstance(obj, dict):
            raise errors.bad_request("the object provided is not a JSON object")
        want_kind = kind or rt.kind
        want_av = version or rt.api_version
        k = obj.get("kind")
        av = obj.get("apiVersion")
        for fname, value in (("apiVersion", av), ("kind", k)):
            if value is not None and not isinstance(value, str):
                raise errors.bad_request(
                    f'{want_kind} in version "{want_av.rpartition("/")[2]}" cannot be '
                    f"handled as a {want_kind}: json: cannot unmarshal "
                    f"{validation.json_kind(value)} into Go struct field {want_kind}.{fname} of type string"
                )
        if obj.get("metadata", {}) is None:
            obj["metadata"] = {}
        if av and av != want_av:
            raise errors.bad_request(
                f"the API version in the data ({av}) does not match the expected API version ({want_av})"
            )
        if k and k != want_kind:
            raise errors.bad_request(f"the kind in the data ({k}) does not match the expected kind ({want_kind})")
        m = obj.get("metadata")
        if m is not None and not isinstance(m, dict):
            raise errors.bad_request(
                f'{want_kind} in version "{want_av.rpartition("/")[2]}" cannot be handled as a '
                f"{want_kind}: json: cannot unmarshal {type(m).__name__} into Go struct field "
                f"{want_kind}.metadata of type v1.ObjectMeta"
            )

    def _structure(
        self, rt: ResourceType, obj: dict, opts: WriteOptions, kind: str | None = None, version: str | None = None
    ) -> None:
        """Schema check of a decoded body: type errors are 400, unknown fields per fieldValidation."""
        from mockkube.machinery import schema

        own = getattr(rt.strategy, "structure", None) if kind is None else None
        if own is not None:  # a custom resource: prune what its schema does not specify
            unknown = own(obj)
            if unknown and opts.field_validation == "Strict":
                raise validation.decode_error(rt.kind, rt.version, unknown)
            if unknown and opts.field_validation == "Warn":
                opts.warnings.extend(validation.unknown_field_warnings(unknown))
            return
        k = kind or rt.kind
        group = rt.group if kind is None else (version or "").rpartition("/")[0]
        v = rt.version if version is None else (version or "").rpartition("/")[2]
        root = schema.for_type(rt) if kind is None else schema.for_kind(group, v, k)
        if root is None:
            return
        strict = opts.field_validation == "Strict"
        res = validation.check_structure(obj, root, canonicalize=True, prune=not strict)
        if res.type_errors:
            raise validation.decode_error(k, v, res.type_errors)
        if res.unknown_fields:
            if strict:
                raise validation.decode_error(k, v, ["strict decoding error: " + ", ".join(res.unknown_fields)])
            if opts.field_validation == "Warn":
                opts.warnings.extend(validation.unknown_field_warnings(res.unknown_fields))

    def check_body(
        self, rt: ResourceType, obj: dict, opts: WriteOptions, kind: str | None = None, version: str | None = None
    ) -> None:
        """The decode check of a body that is answered rather than stored (reviews,
        TokenRequest): 400 on type errors, unknown fields per fieldValidation."""
        self._structure(rt, obj, opts, kind, version)

    def _validate(self, rt: ResourceType, obj: dict, errs: list[fe.FieldError]) -> None:
        if errs:
            raise errors.invalid(rt.kind, rt.group, obj.get("metadata", {}).get("name", ""), errs)

    def _namespace_errors(self, rt: ResourceType, obj: dict, subresource: str) -> list[fe.FieldError]:
        """Rules that depend on the containing namespace (e.g. DRA admin access)."""
        if not rt.namespaced:
            return []
        entry = self.store.get(self._ns_rt, "", obj["metadata"].get("namespace", ""))
        return rt.strategy.namespace_errors(obj, entry.obj if entry else None, subresource)

    def _meta_errors(self, rt: ResourceType, obj: dict, old: dict | None) -> list[fe.FieldError]:
        from mockkube.machinery import names

        errs = names.validate_object_meta(
            obj.get("metadata", {}),
            rt.namespaced,
            fe.Path("metadata"),
            rt.name_validator or names.name_is_dns_subdomain,
        )
        if old is not None:
            errs += names.validate_object_meta_update(
                obj.get("metadata", {}), old.get("metadata", {}), fe.Path("metadata")
            )
        return errs

    def _managed(
        self,
        rt: ResourceType,
        old: dict | None,
        new: dict,
        opts: WriteOptions,
        subresource: str,
        api_version: str | None = None,
    ) -> None:
        if not opts.field_manager:
            return
        from mockkube.machinery import apply, schema

        stored = getattr(rt.strategy, "storage_api_version", None)
        if (
            stored
            and stored != rt.api_version
            and new.get("apiVersion") == stored
            and not getattr(rt.strategy, "same_field_paths", False)
        ):
            # a built-in resource written through another version (autoscaling/v1): fields are
            # tracked on the stored form, as the stored version's (unless both versions have
            # the same field paths, as resource.k8s.io's, whose differences are all inside
            # atomic lists: then as the version written, as upstream records them)
            group, _, version = stored.rpartition("/")
            srt = self.registry.get(group, version, rt.plural)
            if srt is not None:
                rt, api_version = srt, stored
        root = schema.for_type(rt)
        if root is None:
            return
        try:
            mf = apply.update_managed_fields(
                old,
                new,
                opts.field_manager,
                api_version or rt.api_version,
                subresource,
                root,
                self.now(),
                reset_fields=_reset_fields(rt, subresource),
            )
        except Exception:  # upstream's UpdateNoErrors: tracking never fails a write; keep what was there
            log.warning("managedFields not updated for %s %s", rt.plural, new["metadata"].get("name"), exc_info=True)
            mf = (old or {}).get("metadata", {}).get("managedFields") or []
        if mf:
            new["metadata"]["managedFields"] = mf
        else:
            new["metadata"].pop("managedFields", None)

    @contextlib.contextmanager
    def unlocked(self):
        """Let other writers and lists run while this write waits on something slow (an
        admission webhook). The write's own commit still checks the resourceVersion it read,
        so a concurrent change of the same object makes it a conflict, never a lost update."""
        lock = self.store.lock
        if not lock._is_owned():
            yield
            return
        state = lock._release_save()
        try:
            yield
        finally:
            lock._acquire_restore(state)

    def _admit_mutating(
        self,
        rt: ResourceType,
        operation: str,
        obj: dict,
        old: dict | None,
        name: str,
        subresource: str,
        dry_run: bool,
        warnings: list[str],
        options: dict | None,
    ) -> dict:
        """Run the mutating admission chain (after defaulting, before validation); returns the
        object to go on with."""
        steps = [m for m in self.mutating if m.active()]
        if not steps:
            return obj
        a = self._attributes(rt, operation, obj, old, name, subresource, dry_run, options)
        for step in steps:
            new = step.mutate(a, warnings)
            if new is not None:
                a.obj = new
        if a.obj is not obj:  # as upstream's dispatchers: the result decodes as its kind and is defaulted
            self._structure(rt, a.obj, WriteOptions())
            rt.strategy.default(a.obj, self.now())
        return a.obj

    def _attributes(
        self,
        rt: ResourceType,
        operation: str,
        obj: dict | None,
        old: dict | None,
        name: str,
        subresource: str,
        dry_run: bool,
        options: dict | None,
    ) -> Attributes:
        target = obj if obj is not None else old
        ns = (target or {}).get("metadata", {}).get("namespace", "") if rt.namespaced else ""
        ns_obj = None
        if ns:
            e = self.store.get(self._ns_rt, "", ns)
            ns_obj = e.obj if e else None
        return Attributes(
            operation,
            rt.group,
            rt.version,
            rt.kind,
            rt.plural,
            subresource,
            ns,
            name,
            obj,
            old,
            rt.namespaced,
            identity.current_user(),
            dry_run,
            options,
            ns_obj,
            self.authorize,
        )

    def _admit_validating(
        self,
        rt: ResourceType,
        operation: str,
        obj: dict | None,
        old: dict | None,
        name: str,
        subresource: str,
        dry_run: bool,
        warnings: list[str],
        options: dict | None = None,
    ) -> None:
        """Run the validating admission chain (after schema and strategy validation, before
        quota and the write), as kube-apiserver's validating admission plugins run."""
        steps = [fn for fn in self.validating if _active(fn)]
        if not steps:
            return
        a = self._attributes(rt, operation, obj, old, name, subresource, dry_run, options)
        for fn in steps:
            fn(a, warnings)

    # -- reads -----------------------------------------------------------------
    def get(self, rt: ResourceType, ns: str, name: str) -> Entry:
        self.store.sync()  # another API server's writes first (PostgreSQL)
        return self.store.must_get(rt, ns, name)

    @_serialized  # a list is one consistent snapshot at list_rv, even while another thread writes
    def list(
        self,
        rt: ResourceType,
        ns: str | None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
    ) -> ListResult:
        pred = self.predicate(rt, label_selector, field_selector)
        after = None
        if resource_version != "0" and not continue_token:
            self.store.sync()  # a consistent list sees other API servers' writes (PostgreSQL)
        list_rv = self.store.rv
        if continue_token:
            try:
                tok = json.loads(base64.urlsafe_b64decode(continue_token.encode() + b"==="))
                after = (tok["ns"], tok["name"])
                list_rv = int(tok["rv"])
            except Exception:
                raise errors.bad_request("continue key is not valid: illegal base64 data")
            if list_rv < self.store.oldest_rv(rt) - 1 and list_rv < self.store.rv - 100_000:
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter."
                )
        elif resource_version and resource_version != "0":
            want = parse_resource_version(resource_version)
            if want > self.store.rv:
                raise errors.too_large_rv(want, self.store.rv)
        cache = self.store.cache(rt)
        namespace = ns if rt.namespaced else None
        keys = None
        if pred.indexed_field and cache.indexed(pred.indexed_field[0]):
            keys = cache.keys_with(pred.indexed_field[0], pred.indexed_field[1], namespace)
            if after is not None:
                keys = [k for k in keys if k > after]
        else:
            keys = cache.keys_from(namespace, after)
        out: list[Entry] = []
        token = ""
        remaining = None
        entries = cache.entries
        match = pred.fn
        for i, k in enumerate(keys):
            e = entries[k]
            if match is not None and not match(e.obj):
                continue
            if limit and len(out) >= limit:
                last = out[-1].key
                token = (
                    base64.urlsafe_b64encode(json.dumps({"rv": list_rv, "ns": last[0], "name": last[1]}).encode())
                    .decode()
                    .rstrip("=")
                )
                if match is None:
                    remaining = len(keys) - i
                break
            out.append(e)
        return ListResult(out, list_rv, token, remaining)

    def predicate(self, rt: ResourceType, label_selector: str, field_selector: str) -> "Predicate":
        from mockkube.machinery import selectors

        ls = selectors.parse_label_selector(label_selector) if label_selector else None
        fs = selectors.parse_field_selector(field_selector) if field_selector else None
        indexed = None
        if fs is not None:
            for f, op, v in fs.requirements:
                if f not in ("metadata.name", "metadata.namespace") and f not in rt.selectable_fields:
                    allowed = ", ".join(
                        json.dumps(x) for x in ["metadata.name", "metadata.namespace", *rt.selectable_fields]
                    )
                    raise errors.bad_request(f'"{f}" is not a known field selector: only {allowed}')
                if op == "=" and f in rt.selectable_fields and (indexed is None or not rt.indexes(indexed[0])):
                    indexed = (f, v)  # an indexed field first
        if ls is None and fs is None:
            return Predicate(None, None)
        ls_empty = ls is None or ls.empty

        def fn(obj: dict) -> bool:
            if not ls_empty and not ls.matches(obj.get("metadata", {}).get("labels")):
                return False
            if fs is not None:
                for f, op, v in fs.requirements:
                    val = rt.field_value(obj, f) or ""
                    if (val == v) != (op == "="):
                        return False
            return True

        return Predicate(fn, indexed)

    def _drop_disabled(self, rt: ResourceType, new: dict, old: dict | None, subresource: str) -> None:
        """The fields of switched-off features, dropped as upstream's strategies drop them
        (a strategy's ``drop_disabled``; kept on update where the old object uses them)."""
        drop = getattr(rt.strategy, "drop_disabled", None)
        if drop is not None:
            drop(new, old, self.feature_gates, subresource)

    # -- create ----------------------------------------------------------------
    @_serialized
    def create(
        self,
        rt: ResourceType,
        ns: str,
        obj: Any,
        opts: WriteOptions | None = None,
        decoded: bool = True,
        owned: bool = False,
    ) -> Entry:
        """``owned``: ``obj`` is the caller's to give away (a decoded request body)."""
        opts = opts or WriteOptions()
        self._check_type(rt, obj)
        obj = obj if owned else _deep(obj)
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        m = obj.setdefault("metadata", {})
        if not isinstance(m, dict):
            raise errors.bad_request("metadata must be an object")
        if rt.namespaced:
            body_ns = m.get("namespace")
            if body_ns and ns and body_ns != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            m["namespace"] = ns or body_ns or ""
        else:
            m.pop("namespace", None)
        self._structure(rt, obj, opts)
        self._check_namespace(rt, m.get("namespace", ""), creating=True, name=m.get("name", ""))
        for k in _SYSTEM_META:
            m.pop(k, None)
        m.pop("resourceVersion", None)
        shown = m.get("name") or m.get("generateName") or ""  # as admission errors name it
        requested_name = m.get("name") or ""  # request.name: empty when the server generates it
        if not m.get("name") and m.get("generateName"):
            m["name"] = meta.generate_name(m["generateName"])
            for _ in range(8):
                if self.store.get(rt, m.get("namespace", ""), m["name"]) is None:
                    break
                m["name"] = meta.generate_name(m["generateName"])
        m["uid"] = meta.new_uid()
        m["creationTimestamp"] = self.now()
        if getattr(rt.strategy, "tracks_generation", False):
            m["generation"] = 1
        rt.strategy.default(obj, self.now())
        generated, m["name"] = m.get("name"), shown  # mutating admission names the object as the request did
        try:
            rt.strategy.admit(obj, None, self)
        finally:
            if generated is None:
                obj["metadata"].pop("name", None)
            else:
                obj["metadata"]["name"] = generated
        obj = self._admit_mutating(
            rt,
            "CREATE",
            obj,
            None,
            requested_name,
            "",
            bool(opts.dry_run),
            opts.warnings,
            {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        )
        m = obj["metadata"]
        rt.strategy.prepare_create(obj)
        self._drop_disabled(rt, obj, None, "")
        self._validate(
            rt, obj, self._meta_errors(rt, obj, None) + rt.strategy.validate(obj) + self._namespace_errors(rt, obj, "")
        )
        if not m.get("managedFields"):
            m.pop("managedFields", None)
            self._managed(rt, None, obj, opts, "")
        self._admit_validating(
            rt,
            "CREATE",
            obj,
            None,
            requested_name,
            "",
            bool(opts.dry_run),
            opts.warnings,
            {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        )
        for admit in self.admission:
            admit(rt, obj, shown, bool(opts.dry_run))
        if opts.dry_run:
            if self.store.get(rt, m.get("namespace", ""), m["name"]) is not None:
                raise errors.already_exists(rt.plural, rt.group, m["name"])
            return Entry(obj, b"", 0)
        entry = self.store.create(rt, obj)
        rt.strategy.after_create(entry.obj)
        self._notify(rt, "create", entry.obj)
        return entry

    def _notify(self, rt: ResourceType, verb: str, obj: dict) -> None:
        for fn in self.after_commit:
            fn(rt, verb, obj)

    # -- update ----------------------------------------------------------------
    @_serialized
    def update(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        obj: Any,
        opts: WriteOptions | None = None,
        subresource: str = "",
        managed_done: bool = False,
        check_structure: bool = True,
        owned: bool = False,
    ) -> Entry:
        """PUT semantics (also the tail of every patch). ``owned``: ``obj`` is the caller's to
        give away (a decoded request body, a patch result), so it is changed in place rather
        than copied."""
        opts = opts or WriteOptions()
        self._check_type(rt, obj)
        old_entry = self.store.must_get(rt, ns, name)
        old = old_entry.obj
        new = obj if owned else _deep(obj)
        new["apiVersion"] = rt.api_version
        new["kind"] = rt.kind
        m = new.setdefault("metadata", {})
        if m.get("name", "") != name:  # checkName: an update must name its object
            raise errors.bad_request(
                f"the name of the object ({m.get('name', '')}) does not match the name on the URL ({name})"
            )
        if rt.namespaced:
            if m.get("namespace") and m["namespace"] != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            m["namespace"] = ns
        if check_structure:
            self._structure(rt, new, opts)
        rv = m.get("resourceVersion")
        if rv not in (None, ""):
            try:
                if int(rv) != old_entry.rv:
                    raise errors.stale(rt.plural, rt.group, name)
            except ValueError:
                raise errors.invalid(
                    rt.kind,
                    rt.group,
                    name,
                    [fe.invalid("metadata.resourceVersion", rv, "must be specified for an update")],
                )
        uid = m.get("uid")
        if uid and uid != old["metadata"].get("uid"):
            raise errors.conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old['metadata'].get('uid')}",
            )
        om = old["metadata"]
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            if k in om:
                m[k] = om[k]
            else:
                m.pop(k, None)
        m["resourceVersion"] = om.get("resourceVersion")
        if subresource == "status":
            rt.strategy.prepare_status_update(new, old)
        elif subresource == "resize":
            rt.strategy.prepare_resize_update(new, old)
        elif subresource:  # another subresource written as the object (certificatesigningrequests/approval)
            getattr(rt.strategy, f"prepare_{subresource}_update")(new, old)
        else:
            rt.strategy.default(new, self.now())
            rt.strategy.admit(new, old, self)
            rt.strategy.prepare_update(new, old)
        self._drop_disabled(rt, new, old, subresource)
        if not subresource:
            changed = getattr(rt.strategy, "generation_changed", meta.spec_changed)
            if getattr(rt.strategy, "tracks_generation", False) and changed(new, old):
                m["generation"] = om.get("generation", 0) + 1
        stamp = getattr(rt.strategy, "stamp_update", None)
        if stamp is not None:
            stamp(new, old, self.now(), subresource)
        mutated = self._admit_mutating(
            rt,
            "UPDATE",
            new,
            old,
            name,
            subresource,
            bool(opts.dry_run),
            opts.warnings,
            {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"},
        )
        if mutated is not new:
            new, m = mutated, mutated["metadata"]
        if om.get("deletionTimestamp"):
            # a terminating object may only lose finalizers, never gain them
            added = set(m.get("finalizers") or []) - set(om.get("finalizers") or [])
            if added:
                raise errors.invalid(
                    rt.kind,
                    rt.group,
                    name,
                    [
                        fe.forbidden(
                            "metadata.finalizers",
                            f"no new finalizers can be added if the object is being deleted, "
                            f"found new finalizers {json.dumps(sorted(added))}",
                        )
                    ],
                )
        if subresource == "status":
            errs = (
                self._meta_errors(rt, new, old)
                + rt.strategy.validate_status_update(new, old)
                + self._namespace_errors(rt, new, "status")
            )
        elif subresource == "resize":
            errs = self._meta_errors(rt, new, old) + rt.strategy.validate_resize_update(new, old)
        elif subresource:
            errs = self._meta_errors(rt, new, old) + getattr(rt.strategy, f"validate_{subresource}_update")(new, old)
        else:
            errs = self._meta_errors(rt, new, old) + rt.strategy.validate_update(new, old)
        self._validate(rt, new, errs)
        if new != old or opts.dry_run:
            self._admit_validating(
                rt,
                "UPDATE",
                new,
                old,
                name,
                subresource,
                bool(opts.dry_run),
                opts.warnings,
                {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"},
            )
        if not managed_done:
            if m.get("managedFields") == om.get("managedFields") or "managedFields" not in m:
                m["managedFields"] = om.get("managedFields")
                if m["managedFields"] is None:
                    del m["managedFields"]
                self._managed(rt, old, new, opts, subresource)
            elif not m.get("managedFields"):
                m.pop("managedFields", None)
        if new == old:
            return old_entry  # a no-op write does not bump the resourceVersion
        if opts.dry_run:
            return Entry(new, b"", old_entry.rv)
        if (
            om.get("deletionTimestamp")
            and not m.get("finalizers")
            and not m.get("deletionGracePeriodSeconds")
            and not rt.strategy.delays_deletion(new)
        ):
            entry = self.store.delete(rt, ns, name, expect_rv=old_entry.rv)
            self._notify(rt, "delete", entry.obj)
            return entry
        entry = self.store.update(rt, new, old_entry.rv)
        self._notify(rt, "update", entry.obj)
        return entry

    # -- patch -----------------------------------------------------------------
    @_serialized
    def patch(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        patch_type: str,
        body: Any,
        opts: WriteOptions | None = None,
        subresource: str = "",
    ) -> tuple[Entry, bool]:
        """Apply a patch; returns (entry, created) — only apply patches may create."""
        from mockkube.machinery import patch as jpatch
        from mockkube.machinery import schema, strategic

        opts = opts or WriteOptions()
        if patch_type == "strategic" and rt.schema is not None:  # custom resources have no patch strategies
            raise errors.unsupported_media_type(
                "application/strategic-merge-patch+json", [k for k, v in PATCH_TYPES.items() if v != "strategic"]
            )
        old_entry = self.store.get(rt, ns, name)
        root = schema.for_type(rt)
        if patch_type == "apply":
            return self._apply(rt, ns, name, body, opts, subresource, old_entry, root)
        if old_entry is None:
            raise errors.not_found(rt.plural, rt.group, name)
        old = _as_version(rt, old_entry.obj)
        if patch_type == "json":
            new = jpatch.apply_json_patch(old, body)
        elif patch_type == "merge":
            new = jpatch.apply_merge_patch(old, body)
        elif patch_type == "strategic":
            if not isinstance(body, dict):
                raise errors.bad_request("strategic merge patch must be a JSON object")
            new = strategic.apply_strategic_merge_patch(old, body, root)
        else:
            raise errors.unsupported_media_type(patch_type, PATCH_TYPES)
        if not isinstance(new, dict):
            raise errors.bad_request("the patched object is not a JSON object")
        nm = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
        new.setdefault("metadata", nm)
        # a patch that does not set resourceVersion applies to the current object
        if nm.get("resourceVersion") in (None, "") or nm.get("resourceVersion") == old["metadata"].get(
            "resourceVersion"
        ):
            nm["resourceVersion"] = old["metadata"].get("resourceVersion")
        return self.update(rt, ns, name, new, opts, subresource, owned=True), False  # patches return new objects

    def _apply(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        body: Any,
        opts: WriteOptions,
        subresource: str,
        old_entry: Entry | None,
        root: Any,
    ) -> tuple[Entry, bool]:
        from mockkube.machinery import apply

        if not opts.field_manager:
            raise errors.invalid(
                "PatchOptions", "meta.k8s.io", "", [fe.required("fieldManager", "is required for apply patch")]
            )
        if not isinstance(body, dict):
            raise errors.bad_request("apply patch must be a YAML or JSON object")
        self._check_type(rt, body)
        if not body.get("apiVersion") or not body.get("kind"):
            missing = "apiVersion" if not body.get("apiVersion") else "kind"
            raise errors.bad_request(f"{missing} must be set in an apply patch")
        bm = body.get("metadata") or {}
        if bm.get("name") and bm["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({bm['name']}) does not match the name on the URL ({name})"
            )
        self._structure(rt, body, opts)
        live = _as_version(rt, old_entry.obj) if old_entry else None
        if live is None:
            self._check_namespace(rt, ns, creating=True, name=name)
            merged = apply.server_side_apply(
                None,
                body,
                opts.field_manager,
                opts.force,
                rt.api_version,
                subresource,
                root,
                self.now(),
                reset_fields=_reset_fields(rt, subresource),
            )
            merged["metadata"]["name"] = name
            if rt.namespaced:
                merged["metadata"]["namespace"] = ns
            mf = merged["metadata"].get("managedFields")
            entry = self.create(rt, ns, merged, WriteOptions(opts.dry_run, "", "Ignore", warnings=opts.warnings))
            if mf and not opts.dry_run and entry.obj["metadata"].get("managedFields") != mf:
                fixed = _deep(entry.obj)
                fixed["metadata"]["managedFields"] = mf
                entry = self.store.update(rt, fixed, entry.rv)
            elif opts.dry_run:
                entry.obj["metadata"]["managedFields"] = mf
            return entry, True
        merged = apply.server_side_apply(
            live,
            body,
            opts.field_manager,
            opts.force,
            rt.api_version,
            subresource,
            root,
            self.now(),
            reset_fields=_reset_fields(rt, subresource),
        )
        merged["metadata"]["resourceVersion"] = live["metadata"].get("resourceVersion")
        return self.update(rt, ns, name, merged, opts, subresource, managed_done=True, check_structure=False), False

    # -- delete ----------------------------------------------------------------
    @_serialized
    def delete(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        options: dict | None = None,
        dry_run: bool = False,
        warnings: list[str] | None = None,
    ) -> tuple[Entry, bool]:
        """Delete or start deleting; returns (entry, gone) — gone is False while finalizers remain."""
        options = options or {}
        entry = self.store.must_get(rt, ns, name)
        obj = entry.obj
        if rt is self._ns_rt and name in _UNDELETABLE_NAMESPACES:
            raise errors.forbidden(rt.plural, rt.group, name, "this namespace may not be deleted")
        why = rt.strategy.can_delete(obj)
        if why:
            raise errors.forbidden(rt.plural, rt.group, name, why)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != obj["metadata"].get("uid"):
            raise errors.conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                f"{obj['metadata'].get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != obj["metadata"].get("resourceVersion"):
            raise errors.conflict(
                rt.plural,
                rt.group,
                name,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {obj['metadata'].get('resourceVersion')}",
            )
        delete_options = {
            "kind": "DeleteOptions",
            "apiVersion": "meta.k8s.io/v1",
            **{k: v for k, v in options.items() if k not in ("kind", "apiVersion")},
        }
        # mutating admission sees a DELETE too (no object to change: webhooks are told, patches have no target)
        self._admit_mutating(
            rt, "DELETE", None, obj, name, "", dry_run, warnings if warnings is not None else [], delete_options
        )
        self._admit_validating(
            rt,
            "DELETE",
            None,
            obj,
            name,
            "",
            dry_run,
            warnings if warnings is not None else [],
            {
                "kind": "DeleteOptions",
                "apiVersion": "meta.k8s.io/v1",
                **{k: v for k, v in options.items() if k not in ("kind", "apiVersion")},
            },
        )
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise errors.invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                [fe.not_supported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"])],
            )
        new = _deep(obj)
        m = new["metadata"]
        fins = list(m.get("finalizers") or [])
        if policy == "Foreground" and "foregroundDeletion" not in fins:
            fins.append("foregroundDeletion")
        if policy == "Orphan" and "orphan" not in fins:
            fins.append("orphan")
        grace = rt.strategy.grace_period(obj, options.get("gracePeriodSeconds"))
        waits = rt.strategy.delays_deletion(obj)
        if not fins and not grace and not waits:
            if dry_run:
                return entry, True
            gone = self.store.delete(rt, ns, name, expect_rv=entry.rv)
            self._notify(rt, "delete", gone.obj)
            return gone, True
        if m.get("deletionTimestamp"):
            changed = fins != list(m.get("finalizers") or [])
            cur = m.get("deletionGracePeriodSeconds")
            if grace is not None and cur is not None and grace < cur:
                m["deletionGracePeriodSeconds"] = grace
                m["deletionTimestamp"] = meta.rfc3339(self.clock() + grace)
                changed = True
            if grace == 0 and not fins and not waits:
                if dry_run:
                    return entry, True
                gone = self.store.delete(rt, ns, name, expect_rv=entry.rv)
                self._notify(rt, "delete", gone.obj)
                return gone, True
            if not changed or dry_run:
                return entry, False
        else:
            m["deletionTimestamp"] = meta.rfc3339(self.clock() + (grace or 0))
            m["deletionGracePeriodSeconds"] = grace or 0
            rt.strategy.on_deleting(new)
        if fins:
            m["finalizers"] = fins
        if dry_run:
            return Entry(new, b"", entry.rv), False
        upd = self.store.update(rt, new, entry.rv)
        self._notify(rt, "update", upd.obj)
        return upd, False

    @_serialized
    def bind(self, ns: str, name: str, node: str, dry_run: bool = False) -> Entry:
        """pods/binding: assign a pod to a node once (the scheduler's Bind)."""
        rt = self.registry.get("", "v1", "pods")
        entry = self.store.must_get(rt, ns, name)
        pod = entry.obj
        if pod["metadata"].get("deletionTimestamp"):
            # a plain error in the update func: assignPod makes it a Conflict on pods/binding
            raise errors.conflict(
                "pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host"
            )
        current = pod.get("spec", {}).get("nodeName")
        if current:
            raise errors.conflict("pods/binding", "", name, f'pod {name} is already assigned to node "{current}"')
        # copies of what changes only (the stored pod is read-only, so the rest is shared)
        new = dict(
            pod, metadata=dict(pod["metadata"]), spec=dict(pod.get("spec") or {}), status=dict(pod.get("status") or {})
        )
        new["spec"]["nodeName"] = node
        conds = [c for c in new["status"].get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": self.now()}
        )
        new["status"]["conditions"] = conds
        if dry_run:
            return Entry(new, b"", entry.rv)
        upd = self.store.update(rt, new, entry.rv)
        self._notify(rt, "update", upd.obj)
        return upd

    @_serialized
    def finalize_namespace(self, name: str, new: dict) -> Entry:
        """namespaces/finalize: the only way spec.finalizers change; an emptied,
        terminating namespace is removed."""
        rt = self._ns_rt
        entry = self.store.must_get(rt, "", name)
        m = new["metadata"]
        if m.get("deletionTimestamp") and not new.get("spec", {}).get("finalizers") and not m.get("finalizers"):
            gone = self.store.delete(rt, "", name, expect_rv=entry.rv)
            self._notify(rt, "delete", gone.obj)
            return gone
        upd = self.store.update(rt, new, entry.rv)
        self._notify(rt, "update", upd.obj)
        return upd

    @_serialized
    def finalize_delete(self, rt: ResourceType, ns: str, name: str) -> Entry | None:
        """Remove an object whose deletion may complete (no finalizers, grace over or waived)."""
        entry = self.store.get(rt, ns, name)
        if entry is None:
            return None
        gone = self.store.delete(rt, ns, name, expect_rv=entry.rv)
        self._notify(rt, "delete", gone.obj)
        return gone


def _active(step: Callable) -> bool:
    """Whether a validating admission step has anything to check: a step that is the method
    of an object with ``active()`` (policies, webhooks) asks it, any other always runs."""
    active = getattr(getattr(step, "__self__", None), "active", None)
    return active() if callable(active) else True


def _as_version(rt: ResourceType, obj: dict) -> dict:
    """A stored object as the version it is written through (a custom resource's conversion,
    or a built-in resource's own converter: autoscaling/v1 HorizontalPodAutoscalers)."""
    if obj.get("apiVersion") != rt.api_version and (rt.schema is not None or _converter(rt) is not None):
        from mockkube.machinery.customresource import convert

        return convert(obj, rt.api_version, getattr(rt.strategy, "converter", None))
    return obj


def _converter(rt: ResourceType) -> Any:
    return getattr(rt.strategy, "converter", None)


def _reset_fields(rt: ResourceType, subresource: str) -> tuple[str, ...]:
    """Fields a write through this endpoint never owns (upstream GetResetFields)."""
    if not rt.has_status:
        return ()
    if subresource == "status":
        extra = ("metadata.deletionTimestamp", "metadata.ownerReferences") if rt.kind == "Pod" else ()
        return ("spec", *extra)
    if subresource == "approval":
        return ("spec", "status.certificate")
    return ("status",)


@dataclass
class Predicate:
    fn: Callable[[dict], bool] | None
    indexed_field: tuple[str, str] | None


def parse_resource_version(rv: str) -> int:
    """The storage versioner's strconv.ParseUint(rv, 10, 64): digits only, within uint64
    (Python's int() would take " 1", "+1", "1_0" or a number past 2**64 and answer a 504
    Too large resource version for what upstream calls invalid)."""
    if not rv or not rv.isascii() or not rv.isdigit() or int(rv) >= 2**64:
        raise errors.bad_request(f"invalid resource version: {rv}")
    return int(rv)
