"""Field management and server-side apply, as kube-apiserver's fieldmanager + structured-merge-diff do it.

Two entry points, both pure (the caller passes ``now`` and persists the result):

* ``update_managed_fields``: for create / update / non-apply patch (operation ``Update``); the
  fields this write added or changed become the writer's, and leave every other manager.
* ``server_side_apply``: merge an applied configuration into the live object (operation
  ``Apply``), detect conflicts with other managers, prune what the applier dropped.

The walkers below (compare, merge, remove) follow ``sigs.k8s.io/structured-merge-diff/typed``;
the manager bookkeeping follows ``k8s.io/apimachinery/pkg/util/managedfields/internal`` (strip
meta, skip-non-applied, before-first-apply, cap at 10 update managers, last-applied migration).
Objects of different apiVersions are compared with one schema: there is no conversion.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

import orjson

from mockkube.machinery.errors import APIError, bad_request, internal
from mockkube.machinery.fieldset import (
    FieldSet,
    FieldSetError,
    Path,
    field_schema,
    fields_of,
    gojson,
    is_scalar_schema,
    item_schema,
    list_item_pe,
    list_shape,
    map_is_atomic,
    path_str,
)
from mockkube.machinery.schema import Node

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_UPDATE_MANAGERS = 10
_TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

# Fields no manager ever owns (upstream stripMetaManager; a plain, non-recursive difference).
STRIPPED = FieldSet(
    [
        (("f", "apiVersion"),),
        (("f", "kind"),),
        (("f", "metadata"),),
        *(
            (("f", "metadata"), ("f", n))
            for n in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    ]
)

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()


# -- compare -------------------------------------------------------------------------------


@dataclass
class Comparison:
    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def filtered(self, reset: FieldSet) -> "Comparison":
        if reset.empty():
            return self
        return Comparison(
            self.added.recursive_difference(reset),
            self.modified.recursive_difference(reset),
            self.removed.recursive_difference(reset),
        )


def compare(lhs: Any, rhs: Any, schema: Node | None, skip: frozenset = frozenset()) -> Comparison:
    """Fields ``rhs`` added, modified and removed relative to ``lhs`` (``TypedValue.Compare``).

    Fields at the paths in ``skip`` are not walked: for callers that drop them and everything
    under them from the result anyway (reset fields), e.g. ``spec`` on a status write."""
    acc: tuple[set, set, set, frozenset] = (set(), set(), set(), skip)
    _cmp(lhs, rhs, schema, (), acc)
    return Comparison(FieldSet(acc[0]), FieldSet(acc[1]), FieldSet(acc[2]))


# Go struct fields that are non-pointer structs: present (as {}) in a zero object, so a create
# does not "add" them. Upstream knows this from the Go types; our schema does not say.
_ZERO_PRESENT_FIELDS = {"metadata", "spec", "status"}
_ZERO_PRESENT_PAIRS = {
    ("DeploymentSpec", "template"),
    ("DeploymentSpec", "strategy"),
    ("ReplicaSetSpec", "template"),
    ("StatefulSetSpec", "template"),
    ("StatefulSetSpec", "updateStrategy"),
    ("DaemonSetSpec", "template"),
    ("DaemonSetSpec", "updateStrategy"),
    ("JobSpec", "template"),
    ("CronJobSpec", "jobTemplate"),
    ("Container", "resources"),
    ("EphemeralContainer", "resources"),
    ("PodTemplate", "template"),
    ("ResourceClaimSpec", "devices"),
    ("ResourceClaimTemplateSpec", "spec"),
}


def _zero_value(parent: Node | None, name: str) -> Any:
    """What a Go zero object serialises for field ``name``, or _MISSING if it omits it.

    Kept with the schema node (the answer depends on the schema only; compare only reads
    the value, so one ``{}`` serves every call)."""
    if parent is None or name not in parent.properties:
        return _MISSING
    return parent.derived(("zero", name), lambda: _zero_value_of(parent, name))


def _zero_value_of(parent: Node, name: str) -> Any:
    sub = parent.field(name)
    short = parent.name.rsplit(".", 1)[-1]
    struct = sub is not None and sub.is_object and bool(sub.properties)
    if sub is not None and sub.raw.get("default") == {}:
        return {}
    if struct and (name in _ZERO_PRESENT_FIELDS or (short, name) in _ZERO_PRESENT_PAIRS):
        return {}
    if name in parent.required:
        return {} if struct and not map_is_atomic(sub) else None
    return _MISSING


def _kind(v: Any, node: Node | None) -> str:
    if isinstance(v, dict):
        return "map"
    if isinstance(v, list):
        return "list"
    if v is None or v is _MISSING:
        if node is not None and node.type == "array":
            return "list"
        if node is None or node.is_object or node.type == "":
            return "map"
    return "scalar"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return a == b


def _same(a: Any, b: Any) -> bool:
    """``_equal`` for two values already known to be ``==``: equal compact JSON with sorted
    keys settles it at C speed (true/1 and 1.0/1 print differently); otherwise walk."""
    if isinstance(a, (dict, list)):
        try:
            if orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS):
                return True
        except TypeError:
            pass
    return _equal(a, b)


def _cmp(l: Any, r: Any, node: Node | None, path: Path, acc: tuple) -> None:
    if l is r or (type(l) is type(r) and l == r and _same(l, r)):
        return  # equal subtrees add, modify and remove nothing (the common case: skip the walk)
    added, modified, removed, skip = acc
    kl = _kind(l, node) if l is not _MISSING else None
    kr = _kind(r, node) if r is not _MISSING else None
    kind = kr or kl
    leaf = True
    if kl and kr and kl != kr:
        kind = "scalar"
    if kind == "map":
        lm = l if isinstance(l, dict) else None
        rm = r if isinstance(r, dict) else None
        if not (map_is_atomic(node) or is_scalar_schema(node) or (not lm and not rm)):
            leaf = False
            keys = list(lm or {}) + [k for k in (rm or {}) if k not in (lm or {})]
            for k in keys:
                lv = lm.get(k, _MISSING) if lm is not None else _MISSING
                rv = rm.get(k, _MISSING) if rm is not None else _MISSING
                if lv is _MISSING and lm is not None and rv is not _MISSING:
                    lv = _zero_value(node, k)
                elif rv is _MISSING and rm is not None and lv is not _MISSING:
                    rv = _zero_value(node, k)
                if lv is _MISSING and rv is _MISSING:
                    continue
                sub = path + (("f", k),)
                if sub in skip:
                    continue
                _cmp(lv, rv, field_schema(node, k), sub, acc)
    elif kind == "list":
        ll = l if isinstance(l, list) else None
        rl = r if isinstance(r, list) else None
        assoc, keys = list_shape(node)
        if assoc and (ll or rl):
            leaf = False
            _cmp_items(node, keys, ll or [], rl or [], path, acc)
    if leaf:
        if l is _MISSING:
            added.add(path)
        elif r is _MISSING:
            removed.add(path)
        elif not _equal(l, r):
            modified.add(path)
        return
    if l is _MISSING:
        added.add(path)
    elif r is _MISSING:
        removed.add(path)


def _group(node: Node | None, keys: list[str], items: list) -> tuple[list, dict]:
    order: list = []
    groups: dict = {}
    for item in items:
        pe = list_item_pe(node, keys, item)
        if pe not in groups:
            groups[pe] = []
            order.append(pe)
        groups[pe].append(item)
    return order, groups


def _cmp_items(node: Node | None, keys: list[str], ll: list, rl: list, path: Path, acc: tuple) -> None:
    added, modified, removed, _skip = acc
    lorder, lg = _group(node, keys, ll)
    rorder, rg = _group(node, keys, rl)
    elem = item_schema(node)
    for pe in lorder + [p for p in rorder if p not in lg]:
        lvals, rvals = lg.get(pe, []), rg.get(pe, [])
        sub = path + (pe,)
        if len(lvals) <= 1 and len(rvals) <= 1:
            _cmp(lvals[0] if lvals else _MISSING, rvals[0] if rvals else _MISSING, elem, sub, acc)
        elif len(lvals) >= 2 and len(rvals) >= 2:
            if not _equal(lvals, rvals):
                modified.add(sub)
        elif len(lvals) >= 2:
            if rvals:
                _cmp(_MISSING, rvals[0], elem, sub, acc)
            removed.add(sub)
        else:
            if lvals:
                _cmp(lvals[0], _MISSING, elem, sub, acc)
            added.add(sub)


# -- merge ---------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, schema: Node | None) -> Any:
    """``lhs.Merge(rhs)``: rhs wins at leaves; granular maps and associative lists merge."""
    out = _merge(lhs, rhs, schema)
    return None if out is _MISSING else out


def _merge(l: Any, r: Any, node: Node | None) -> Any:
    if r is _MISSING:
        return copy.deepcopy(l)
    if l is _MISSING:
        return copy.deepcopy(r)
    kl, kr = _kind(l, node), _kind(r, node)
    if kl != kr:
        return copy.deepcopy(r)
    if kr == "map":
        lm = l if isinstance(l, dict) else None
        rm = r if isinstance(r, dict) else None
        if map_is_atomic(node) or is_scalar_schema(node) or (not lm and not rm):
            return copy.deepcopy(r)
        out = {}
        for k in list(lm or {}) + [k for k in (rm or {}) if k not in (lm or {})]:
            v = _merge((lm or {}).get(k, _MISSING), (rm or {}).get(k, _MISSING), field_schema(node, k))
            if v is not _MISSING:
                out[k] = v
        return out if out else _MISSING
    if kr == "list":
        ll = l if isinstance(l, list) else None
        rl = r if isinstance(r, list) else None
        assoc, keys = list_shape(node)
        if not assoc or (not ll and not rl):
            return copy.deepcopy(r)
        out_list = _merge_items(node, keys, ll or [], rl or [])
        return out_list if out_list else _MISSING
    return copy.deepcopy(r)


def _merge_items(node: Node | None, keys: list[str], ll: list, rl: list) -> list:
    """Upstream's order-preserving associative merge: rhs order wins for shared items, lhs-only
    items stay where they were."""
    elem = item_schema(node)
    rpes: list = []
    robs: dict = {}
    for item in rl:
        pe = list_item_pe(node, keys, item)
        if pe in robs:
            raise FieldSetError(f"duplicate entries for key {path_str((pe,))}")
        robs[pe] = item
        rpes.append(pe)
    lpes: list = []
    lobs: dict = {}
    for item in ll:
        pe = list_item_pe(node, keys, item)
        lobs[pe] = None if pe in lobs else item  # duplicates merge as null
        lpes.append(pe)
    shared = [pe for pe in rpes if pe in lobs]
    next_shared = shared.pop(0) if shared else None
    merged_rhs: set = set()
    out: list = []

    def emit(v: Any) -> None:
        if v is not _MISSING:
            out.append(v)

    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged_rhs.add(pe)
                emit(_merge(lobs[pe], robs[pe], elem))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in robs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in robs:
                emit(_merge(ll[li], _MISSING, elem))
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < len(rpes):
            pe = rpes[ri]
            merged_rhs.add(pe)
            emit(_merge(lobs.get(pe, _MISSING), robs[pe], elem))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


# -- remove --------------------------------------------------------------------------------


def remove_items(value: Any, to_remove: FieldSet, schema: Node | None) -> Any:
    """``TypedValue.RemoveItems``: drop the listed fields and items (an emptied map/list → null)."""
    out = _remove(value, to_remove, schema)
    return None if out is _MISSING else out


def _remove(v: Any, rm: FieldSet, node: Node | None) -> Any:
    if isinstance(v, list):
        assoc, keys = list_shape(node)
        if not v or not assoc:
            return v
        elem = item_schema(node)
        items = []
        for item in v:
            pe = list_item_pe(node, keys, item)
            if (pe,) in rm:
                continue
            if rm.has_prefix(pe):
                item = _remove(item, rm.with_prefix(pe), elem)
                item = None if item is _MISSING else item
            items.append(item)
        return items if items else _MISSING
    if isinstance(v, dict):
        if not v or map_is_atomic(node) or is_scalar_schema(node):
            return v
        out = {}
        for k, child in v.items():
            pe = ("f", k)
            if (pe,) in rm:
                continue
            if rm.has_prefix(pe):
                child = _remove(child, rm.with_prefix(pe), field_schema(node, k))
                child = None if child is _MISSING else child
            out[k] = child
        return out if out else _MISSING
    return v


def _strip_new_nulls(obj: Any, live: Any) -> Any:
    """Drop map entries that became null through apply/prune (Go decoding drops them too)."""
    if isinstance(obj, dict):
        out = {}
        live_map = live if isinstance(live, dict) else {}
        for k, v in obj.items():
            if v is None and live_map.get(k, _MISSING) is not None:
                continue
            out[k] = _strip_new_nulls(v, live_map.get(k))
        return out
    if isinstance(obj, list):
        return [_strip_new_nulls(x, None) for x in obj]
    return obj


# -- managers ------------------------------------------------------------------------------

# A manager's identity, as upstream's BuildManagerIdentifier: Apply entries ignore apiVersion.
ManagerId = tuple  # (manager, operation, apiVersion or "", subresource)


@dataclass
class _Entry:
    fields: FieldSet
    api_version: str
    applied: bool
    time: str | None


def _manager_id(manager: str, operation: str, api_version: str, subresource: str) -> ManagerId:
    return (manager or "unknown", operation, "" if operation == "Apply" else api_version, subresource or "")


def decode_managed_fields(entries: list | None) -> dict[ManagerId, _Entry]:
    """Parse ``metadata.managedFields``; raise ValueError on an entry upstream would reject."""
    out: dict[ManagerId, _Entry] = {}
    for i, e in enumerate(entries or []):
        if not isinstance(e, dict):
            raise ValueError(f"managed fields entry {i} must be an object")
        op = e.get("operation")
        if op not in ("Apply", "Update"):
            raise ValueError("operation must be `Apply` or `Update`")
        if not e.get("apiVersion"):
            raise ValueError("apiVersion must not be empty")
        ft = e.get("fieldsType", "")
        if ft == "":
            raise ValueError(f"missing fieldsType in managed fields entry {i}")
        if ft != "FieldsV1":
            raise ValueError(f'invalid fieldsType "{ft}" in managed fields entry {i}')
        mid = _manager_id(e.get("manager", ""), op, e["apiVersion"], e.get("subresource", ""))
        out[mid] = _Entry(
            FieldSet.from_fields_v1(e.get("fieldsV1") or {}), e["apiVersion"], op == "Apply", e.get("time")
        )
    return out


def _epoch(t: str | None) -> float:
    if not t:
        return 0
    try:
        return datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() // 1
    except ValueError:
        return 0


def encode_managed_fields(managers: dict[ManagerId, _Entry]) -> list[dict]:
    """Entries in upstream's order: operation, time (seconds), manager, apiVersion, subresource."""
    out = []
    for (name, _op, _v, sub), e in managers.items():
        entry: dict = {"manager": name, "operation": "Apply" if e.applied else "Update", "apiVersion": e.api_version}
        if e.time:
            entry["time"] = e.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = e.fields.to_fields_v1()
        if sub:
            entry["subresource"] = sub
        out.append(entry)
    out.sort(
        key=lambda x: (x["operation"], _epoch(x.get("time")), x["manager"], x["apiVersion"], x.get("subresource", ""))
    )
    return out


