"""Field sets: which fields of an object a manager owns, as structured-merge-diff models them.

A field set is a set of *paths*; a path is a tuple of path elements:

* ``("f", name)``: a struct field or map key (``f:name`` in FieldsV1);
* ``("k", ((key, json), ...))``: an associative-list item by its key fields, sorted by name
  (``k:{"name":"a"}``);
* ``("v", json)``: a set-list item by value (``v:"x"``);
* ``("i", n)``: a list item by index (``i:0``; never produced for kube types, decoded only).

Values inside elements are kept as Go-style compact JSON text so that elements hash and compare
exactly as upstream's. Set operations are plain path-set operations, which is what upstream's
``fieldpath.Set`` Union/Intersection/Difference compute. The schema helpers below translate the
OpenAPI extensions into SMD's element relationships the way kube-openapi's ``schemaconv`` does;
``apply.py`` walks objects with the same helpers.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from typing import Any, Iterable, Iterator

import orjson

from mockkube.machinery.schema import Node

PathElement = tuple
Path = tuple

RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"

# Untyped fields: maps stay granular (deduced), lists are atomic (schemaconv's __untyped_deduced_).
DEDUCED = Node({})
# RawExtension and list items without a schema: everything atomic (schemaconv's __untyped_atomic_).
UNTYPED_ATOMIC = Node({"x-kubernetes-map-type": "atomic"})

# Associative-list key fields with a schema default; upstream reads the default from the OpenAPI
# spec, which our generated definitions do not carry.
_KEY_DEFAULTS = {"protocol": "TCP"}


class FieldSetError(ValueError):
    """An object cannot be turned into a field set (bad list item, malformed FieldsV1)."""


# -- values --------------------------------------------------------------------------------


def gojson(value: Any) -> str:
    """Compact JSON as Go's encoding/json writes it: sorted keys, HTML characters escaped."""
    if isinstance(value, str) and type(value) is str:  # list keys and set items: mostly strings
        text = orjson.dumps(value).decode()  # the bytes json.dumps writes for a string
    else:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _value_order(v: Any) -> tuple:
    """A sort key giving SMD's total order over values (numbers, strings, bools, lists, maps, null)."""
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, (int, float)):
        return (0, float(v))
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, list):
        return (3, tuple(_value_order(x) for x in v))
    if isinstance(v, dict):
        return (4, tuple((k, _value_order(v[k])) for k in sorted(v)))
    return (5,)


