"""What a function call costs at run time, as cel-go's CostTracker.costCall charges it with
Kubernetes' library.CostEstimator.CallCost in front (interpreter/runtimecost.go,
k8s.io/apiserver pkg/cel/library/cost.go).

Pure: `call_cost(function, args, result)` with the receiver first among ``args``, as
cel-go passes them. The engine's tracked programs (CRD rules) charge it per evaluated call;
identifiers and field selections cost 1, list/map/message literals 10/30/40, as in cel-go.
"""

from __future__ import annotations

import math
from typing import Any

from mockkube.cel import lib

STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
MAX_NAME_FORMAT_REGEX_SIZE = 128

_UNIT = frozenset(
    (
        "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed", "reason",
        "error", "errored", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger",
        "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major",
        "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
    )
)  # fmt: skip
_SIZED_COMPARE = frozenset(("_<_", "_<=_", "_>_", "_>=_"))
_SETS = {"sets.contains": 1.0, "sets.intersects": 1.0, "sets.equivalent": 2.0}
_UNIT_EQUALITY = frozenset(("quantity", "semver", "net.IP", "net.CIDR", "url", "kubernetes.NamedFormat"))


def actual_size(v: Any) -> int:
    """cel-go's actualSize: the size of a string (characters), bytes, list or map; an
    optional's value's; 1 for anything else."""
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    present = getattr(v, "present", None)
    if present is True:
        return actual_size(v.value)
    return 1


def _ceil(x: float) -> int:
    return math.ceil(x)


def _traversal(v: Any) -> int:
    """library.traversalCost: a tenth of every string's bytes, 1 per other scalar."""
    if isinstance(v, str):
        return int(len(v.encode()) * STRING_TRAVERSAL)
    if isinstance(v, bytes):
        return int(len(v) * STRING_TRAVERSAL)
    if isinstance(v, list):
        return sum(_traversal(x) for x in v)
    if isinstance(v, dict):
        return sum(_traversal(k) + _traversal(x) for k, x in v.items())
    return 1


def _kind(v: Any) -> str:
    if isinstance(v, lib.quantity_class()):
        return "quantity"
    name = type(v).__name__
    return {"Semver": "semver", "NamedFormat": "kubernetes.NamedFormat"}.get(name, name)


def _k8s(function: str, args: list, result: Any) -> int | None:
    """library.CostEstimator.CallCost; None where it has no figure."""
    if function == "check":
        return 350000
    if function in _UNIT:
        return 1
    if function in ("fieldSelector", "labelSelector"):
        if len(args) >= 2:
            n = actual_size(args[1])
            parse = _ceil(n * STRING_TRAVERSAL)
            reqs = _ceil(_ceil(n * 0.5) * 50.0)
            return 10 + parse + reqs
        return None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        return _traversal(args[0]) if args else 0
    if function in ("url", "lowerAscii", "upperAscii", "substring", "trim", "jsonpatch.escapeKey"):
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL) if args else None
    if function in ("replace", "split"):
        return _ceil(actual_size(args[0]) * 2 * STRING_TRAVERSAL) if args else None
    if function == "join":
        return _ceil(actual_size(result) * 2 * STRING_TRAVERSAL) if args else None
    if function in ("find", "findAll"):
        if len(args) >= 2:
            s = _ceil((1.0 + actual_size(args[0])) * STRING_TRAVERSAL)
            r = _ceil(actual_size(args[1]) * REGEX_LENGTH)
            return s * r
        return None
    if function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver"):
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL) if args else None
    if function == "ip":
        if args and _kind(args[0]) == "net.CIDR":
            return 1
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL) if args else None
    if function == "ip.isCanonical":
        return _ceil(actual_size(args[0]) * 2 * STRING_TRAVERSAL) if args else None
    if function in ("containsIP", "containsCIDR"):
        if len(args) >= 2:
            cidr = actual_size(args[0])
            cost = _ceil((cidr + cidr) * STRING_TRAVERSAL)
            if function == "containsCIDR":
                cost += _ceil(cidr * STRING_TRAVERSAL) + 1
            if isinstance(args[1], str):
                cost += _ceil(actual_size(args[1]) * STRING_TRAVERSAL)
            return cost
        return None
    if function == "validate":
        if len(args) >= 2:
            regex = getattr(args[0], "max_regex_size", MAX_NAME_FORMAT_REGEX_SIZE)
            s = _ceil((1.0 + actual_size(args[1])) * STRING_TRAVERSAL)
            return s * _ceil(regex * REGEX_LENGTH)
        return None
    if (
        function == "_==_"
        and len(args) == 2
        and (_kind(args[0]) in _UNIT_EQUALITY or "authz" in type(args[0]).__module__)
    ):
        return 1
    return None


