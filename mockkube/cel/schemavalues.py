"""Values of a custom resource as Kubernetes hands them to CEL (``UnstructuredToVal`` in
k8s.io/apiserver pkg/cel/common): ``x-kubernetes-list-type: set`` lists compare as sets and
``+`` is a union; ``map`` lists compare by their keys and ``+`` merges (the right side's
values win, its new keys are appended); every schema list reports ``index out of bounds``;
an object's properties are held under their escaped names (``__if__``), and a reserved word
other than a literal may also be selected as written (``self.spec.if``), as upstream's
lookup unescapes.

Plain ``list`` and ``dict`` subclasses, so everything else treats them as lists and maps;
the engine's equality, ``+``, indexing and ``has()`` ask for the methods below.
"""

from __future__ import annotations

from typing import Any, Callable

from mockkube.cel.parser import RESERVED_WORDS

Equals = Callable[[Any, Any], bool]
# CEL's equality, which the engine (importing this module) hands over with use_equality
_EQUALS: list[Equals] = [lambda a, b: a == b]


def use_equality(equals: Equals) -> None:
    _EQUALS[0] = equals


class SchemaList(list):
    """An atomic list of an object (``x-kubernetes-list-type: atomic`` or none)."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        """CEL's equality of two lists of one list-type (the engine's ``==`` of same types)."""
        return isinstance(other, list) and self.cel_equal(other, _EQUALS[0])

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def cel_equal(self, other: list, eq: Equals) -> bool:
        return len(self) == len(other) and all(eq(x, y) for x, y in zip(self, other))

    def cel_add(self, other: list, eq: Equals) -> list:
        return SchemaList([*self, *other])


class SetList(SchemaList):
    """``x-kubernetes-list-type: set``: equal whatever the order; ``+`` a union."""

    __slots__ = ()

    def cel_equal(self, other: list, eq: Equals) -> bool:
        if len(self) != len(other):
            return False
        return all(any(eq(x, y) for y in self) for x in other) and all(any(eq(y, x) for x in other) for y in self)

    def cel_add(self, other: list, eq: Equals) -> list:
        out = SetList(self)
        for x in other:
            if not any(eq(x, y) for y in out):
                out.append(x)
        return out


class MapList(SchemaList):
    """``x-kubernetes-list-type: map``: elements identified by ``keys`` (escaped names)."""

    __slots__ = ("keys",)

    def __init__(self, items: Any = (), keys: tuple[str, ...] = ()) -> None:
        super().__init__(items)
        self.keys = keys

    def key_of(self, element: Any) -> Any:
        if not isinstance(element, dict):
            return ("@", id(element))
        return tuple(repr(element.get(k)) for k in self.keys)

    def cel_equal(self, other: list, eq: Equals) -> bool:
        if len(self) != len(other):
            return False
        mine = {self.key_of(e): e for e in self}
        seen = set()
        for v in other:
            k = self.key_of(v)
            if k not in mine or not eq(mine[k], v):
                return False
            seen.add(k)
        return len(seen) == len(mine)

    def cel_add(self, other: list, eq: Equals) -> list:
        out = MapList(self, self.keys)
        where = {self.key_of(e): i for i, e in enumerate(out)}
        for v in other:
            k = self.key_of(v)
            if k in where:
                out[where[k]] = v
            else:
                where[k] = len(out)
                out.append(v)
        return out


# reserved words a field selection may spell as written (true, false, null and in are literals
# and operators, which the parser refuses after a dot)
_ALIASES = {w: f"__{w}__" for w in RESERVED_WORDS}


class ObjectMap(dict):
    """An object with properties, keyed by escaped names."""

    __slots__ = ()

    def __missing__(self, key: Any) -> Any:
        alias = _ALIASES.get(key)
        if alias is not None and dict.__contains__(self, alias):
            return dict.__getitem__(self, alias)
        raise KeyError(key)

    def has_field(self, name: str) -> bool:
        return dict.__contains__(self, name) or dict.__contains__(self, _ALIASES.get(name, ""))
