"""Worst-case cost estimate of a DRA selector, in the spirit of cel-go's EstimateCost.

Upstream validation rejects a selector whose estimated maximum cost exceeds
CELSelectorExpressionMaxCost (1,000,000): "too complex, exceeds cost limit". The numbers
here follow cel-go's cost model in shape (1 per identifier, select, index and call; string
operations proportional to a tenth of the string size; comprehensions multiply their body
by the size of the range) with the DRA environment's size bounds: at most 32 domains, 32
attributes per domain, strings of at most 64 characters. It is an approximation: plain
selectors cost tens, nested comprehensions over attribute maps cost what they multiply to.
"""

from __future__ import annotations

import math

from mockkube.cel.parser import Node

MAX_ENTRIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_STRING = 64  # DeviceAttributeMaxValueLength
UNKNOWN = 1 << 20

_STRING_FUNCS = {
    "contains",
    "startsWith",
    "endsWith",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "indexOf",
    "lastIndexOf",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_+_",
    "quantity",
    "isQuantity",
    "semver",
    "isSemver",
    "string",
}
_COMPREHENSIONS = {
    "all",
    "exists",
    "exists_one",
    "existsOne",
    "map",
    "filter",
    "transformList",
    "transformMap",
    "transformMapEntry",
}


def _tenth(n: int) -> int:
    return math.ceil(n * 0.1)


def estimate(node: Node) -> int:
    """Estimated maximum cost of evaluating `node`."""
    return _est(node, {})[0]


def _est(n: Node, scope: dict[str, int]) -> tuple[int, int]:
    """(cost, size): size bounds the length of a string or the entries of a collection."""
    k = n.kind
    if k == "lit":
        v = n.value
        return 0, len(v) if isinstance(v, (str, bytes)) else 1
    if k == "ident":
        if n.name == "device":
            return 1, MAX_ENTRIES
        return 1, scope.get(n.name, MAX_STRING)
    if k == "select":
        cost, _ = _est(n.target, scope)
        if n.target.kind == "ident" and n.target.name == "device":
            size = MAX_STRING if n.name == "driver" else MAX_ENTRIES
        else:
            size = MAX_STRING
        return cost + 1, size
    if k == "index":
        tcost, tsize = _est(n.target, scope)
        icost, _ = _est(n.args[0], scope)
        inner = MAX_ENTRIES if _is_domain_map(n.target) else MAX_STRING
        return tcost + icost + 1, inner
    if k == "list":
        parts = [_est(a, scope) for a in n.args]
        return 10 + sum(c for c, _ in parts), len(parts)
    if k == "map":
        cost = 30
        for a, b in n.entries:
            cost += _est(a, scope)[0] + _est(b, scope)[0]
        return cost, len(n.entries)
    if k == "message":
        return 40 + sum(_est(v, scope)[0] for _f, v in n.entries), len(n.entries)
    if k == "cond":
        parts = [_est(a, scope) for a in n.args]
        return parts[0][0] + max(parts[1][0], parts[2][0]), max(parts[1][1], parts[2][1])
    # calls
    if n.target is not None and n.name in _COMPREHENSIONS and n.args and n.args[0].kind == "ident":
        rcost, rsize = _est(n.target, scope)
        inner = dict(scope)
        inner[n.args[0].name] = MAX_STRING
        first = 1
        if len(n.args) >= 3 and n.args[1].kind == "ident" and n.name != "map":  # two variables
            inner[n.args[1].name] = MAX_STRING
            first = 2
        body = sum(_est(a, inner)[0] for a in n.args[first:])
        return rcost + rsize * (body + 2) + 1, rsize
    if (
        n.target is not None
        and n.name == "bind"
        and n.target.kind == "ident"
        and n.target.name == "cel"
        and len(n.args) == 3
    ):
        icost, isize = _est(n.args[1], scope)
        inner = dict(scope)
        inner[n.args[0].name] = isize
        bcost, bsize = _est(n.args[2], inner)
        return icost + bcost, bsize
    parts = [_est(a, scope) for a in n.args]
    cost = 1 + sum(c for c, _ in parts)
    sizes = [s for _, s in parts]
    if n.target is not None:
        tcost, tsize = _est(n.target, scope)
        cost += tcost
        sizes.insert(0, tsize)
    if n.name == "matches" and len(sizes) == 2:
        cost += _tenth(sizes[0]) * max(sizes[1], 1)
    elif n.name in _STRING_FUNCS and sizes:
        cost += _tenth(max(sizes))
    size = sum(sizes) if n.name == "_+_" else (max(sizes) if sizes else 1)
    return cost, size


def _is_domain_map(n: Node) -> bool:
    """device.attributes / device.capacity: indexing yields a map of up to 32 entries."""
    return (
        n.kind == "select"
        and n.name in ("attributes", "capacity")
        and n.target is not None
        and n.target.kind == "ident"
        and n.target.name == "device"
    )
