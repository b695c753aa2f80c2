"""cel-go's lists and sets extensions as Kubernetes enables them (``ext.Lists`` version 3
since v1.34, ``ext.Sets`` since v1.29): ``slice``, ``flatten``, ``sort``, ``sortBy`` (a
macro: see the engine's ``_sort_by``), ``lists.range``, ``reverse``, ``distinct``, and
``sets.contains`` / ``sets.equivalent`` / ``sets.intersects``.

Registered into the engine's one function table on import; equality is CEL's
(heterogeneous numbers compare by value), error texts are cel-go's.
"""

from __future__ import annotations

import functools
from typing import Any

from mockkube.cel import engine
from mockkube.cel.celtypes import Duration, Timestamp
from mockkube.cel.lib import CELRuntimeError

# cel-go's comparableTypes: what sort() and sortBy() keys may be
COMPARABLE = ("int", "uint", "double", "bool", engine.DURATION, engine.TIMESTAMP, "string", "bytes")
_COMPARABLE_PY = (int, engine.UInt, float, bool, Duration, Timestamp, str, bytes)


def list_slice(xs: list, start: int, end: int) -> list:
    if start < 0 or end < 0:
        raise CELRuntimeError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CELRuntimeError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(xs) < end:
        raise CELRuntimeError(f"cannot slice({start}, {end}), list is length {len(xs)}")
    return xs[start:end]


def flatten(xs: list, depth: int = 1) -> list:
    if depth < 0:
        raise CELRuntimeError("level must be non-negative")
    out: list = []
    for x in xs:
        if isinstance(x, list) and depth > 0:
            out.extend(flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def sort_by_keys(xs: list, keys: list) -> list:
    """cel-go's ``@sortByAssociatedKeys``: ``xs`` in the order of ``keys``."""
    if len(xs) != len(keys):
        raise CELRuntimeError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
            f"but got {len(xs)} and {len(keys)} elements respectively"
        )
    if not xs:
        return xs
    first = type(keys[0])
    if not isinstance(keys[0], _COMPARABLE_PY):
        raise CELRuntimeError("list elements must be comparable")
    if any(type(k) is not first for k in keys):
        raise CELRuntimeError("list elements must have the same type")
    order = sorted(range(len(xs)), key=functools.cmp_to_key(lambda i, j: engine._compare(keys[i], keys[j])))
    return [xs[i] for i in order]


def sort_list(xs: list) -> list:
    return sort_by_keys(xs, xs)


def distinct(xs: list) -> list:
    out: list = []
    for x in xs:
        if not any(engine.cel_equals(x, y) for y in out):
            out.append(x)
    return out


def _contains(xs: list, ys: list) -> bool:
    return all(any(engine.cel_equals(y, x) for x in xs) for y in ys)


def _intersects(xs: list, ys: list) -> bool:
    return any(any(engine.cel_equals(y, x) for x in xs) for y in ys)


_LIST = "list"
_FUNCTIONS: dict[str, list] = {
    "slice": [(_LIST, ("int", "int"), _LIST, list_slice)],
    "flatten": [(_LIST, (), _LIST, flatten), (_LIST, ("int",), ("list", "dyn"), flatten)],
    "sort": [(("list", t), (), ("list", t), sort_list) for t in COMPARABLE],
    "@sortByAssociatedKeys": [(_LIST, (("list", t),), _LIST, sort_by_keys) for t in COMPARABLE],
    "lists.range": [(None, ("int",), ("list", "int"), lambda n: list(range(n)))],
    "reverse": [(_LIST, (), _LIST, lambda xs: xs[::-1])],
    "distinct": [(_LIST, (), _LIST, distinct)],
    "sets.contains": [(None, (_LIST, _LIST), "bool", _contains)],
    "sets.equivalent": [(None, (_LIST, _LIST), "bool", lambda a, b: _contains(a, b) and _contains(b, a))],
    "sets.intersects": [(None, (_LIST, _LIST), "bool", _intersects)],
}


def _flattened(receiver: Any, args: list) -> Any:
    """flatten()'s result type: list(list(T)) gives list(T); with a depth, list(dyn)."""
    if args:
        return ("list", "dyn")
    if engine._kind(receiver) == "list" and engine._kind(receiver[1]) == "list":
        return receiver[1]
    return receiver if engine._kind(receiver) == "list" else "dyn"


def register() -> None:
    """Add the extensions to the engine's function table (idempotent)."""
    for name, overloads in _FUNCTIONS.items():
        have = engine._FUNCTIONS.setdefault(name, [])
        for o in overloads:
            if o not in have:
                have.append(o)
    same = lambda receiver, args: "dyn" if receiver in (None, engine.FREE) else receiver  # noqa: E731
    for name in ("slice", "reverse", "distinct", "sort", "@sortByAssociatedKeys"):
        engine._OPT_RESULTS.setdefault(name, same)
    engine._OPT_RESULTS.setdefault("flatten", _flattened)


register()
