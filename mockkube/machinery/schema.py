"""The upstream v1.36 type schemas, navigable by field.

``openapi/definitions.json`` (built by ``scripts/build_openapi.py`` from the
``kubernetes-validate`` package) holds the JSON-Schema definitions of every served kind,
keyed like ``io.k8s.api.core.v1.Pod`` with ``{"$ref": "#/$defs/<name>"}`` references and
the ``x-kubernetes-*`` extensions (list types, map keys, patch strategies). Validation,
strategic merge patch and server-side apply all walk the same ``Node`` tree.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterator

import orjson

_REF_PREFIX = "#/$defs/"
_TYPES = ("types",)  # the key of a node's types among its cached children
_NONE = object()


def openapi_dir() -> Path:
    """Where the generated OpenAPI files live (the repo's ``openapi/`` or the installed copy)."""
    here = Path(__file__).resolve()
    for cand in (here.parents[2] / "openapi", here.parents[1] / "_openapi"):
        if (cand / "definitions.json").exists():
            return cand
    raise FileNotFoundError("openapi/definitions.json not found; run scripts/build_openapi.py")


@functools.lru_cache(maxsize=1)
def definitions() -> dict[str, dict]:
    # 1.3 MB read at every start: orjson parses it in half the standard library's time
    return orjson.loads((openapi_dir() / "definitions.json").read_bytes())["$defs"]


class Node:
    """One schema node with its ``$ref`` resolved; children are resolved lazily and cached."""

    __slots__ = ("raw", "name", "_children")

    def __init__(self, raw: dict, name: str = "") -> None:
        self.raw = raw
        self.name = name  # the definition name when this node came from a $ref
        self._children: dict = {}

    # -- shape ---------------------------------------------------------------
    @property
    def types(self) -> tuple[str, ...]:
        hit = self._children.get(_TYPES)
        if hit is None:  # raw never changes: worked out once (managedFields and SMP ask per field)
            hit = self._children[_TYPES] = self._types()
        return hit

    def _types(self) -> tuple[str, ...]:
        t = self.raw.get("type")
        if t is None:
            if "oneOf" in self.raw:  # Quantity, IntOrString: string or number
                out: list[str] = []
                for alt in self.raw["oneOf"]:
                    at = alt.get("type", [])
                    out.extend([at] if isinstance(at, str) else at)
                return tuple(x for x in out if x != "null")
            return ()
        if isinstance(t, str):
            return (t,)
        return tuple(x for x in t if x != "null")

    @property
    def type(self) -> str:
        """The main JSON type: object, array, string, integer, number, boolean, or '' (any)."""
        ts = self.types
        if len(ts) == 1:
            return ts[0]
        return ""

    @property
    def is_object(self) -> bool:
        return self.type == "object"

    @property
    def is_map(self) -> bool:
        """An object whose keys are free (labels, data): additionalProperties, no properties."""
        return self.is_object and "additionalProperties" in self.raw and "properties" not in self.raw

    @property
    def is_struct(self) -> bool:
        return self.is_object and not self.is_map

    @property
    def properties(self) -> dict:
        return self.raw.get("properties", {})

    @property
    def required(self) -> list[str]:
        return self.raw.get("required", [])

    @property
    def list_type(self) -> str:
        """x-kubernetes-list-type: atomic, set, map; '' when not declared."""
        return self.raw.get("x-kubernetes-list-type", "")

    @property
    def list_map_keys(self) -> list[str]:
        return self.raw.get("x-kubernetes-list-map-keys", [])

    @property
    def map_type(self) -> str:
        """x-kubernetes-map-type: atomic or granular; '' when not declared."""
        return self.raw.get("x-kubernetes-map-type", "")

    @property
    def patch_strategy(self) -> str:
        return self.raw.get("x-kubernetes-patch-strategy", "")

    @property
    def patch_merge_key(self) -> str:
        return self.raw.get("x-kubernetes-patch-merge-key", "")

    @property
    def enum(self) -> list | None:
        return self.raw.get("enum")

    @property
    def format(self) -> str:
        return self.raw.get("format", "")

    def derived(self, key: tuple, compute) -> object:
        """A value worked out from this node's schema alone, computed once (``raw`` never
        changes); ``key`` must not start with "f" or "i" (the cached children)."""
        hit = self._children.get(key, _NONE)
        if hit is _NONE:
            hit = self._children[key] = compute()
        return hit

    # -- navigation ----------------------------------------------------------
    def field(self, name: str) -> "Node | None":
        """The schema of property ``name`` (or of a map value), None if unknown."""
        key = ("f", name)
        if key in self._children:
            return self._children[key]
        sub = self.properties.get(name)
        if sub is None and self.is_map:
            sub = self.raw.get("additionalProperties")
            if not isinstance(sub, dict):
                sub = {}
        node = resolve(sub) if sub is not None else None
        self._children[key] = node
        return node

    def items(self) -> "Node | None":
        key = ("i",)
        if key in self._children:
            return self._children[key]
        sub = self.raw.get("items")
        node = resolve(sub) if isinstance(sub, dict) else None
        self._children[key] = node
        return node

    def additional(self) -> "Node | None":
        key = ("a",)
        if key in self._children:
            return self._children[key]
        sub = self.raw.get("additionalProperties")
        node = resolve(sub) if isinstance(sub, dict) else (ANY if sub else None)
        self._children[key] = node
        return node

    def iter_fields(self) -> Iterator[tuple[str, "Node"]]:
        for name in self.properties:
            node = self.field(name)
            if node is not None:
                yield name, node

    def __repr__(self) -> str:
        return f"Node({self.name or self.type!r})"


ANY = Node({})


def resolve(raw: dict) -> Node:
    """Resolve a (possibly $ref) schema fragment into a Node, merging sibling keys."""
    ref = raw.get("$ref")
    if ref is None:
        return Node(raw)
    name = ref[len(_REF_PREFIX) :]
    base = _definition_node(name)
    extra = {k: v for k, v in raw.items() if k not in ("$ref", "description")}
    if not extra:
        return base
    merged = dict(base.raw)
    merged.update(extra)
    return Node(merged, name)


@functools.lru_cache(maxsize=None)
def _definition_node(name: str) -> Node:
    return Node(definitions()[name], name)


@functools.lru_cache(maxsize=None)
def _gvk_index() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, d in definitions().items():
        for gvk in d.get("x-kubernetes-group-version-kind", []):
            out[(gvk.get("group", ""), gvk["version"], gvk["kind"])] = name
    return out


def definition_name(group: str, version: str, kind: str) -> str | None:
    """``io.k8s.api.core.v1.Pod`` for ("", "v1", "Pod")."""
    return _gvk_index().get((group, version, kind))


def for_kind(group: str, version: str, kind: str) -> Node | None:
    """The root schema node of a kind, or None if the kind has no upstream schema."""
    name = definition_name(group, version, kind)
    return _definition_node(name) if name else None


def for_type(rt: "object") -> Node | None:
    """The schema of a served resource: its own (custom resources) or upstream's."""
    own = getattr(rt, "schema", None)
    if own is not None:
        return own
    return for_kind(rt.group, rt.version, rt.kind)  # type: ignore[attr-defined]


def at_path(root: Node, path: list) -> Node | None:
    """Walk field names (str) and list indexes (int) from ``root``."""
    node: Node | None = root
    for p in path:
        if node is None:
            return None
        node = node.items() if isinstance(p, int) else node.field(p)
    return node