def go_string(v: Any) -> str:
    """``value.ToString``: how conflict paths print key values."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e21 and not math.isinf(v):
            return str(int(v))
        return repr(v).replace("e+0", "e+").replace("e-0", "e-")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(go_string(x) for x in v) + "]"
    if isinstance(v, dict):
        return "".join(f"{k}={go_string(x)}" for k, x in v.items())
    return str(v)


# -- path elements -------------------------------------------------------------------------


def field(name: str) -> PathElement:
    return ("f", name)


def key(**fields: Any) -> PathElement:
    return ("k", tuple(sorted((k, gojson(v)) for k, v in fields.items())))


def value_element(v: Any) -> PathElement:
    return ("v", gojson(v))


def index(i: int) -> PathElement:
    return ("i", i)


_KIND_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


# every encoding sorts the same few elements again; some name one pod (its IP, its owner's
# uid) and are never seen again once it is gone: one entry per pod that ever ran, which
# 65,536 entries kept for hours
@functools.lru_cache(maxsize=4096)
def pe_sort_key(pe: PathElement) -> tuple:
    kind, arg = pe
    if kind == "f":
        return (0, arg)
    if kind == "k":
        return (1, tuple((n, _value_order(json.loads(v))) for n, v in arg))
    if kind == "v":
        return (2, _value_order(json.loads(arg)))
    return (3, arg)


def pe_str(pe: PathElement) -> str:
    """``PathElement.String``: ``.name``, ``[name="a"]``, ``[="x"]``, ``[0]``."""
    kind, arg = pe
    if kind == "f":
        return "." + arg
    if kind == "k":
        return "[" + ",".join(f"{n}={go_string(json.loads(v))}" for n, v in arg) + "]"
    if kind == "v":
        return f"[={go_string(json.loads(arg))}]"
    return f"[{arg}]"


def path_str(path: Iterable[PathElement]) -> str:
    """How structured-merge-diff prints a path: ``.spec.containers[name="a"].image``."""
    return "".join(pe_str(pe) for pe in path)


def serialize_pe(pe: PathElement) -> str:
    """The FieldsV1 key of an element: ``f:name``, ``k:{"name":"a"}``, ``v:"x"``, ``i:0``."""
    kind, arg = pe
    if kind == "f":
        return "f:" + arg
    if kind == "k":
        return "k:{" + ",".join(f"{gojson(n)}:{v}" for n, v in arg) + "}"
    if kind == "v":
        return "v:" + arg
    return f"i:{arg}"


def deserialize_pe(text: str) -> PathElement | None:
    """Parse a FieldsV1 key; None for an unknown element type (upstream skips those)."""
    if len(text) < 2 or text[1] != ":":
        raise FieldSetError(f"invalid path element {text!r}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return ("f", rest)
    try:
        if kind == "v":
            return ("v", gojson(json.loads(rest)))
        if kind == "k":
            obj = json.loads(rest)
            if not isinstance(obj, dict):
                raise FieldSetError(f"invalid key element {text!r}")
            return ("k", tuple(sorted((k, gojson(v)) for k, v in obj.items())))
        if kind == "i":
            return ("i", int(rest))
    except (ValueError, TypeError) as e:
        if isinstance(e, FieldSetError):
            raise
        raise FieldSetError(f"invalid path element {text!r}: {e}") from None
    return None


# -- the set -------------------------------------------------------------------------------

# FieldsV1 encodings by path set, and the sets behind those very dicts (by identity: the
# dict is kept alive here, so its id cannot be reused while the entry exists), least recently
# encoded first. An entry serves while some object holds its dict (a stored object, one in a
# watch's event log, one being written); after that it only takes memory: a set that names one
# pod's IP or one owner's uid is never encoded again once the pod is gone. Each time the memo
# has grown by a quarter (from ``_SWEEP_FLOOR`` entries) the entries whose dict nobody else holds are
# dropped, so it follows the objects alive. (Without the sweep a cluster's churn filled it for
# hours: one entry of ~16 KB per pod that ever ran — the soak benchmark's server crept 2-3 MB a
# minute.) Beyond ``_MEMO_SIZE`` entries the least recently encoded goes, even if an object
# still holds its dict (that object's next write then decodes its set anew, ~0.1 ms). A running
# pod's own set (the kubelet's names its IP) is one entry a pod: its paths are shared with every
# other set's (``_PATHS``) and its frozenset sized to them, so it costs ~1.5 KB rather than ~7;
# a bound of 2,048 would save that too but made every pod of a 5,000-pod burst decode and
# encode once more (its kubelet's second status write comes thousands of sets later).
_MEMO_SIZE = 16_384
_SWEEP_FLOOR = 1024  # ~16 MB of entries: the first sweep must not wait for 4,096 of them (64 MB)
_ENCODED: dict[frozenset, dict] = {}
_DECODED: dict[int, tuple[dict, "FieldSet"]] = {}
_sweep_at = _SWEEP_FLOOR
# references to an entry's dict when only the memo holds it, as _sweep counts them: the
# _ENCODED value, the _DECODED tuple, _sweep's local name and getrefcount's argument
_ONLY_THE_MEMO = 4

# FieldsV1 subtrees by content (their keys and their children's identities), so that objects of
# one shape share their encodings' dicts down to the leaves and a pod's own set (its IP) holds
# only the few dicts on the way to what differs: a kubelet's status set is ~30 dicts, all but
# three the same for every pod. Shared like the memo's dicts: never changed in place. Swept as
# the memo is, at each doubling.
_SHARED: dict[tuple, dict] = {}
_shared_sweep_at = _SWEEP_FLOOR
# references to a subtree when only this table holds it, as _sweep_shared counts them: the
# table's value and getrefcount's argument
_ONLY_THE_TABLE = 2


# paths by value: the memo's sets share them (swept as the subtrees, at each doubling)
_PATHS: dict[tuple, tuple] = {}
_PATHS_FLOOR = 8192
_paths_sweep_at = _PATHS_FLOOR
_ONLY_THE_PATHS = 5


def _sweep() -> None:
    """Drop the memo's entries whose dict no object holds any more."""
    global _sweep_at
    for key, (d, fs) in list(_DECODED.items()):
        if sys.getrefcount(d) <= _ONLY_THE_MEMO:
            del _DECODED[key]
            if _ENCODED.get(fs.paths) is d:
                del _ENCODED[fs.paths]
    _sweep_at = max(_SWEEP_FLOOR, len(_ENCODED) + len(_ENCODED) // 4)


def _evict_oldest() -> None:
    paths, d = next(iter(_ENCODED.items()))
    del _ENCODED[paths]
    hit = _DECODED.get(id(d))
    if hit is not None and hit[0] is d:
        del _DECODED[id(d)]


def _interned(path: Path) -> Path:
    """The one tuple of ``path`` the memo's sets hold: pods' sets differ in a path or two (the
    IP), so a set kept costs its frozenset and those paths, not ~30 paths of its own."""
    got = _PATHS.get(path)
    if got is None:
        global _paths_sweep_at
        if len(_PATHS) >= _paths_sweep_at:
            for p in list(_PATHS):
                # the table's key and value, the list's entry, p, getrefcount's argument
                if sys.getrefcount(p) <= _ONLY_THE_PATHS:
                    del _PATHS[p]
            _paths_sweep_at = max(_PATHS_FLOOR, 2 * len(_PATHS))
        got = _PATHS[path] = path
    return got


def _sweep_shared() -> None:
    """Drop the shared subtrees that no encoding holds any more."""
    global _shared_sweep_at
    # parents (made after their children) first, by key alone: a parent dropped is freed at
    # once, so its children are found free in the same pass
    for key in reversed(list(_SHARED)):
        if sys.getrefcount(_SHARED[key]) <= _ONLY_THE_TABLE:
            del _SHARED[key]
    _shared_sweep_at = max(_SWEEP_FLOOR, 2 * len(_SHARED))


def _shared(key: tuple, build: Any) -> dict:
    got = _SHARED.get(key)
    if got is None:
        if len(_SHARED) >= _shared_sweep_at:
            _sweep_shared()
        got = _SHARED[key] = build()
    return got


class FieldSet:
    """An immutable set of paths with upstream's set algebra and FieldsV1 encoding."""

    __slots__ = ("paths",)

    def __init__(self, paths: Iterable[Path] = ()) -> None:
        self.paths = frozenset(tuple(p) for p in paths if p)

    @classmethod
    def _of(cls, paths: frozenset) -> "FieldSet":
        """A set over ``paths`` as they are (non-empty tuples already: the algebra's results)."""
        fs = object.__new__(cls)
        fs.paths = paths
        return fs

    # algebra (results of operations on valid sets are valid: no re-checking of paths)
    def union(self, other: "FieldSet") -> "FieldSet":
        if not other.paths:
            return self
        if not self.paths:
            return other
        return FieldSet._of(self.paths | other.paths)

    def intersection(self, other: "FieldSet") -> "FieldSet":
        return FieldSet._of(self.paths & other.paths)

    def difference(self, other: "FieldSet") -> "FieldSet":
        if not other.paths or not self.paths:
            return self
        return FieldSet._of(self.paths - other.paths)

    __or__ = union
    __and__ = intersection
    __sub__ = difference

    def recursive_difference(self, other: "FieldSet") -> "FieldSet":
        """Drop every path that is in ``other`` or lies under a path in ``other``."""
        theirs = other.paths
        if not theirs or not self.paths:
            return self
        heads = {p[0] for p in theirs}  # a path can only lie under one of theirs with the same head
        return FieldSet._of(
            frozenset(
                p for p in self.paths if p[0] not in heads or not any(p[:i] in theirs for i in range(1, len(p) + 1))
            )
        )

    def with_prefix(self, pe: PathElement) -> "FieldSet":
        """The paths that start with ``pe``, with ``pe`` removed."""
        return FieldSet(p[1:] for p in self.paths if len(p) > 1 and p[0] == pe)

    def has_prefix(self, pe: PathElement) -> bool:
        return any(len(p) > 1 and p[0] == pe for p in self.paths)

    def ensure_named_fields_are_members(self, schema: Node | None) -> "FieldSet":
        """Add each struct field that has children as a member itself (used by pruning)."""
        out = set(self.paths)
        for p in self.paths:
            node = schema
            for i, pe in enumerate(p[:-1]):
                if pe[0] == "f" and node is not None and pe[1] in node.properties:
                    out.add(p[: i + 1])
                node = child_schema(node, pe)
        return FieldSet(out)

    # container protocol
    def __contains__(self, path: object) -> bool:
        return tuple(path) in self.paths  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        return bool(self.paths)

    def empty(self) -> bool:
        return not self.paths

    def __len__(self) -> int:
        return len(self.paths)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and self.paths == other.paths

    def __hash__(self) -> int:
        return hash(self.paths)

    def __iter__(self) -> Iterator[Path]:
        """Paths in upstream's iteration order: a level's members first, then its children."""
        yield from _iterate(_tree(self.paths), ())

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_str(p) for p in self) + ")"

    # encoding
    def to_fields_v1(self) -> dict:
        """The FieldsV1 JSON object (keys in upstream's order, ``"."`` for a member with children).

        Memoised: most writes leave most managers' sets as they were, and objects of one
        shape share sets. The dict returned is shared and must not be changed in place (stored
        objects are never changed in place)."""
        hit = _ENCODED.pop(self.paths, None)
        if hit is not None:
            _ENCODED[self.paths] = hit  # the most recently used now
            return hit
        if len(_ENCODED) >= _sweep_at:
            _sweep()
        while len(_ENCODED) >= _MEMO_SIZE:
            _evict_oldest()
        # built from a set, its table is sized for its paths (one grown path by path from a
        # generator is twice as large: 2.2 KB for a kubelet's 30 paths against 1.2 KB)
        kept = FieldSet._of(frozenset(set(map(_interned, self.paths))))
        out = _emit(_tree(kept.paths))
        _ENCODED[kept.paths] = out
        _DECODED[id(out)] = (out, kept)
        return out

    @classmethod
    def from_fields_v1(cls, fields: dict | None) -> "FieldSet":
        if fields is None:
            return cls()
        if not isinstance(fields, dict):
            raise FieldSetError("FieldsV1 must be a JSON object")
        hit = _DECODED.get(id(fields))
        if hit is not None and hit[0] is fields:  # a stored object's entry, encoded here
            return hit[1]
        out: list[Path] = []
        _read(fields, (), out)
        return cls(out)

    @classmethod
    def of(cls, *paths: str) -> "FieldSet":
        """Build from dotted field paths (``"spec.replicas"``); a test and reset-fields helper."""
        return cls(tuple(("f", n) for n in p.split(".")) for p in paths)