def _print_manager(mid: ManagerId) -> str:
    name, op, api_version, sub = mid
    s = gojson(name)
    if sub:
        s += f" with subresource {gojson(sub)}"
    if op == "Update":
        s += f" using {api_version}"
    return s


def conflict_error(conflicts: dict[ManagerId, FieldSet]) -> APIError:
    """409 with upstream's message and ``FieldManagerConflict`` causes."""
    flat = [(mid, p) for mid in sorted(conflicts, key=_print_manager) for p in conflicts[mid]]
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {_print_manager(mid)}", "field": path_str(p)}
        for mid, p in flat
    ]
    if len(flat) == 1:
        mid, p = flat[0]
        msg = f"Apply failed with 1 conflict: conflict with {_print_manager(mid)}: {path_str(p)}"
    else:
        lines = []
        for mid in sorted(conflicts, key=_print_manager):
            lines.append(f"conflicts with {_print_manager(mid)}:")
            lines.extend(f"- {path_str(p)}" for p in conflicts[mid])
        msg = f"Apply failed with {len(flat)} conflicts: " + "\n".join(lines)
    return APIError(409, "Conflict", msg, {"causes": causes})


class _Conflicts(Exception):
    def __init__(self, conflicts: dict[ManagerId, FieldSet]) -> None:
        super().__init__("conflicts")
        self.conflicts = conflicts