def _lists_ext(function: str, args: list, result: Any) -> int | None:
    """ext.Lists(v3)'s cost trackers: an allocating call costs 1 + 10 + its size times a factor."""
    if function in ("slice", "lists.range", "reverse") and isinstance(result, list):
        if function == "lists.range" or (args and isinstance(args[0], list)):
            return len(result) + 11
    if function == "flatten" and args and isinstance(args[0], list):
        depth = args[1] if len(args) == 2 and type(args[1]) is int else 1
        return int(len(args[0]) * float(depth)) + 11
    if function in ("distinct", "sort", "@sortByAssociatedKeys"):
        items = args[1] if function == "@sortByAssociatedKeys" and len(args) == 2 else (args[0] if args else None)
        if isinstance(items, list):
            n = len(items)
            factor = 2.0 + (STRING_TRAVERSAL if n and isinstance(items[0], (str, bytes)) else 0.0)
            return int(n * n * factor) + 11
    return None


def call_cost(function: str, args: list, result: Any) -> int:
    """The runtime cost of one call of ``function`` (receiver first in ``args``)."""
    lists = _lists_ext(function, args, result)
    if lists is not None:
        return lists
    if function in _SETS and len(args) == 2:
        return 1 + int(actual_size(args[0]) * actual_size(args[1]) * _SETS[function])
    k8s = _k8s(function, args, result)
    if k8s is not None:
        return k8s
    if function in ("startsWith", "endsWith", "strings.quote") and args and isinstance(args[0], str):
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL)
    if function == "format" and args and isinstance(args[0], str):
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL)
    if function in ("string", "bytes") and len(args) == 1 and isinstance(args[0], (str, bytes)):
        if isinstance(args[0], bytes) != (function == "bytes"):
            return _ceil(actual_size(args[0]) * STRING_TRAVERSAL)
    if function == "@in" and len(args) == 2 and isinstance(args[1], list):
        return actual_size(args[1])
    if function in ("_==_", "_!=_") and len(args) == 2:
        return _ceil(min(actual_size(args[0]), actual_size(args[1])) * STRING_TRAVERSAL)
    if function in _SIZED_COMPARE and len(args) == 2 and isinstance(args[0], (str, bytes)):
        return _ceil(min(actual_size(args[0]), actual_size(args[1])) * STRING_TRAVERSAL)
    if function == "_+_" and len(args) == 2 and isinstance(args[0], (str, bytes)):
        return _ceil((actual_size(args[0]) + actual_size(args[1])) * STRING_TRAVERSAL)
    if function == "matches" and len(args) == 2 and isinstance(args[0], str):
        s = _ceil((1.0 + actual_size(args[0])) * STRING_TRAVERSAL)
        return s * _ceil(actual_size(args[1]) * REGEX_LENGTH)
    if function == "contains" and len(args) == 2 and isinstance(args[0], str):
        return _ceil(actual_size(args[0]) * STRING_TRAVERSAL) * _ceil(actual_size(args[1]) * STRING_TRAVERSAL)
    return 1