def _tree(paths: Iterable[Path]) -> dict:
    root: dict = {"m": set(), "c": {}}
    for p in paths:
        node = root
        for pe in p[:-1]:
            node = node["c"].setdefault(pe, {"m": set(), "c": {}})
        node["m"].add(p[-1])
    return root


def _iterate(node: dict, prefix: Path) -> Iterator[Path]:
    for pe in sorted(node["m"], key=pe_sort_key):
        yield prefix + (pe,)
    for pe in sorted(node["c"], key=pe_sort_key):
        yield from _iterate(node["c"][pe], prefix + (pe,))


def _emit(node: dict) -> dict:
    """The FieldsV1 object of a ``_tree`` node, its subtrees shared (``_SHARED``; the object
    itself is the memo's, which holds it by its path set)."""
    return dict(_emit_items(node))


def _emit_items(node: dict) -> list[tuple[str, dict]]:
    empty = _shared((), dict)
    items: list[tuple[str, dict]] = []
    for pe in sorted(set(node["m"]) | set(node["c"]), key=pe_sort_key):
        child = node["c"].get(pe)
        name = sys.intern(serialize_pe(pe))
        if child is None:
            items.append((name, empty))
            continue
        body = _emit_items(child)
        if pe in node["m"]:
            body.insert(0, (".", empty))
        # the key names the children by identity (flat: name, id, name, id...): the table holds
        # each child (through its parent's dict) as long as the parent's entry, so no identity
        # is reused while named
        key = tuple(x for k, v in body for x in (k, id(v)))
        items.append((name, _shared(key, lambda its=body: dict(its))))
    return items