def _update(
    old: Any, new: Any, schema: Node | None, managers: dict, workflow: ManagerId, force: bool, reset: FieldSet
) -> Comparison:
    """``Updater.update``: take changed fields away from other managers (or report conflicts)."""
    cmp = compare(old, new, schema, reset.paths).filtered(reset)
    changed = cmp.modified | cmp.added
    conflicts = {}
    for mid, e in managers.items():
        if mid == workflow:
            continue
        c = e.fields & changed
        if c:
            conflicts[mid] = c
    if conflicts and not force:
        raise _Conflicts(conflicts)
    for mid, e in list(managers.items()):
        if mid == workflow:
            continue
        e.fields = e.fields - conflicts.get(mid, FieldSet()) - cmp.removed
        if e.fields.empty():
            del managers[mid]
    return cmp


def _strip(managers: dict, mid: ManagerId) -> None:
    e = managers.get(mid)
    if e is not None:
        e.fields = e.fields - STRIPPED
        if e.fields.empty():
            del managers[mid]


def _cap_update_managers(managers: dict) -> None:
    """Fold the oldest Update managers into ``ancient-changes`` beyond 10 (capManagersManager)."""
    updaters = [mid for mid, e in managers.items() if not e.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (_epoch(managers[m].time), gojson(list(m))))
    first_by_version: dict[str, ManagerId] = {}
    length = len(updaters)
    for mid in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        e = managers[mid]
        bucket = ("ancient-changes", "Update", e.api_version, "")
        if e.api_version in first_by_version:
            if bucket not in managers:
                managers[bucket] = managers.pop(first_by_version[e.api_version])
            b = managers[bucket]
            managers[bucket] = _Entry(e.fields | b.fields, e.api_version, e.applied, e.time)
            del managers[mid]
            length -= 1
        else:
            first_by_version[e.api_version] = mid


def _without_managed_fields(obj: dict | None) -> dict:
    """A view of ``obj`` without metadata.managedFields (shallow: callers only read it)."""
    if not obj:
        return {}
    out = dict(obj)
    md = out.get("metadata")
    if isinstance(md, dict) and "managedFields" in md:
        out["metadata"] = {k: v for k, v in md.items() if k != "managedFields"}
    return out


def _reset_set(reset_fields: Iterable[str]) -> FieldSet:
    return FieldSet.of(*reset_fields) if reset_fields else FieldSet()


def _run_update(
    old: dict | None,
    new: dict,
    managers: dict,
    manager: str,
    api_version: str,
    subresource: str,
    schema: Node | None,
    now: str,
    reset: FieldSet,
) -> None:
    """The Update chain below skip-non-applied: build id, track as current-operation, strip, time."""
    mid = _manager_id(manager, "Update", api_version, subresource)
    current: ManagerId = ("current-operation", "Update", api_version, subresource)
    previous_current = managers.pop(current, None)
    cmp = _update(old, new, schema, managers, current, True, reset)
    fields = (
        (previous_current.fields if previous_current else FieldSet()) - cmp.removed | cmp.modified | cmp.added
    ).recursive_difference(reset)
    if not fields.empty():
        managers[current] = _Entry(fields, api_version, False, None)
    _strip(managers, current)
    vs = managers.pop(current, None)
    if vs is not None:
        prev = managers.get(mid)
        managers[mid] = _Entry(vs.fields | (prev.fields if prev else FieldSet()), api_version, False, now)
    _cap_update_managers(managers)