def _read(obj: dict, prefix: Path, out: list) -> bool:
    """Collect paths under ``prefix``; return whether ``prefix`` itself is a member."""
    is_member = False
    found_child = False
    for k, v in obj.items():
        if k == ".":
            is_member = True
            continue
        pe = deserialize_pe(k)
        if pe is None:
            continue
        if not isinstance(v, dict):
            raise FieldSetError(f"FieldsV1 value for {k!r} must be an object")
        found_child = True
        if _read(v, prefix + (pe,), out):
            out.append(prefix + (pe,))
    return is_member or not found_child


# -- schema helpers (schemaconv semantics) -------------------------------------------------


def map_is_atomic(node: Node | None) -> bool:
    return node is not None and (node.map_type == "atomic" or node.name == RAW_EXTENSION)


def is_scalar_schema(node: Node | None) -> bool:
    return node is not None and node.type in ("string", "integer", "number", "boolean")


def list_shape(node: Node | None) -> tuple[bool, list[str]]:
    """(associative, keys): ``x-kubernetes-list-type`` wins, then a ``merge`` patch strategy."""
    if node is None or node.type != "array":
        return False, []
    lt = node.list_type
    if lt == "atomic":
        return False, []
    if lt == "set":
        return True, []
    if lt == "map":
        return True, list(node.list_map_keys)
    if node.patch_strategy in ("merge", "merge,retainKeys"):
        mk = node.patch_merge_key
        return True, [mk] if mk else []
    return False, []