def update_managed_fields(
    old: dict | None,
    new: dict,
    manager: str,
    api_version: str,
    subresource: str,
    schema: Node | None,
    now: str,
    *,
    reset_fields: Iterable[str] = (),
) -> list[dict]:
    """managedFields after a create (``old`` None), update or non-apply patch by ``manager``.

    ``new`` may carry managedFields the client wrote (kubectl/helm CSA→SSA migration): when
    they are non-empty and valid they replace the live ones (subresource writes ignore them);
    ``[]`` or ``[{}]`` resets them. ``reset_fields`` are the strategy's reset paths (e.g.
    ``status`` for the main resource), never owned through this write.
    """
    reset = _reset_set(reset_fields)
    live_entries = ((old or {}).get("metadata") or {}).get("managedFields")
    new_entries = (new.get("metadata") or {}).get("managedFields")
    managers = _decode_live_or_new(live_entries, new_entries, bool(subresource))
    if not managers and old is not None:
        return []  # upstream does not start tracking an existing untracked object on update
    _run_update(
        _without_managed_fields(old),
        _without_managed_fields(new),
        managers,
        manager,
        api_version,
        subresource,
        schema,
        now,
        reset,
    )
    return encode_managed_fields(managers)


def _decode_live_or_new(live: list | None, new: list | None, ignore_new: bool) -> dict:
    def or_empty(entries: list | None) -> dict:
        try:
            return decode_managed_fields(entries)
        except (ValueError, FieldSetError):
            return {}

    if ignore_new or new is live or new == live:  # unchanged entries: decode the stored ones
        return or_empty(live)
    if new is not None and (len(new) == 0 or (len(new) == 1 and new[0] == {})):
        return {}
    try:
        managers = decode_managed_fields(new)
    except (ValueError, FieldSetError):
        managers = {}
    return managers if managers else or_empty(live)


# -- apply ---------------------------------------------------------------------------------


def _gvk_string(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    return f"{group}/{version}, Kind={kind}"


def _expected_kind(schema: Node | None, api_version: str, live: dict | None) -> str | None:
    if live and live.get("kind"):
        return live["kind"]
    if schema is None:
        return None
    group, _, version = api_version.rpartition("/")
    for gvk in schema.raw.get("x-kubernetes-group-version-kind", []):
        if gvk.get("group", "") == group and gvk.get("version") == version:
            return gvk.get("kind")
    return None


def _check_applied(applied: dict, api_version: str, schema: Node | None, live: dict | None) -> None:
    kind = _expected_kind(schema, api_version, live)
    got_av, got_kind = applied.get("apiVersion") or "", applied.get("kind") or ""
    if got_av != api_version or (kind is not None and got_kind != kind):
        raise bad_request(f"invalid object type: {_gvk_string(got_av, got_kind)}")
    md = applied.get("metadata")
    if isinstance(md, dict) and md.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")


def server_side_apply(
    live: dict | None,
    applied: dict,
    manager: str,
    force: bool,
    api_version: str,
    subresource: str,
    schema: Node | None,
    now: str,
    *,
    reset_fields: Iterable[str] = (),
) -> dict:
    """The object after ``manager`` applies ``applied`` (``live`` None: apply creates it).

    Returns a new dict with ``metadata.managedFields`` set (omitted when empty). Raises the
    409 apply conflict, or 400 for a wrong apiVersion/kind or a non-nil managedFields. The
    caller still defaults, runs the strategy and validates the result, as upstream does after
    the field manager.
    """
    _check_applied(applied, api_version, schema, live)
    reset = _reset_set(reset_fields)
    try:
        managers = decode_managed_fields(((live or {}).get("metadata") or {}).get("managedFields"))
    except (ValueError, FieldSetError) as e:
        raise internal(f"failed to decode managed fields: {e}") from None
    base = _without_managed_fields(live)
    config = copy.deepcopy(applied)
    try:
        if not managers and live is not None:
            # skipNonAppliedManager: whoever wrote the untracked fields becomes "before-first-apply".
            _run_update({}, base, managers, "before-first-apply", api_version, subresource, schema, now, reset)
        try:
            merged, managers2, changed = _apply(
                base, config, manager, force, api_version, subresource, schema, now, reset, managers
            )
        except _Conflicts as c:
            allowed = _allowed_from_last_applied(base, api_version, schema) if manager == "kubectl" else None
            if allowed is None:
                raise conflict_error(c.conflicts) from None
            remaining = {m: s - allowed for m, s in c.conflicts.items() if not (s - allowed).empty()}
            if remaining:
                raise conflict_error(remaining) from None
            merged, managers2, changed = _apply(
                base, config, manager, True, api_version, subresource, schema, now, reset, managers
            )
    except FieldSetError as e:
        raise internal(f"failed to apply: {e}") from None
    if manager == "kubectl":
        _update_last_applied(merged, applied)
    md = merged.setdefault("metadata", {})
    encoded = encode_managed_fields(managers2)
    if encoded:
        md["managedFields"] = encoded
    else:
        md.pop("managedFields", None)
    return merged


def _apply(
    base: dict,
    config: dict,
    manager: str,
    force: bool,
    api_version: str,
    subresource: str,
    schema: Node | None,
    now: str,
    reset: FieldSet,
    managers_in: dict,
) -> tuple[dict, dict, bool]:
    managers = {m: _Entry(e.fields, e.api_version, e.applied, e.time) for m, e in managers_in.items()}
    mid = _manager_id(manager, "Apply", api_version, subresource)
    merged = merge(base, config, schema)
    if merged is None:
        merged = {}
    last = managers.get(mid)
    config_set = fields_of(config, schema).recursive_difference(reset)
    managers[mid] = _Entry(config_set, api_version, True, last.time if last else None)
    if last is not None and not last.fields.empty():
        merged = _prune(merged, managers, last.fields, schema)
    _update(base, merged, schema, managers, mid, force, reset)
    changed = not _equal(base, merged)
    _strip(managers, mid)
    if changed and mid in managers:
        managers[mid].time = now
    result = _strip_new_nulls(merged, base) if changed else copy.deepcopy(base)
    return result, managers, changed


def _prune(merged: dict, managers: dict, last: FieldSet, schema: Node | None) -> dict:
    """Remove what the applier applied last time, dropped now, and nobody else owns."""

    def enf(s: FieldSet) -> FieldSet:
        return s.ensure_named_fields_are_members(schema)

    last_e = enf(last)
    pruned = remove_items(merged, last_e, schema) or {}
    managed = FieldSet()
    for e in managers.values():
        managed = managed | e.fields
    merged_set = enf(fields_of(merged, schema))
    pruned = remove_items(merged, merged_set - (enf(fields_of(pruned, schema)) | enf(managed)), schema) or {}
    dangling = (merged_set - enf(fields_of(pruned, schema))) & last_e
    return remove_items(merged, dangling, schema) or {}


def _allowed_from_last_applied(live: dict, api_version: str, schema: Node | None) -> FieldSet | None:
    """Conflicts kubectl may override: fields its client-side last-applied config still matches."""
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    if not raw:
        return None
    try:
        last = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    try:
        cmp = compare(last, live, schema)
        return fields_of(last, schema) - cmp.modified - cmp.added - cmp.removed
    except FieldSetError:
        return None


def _update_last_applied(obj: dict, applied: dict) -> None:
    """kubectl's SSA keeps an existing last-applied annotation in step (lastAppliedUpdater)."""
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or not annotations.get(LAST_APPLIED):
        return
    cfg = copy.deepcopy(applied)
    cfg_ann = (cfg.get("metadata") or {}).get("annotations")
    if isinstance(cfg_ann, dict):
        cfg_ann.pop(LAST_APPLIED, None)
    annotations[LAST_APPLIED] = gojson(cfg) + "\n"
    if sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str)) > _TOTAL_ANNOTATION_SIZE_LIMIT:
        del annotations[LAST_APPLIED]