def declared(node: Node | None, name: str) -> bool:
    return node is not None and name in node.properties


def field_schema(node: Node | None, name: str) -> Node:
    """The schema of map entry / struct field ``name``; DEDUCED when untyped or undeclared."""
    if node is None or node is DEDUCED:
        return DEDUCED
    if node is UNTYPED_ATOMIC or node.name == RAW_EXTENSION:
        return UNTYPED_ATOMIC
    if name in node.properties:
        sub = node.field(name)
        return sub if sub is not None else DEDUCED
    ap = node.raw.get("additionalProperties")
    if isinstance(ap, dict):
        sub = node.additional()
        return sub if sub is not None else DEDUCED
    return DEDUCED


def item_schema(node: Node | None) -> Node:
    if node is None or node is DEDUCED or node is UNTYPED_ATOMIC:
        return UNTYPED_ATOMIC
    sub = node.items()
    return sub if sub is not None else UNTYPED_ATOMIC


def child_schema(node: Node | None, pe: PathElement) -> Node:
    return field_schema(node, pe[1]) if pe[0] == "f" else item_schema(node)


def list_item_pe(node: Node | None, keys: list[str], item: Any) -> PathElement:
    """The path element of an associative-list item: its key fields, or its value for sets."""
    if keys:
        if not isinstance(item, dict):
            raise FieldSetError("associative list with keys may not have non-map elements")
        elem = item_schema(node)
        parts = []
        for k in keys:
            if k in item:
                parts.append((k, gojson(item[k])))
            elif declared(elem, k) and "default" in elem.properties[k]:
                parts.append((k, gojson(elem.properties[k]["default"])))
            elif k in _KEY_DEFAULTS and declared(elem, k):
                parts.append((k, gojson(_KEY_DEFAULTS[k])))
        if not parts:
            raise FieldSetError(
                "associative list with keys has an element that omits all key fields "
                + gojson(keys)
                + " (and doesn't have default values for any key fields)"
            )
        return ("k", tuple(sorted(parts)))
    if isinstance(item, dict):
        raise FieldSetError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise FieldSetError("not supported: associative list with lists as elements")
    if item is None:
        raise FieldSetError("associative list without keys has an element that's an explicit null")
    return ("v", gojson(item))


# -- object -> field set -------------------------------------------------------------------


def fields_of(obj: Any, schema: Node | None) -> FieldSet:
    """Every field an object sets (``TypedValue.ToFieldSet``): leaves, list items, map entries,
    and struct fields that are null or ``{}``."""
    out: set[Path] = set()
    _collect(obj, schema, (), out)
    return FieldSet(out)


def _collect(v: Any, node: Node | None, path: Path, out: set) -> None:
    if isinstance(v, dict):
        if map_is_atomic(node) or is_scalar_schema(node):
            out.add(path)
            return
        for k, child in v.items():
            sub = path + (("f", k),)
            _collect(child, field_schema(node, k), sub, out)
            if child is None or (isinstance(child, dict) and not child) or not declared(node, k):
                out.add(sub)
        return
    if isinstance(v, list):
        assoc, keys = list_shape(node)
        if not assoc:
            out.add(path)
            return
        pes = [list_item_pe(node, keys, item) for item in v]
        seen: set = set()
        dups: set = set()
        for pe in pes:
            (dups if pe in seen else seen).add(pe)
        for pe in dups:
            out.add(path + (pe,))
        elem = item_schema(node)
        for pe, item in zip(pes, v):
            if pe in dups:
                continue
            _collect(item, elem, path + (pe,), out)
            out.add(path + (pe,))
        return
    if v is None and not is_scalar_schema(node):
        # A null list or map is handled as that list or map: only an atomic one is a leaf (the
        # parent struct records the null field itself).
        if node is not None and node.type == "array":
            if not list_shape(node)[0]:
                out.add(path)
        elif node is None or map_is_atomic(node):
            out.add(path)
        return
    out.add(path)
