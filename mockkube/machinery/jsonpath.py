"""The JSONPath subset that CustomResourceDefinition printer columns use.

Upstream parses ``{<jsonPath>}`` with client-go's ``util/jsonpath`` and takes the first
result; printer columns use dotted fields (``.spec.replicas``), escaped dots
(``.metadata.labels.app\\.kubernetes\\.io/name``), indexes (``[0]``, ``[*]``) and filters
(``.status.conditions[?(@.type=="Ready")].status``). Pure functions over dicts.
"""

from __future__ import annotations

import re
from typing import Any

_MISSING = object()


class JSONPathError(ValueError):
    pass


def parse(path: str) -> list[tuple[str, Any]]:
    """Steps of ``path``: ("field", name), ("index", n), ("all", None), ("filter", (keys, op, value))."""
    p = path.strip()
    if p.startswith("{") and p.endswith("}"):
        p = p[1:-1]
    if not p.startswith((".", "[")):
        raise JSONPathError(f"unrecognized character in action: {p[:1]!r}")
    steps: list[tuple[str, Any]] = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == ".":
            i += 1
            name = []
            while i < len(p) and p[i] not in ".[":
                if p[i] == "\\" and i + 1 < len(p):
                    name.append(p[i + 1])
                    i += 2
                    continue
                name.append(p[i])
                i += 1
            if name:
                steps.append(("field", "".join(name)))
        elif c == "[":
            end = _closing(p, i)
            inner = p[i + 1 : end].strip()
            i = end + 1
            if inner == "*":
                steps.append(("all", None))
            elif inner.startswith("?(") and inner.endswith(")"):
                steps.append(("filter", _filter(inner[2:-1])))
            elif inner[:1] in ("'", '"'):
                steps.append(("field", inner[1:-1]))
            else:
                try:
                    steps.append(("index", int(inner)))
                except ValueError:
                    raise JSONPathError(f"invalid array index {inner}") from None
        else:
            raise JSONPathError(f"unrecognized character in action: {c!r}")
    return steps


def _closing(p: str, start: int) -> int:
    depth, quote = 0, ""
    for j in range(start, len(p)):
        ch = p[j]
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError("unterminated array")


_FILTER = re.compile(r"^@((?:\.[A-Za-z0-9_\-/]+)*)\s*(==|!=|<=|>=|<|>)?\s*(.*)$")


def _filter(expr: str) -> tuple[list[str], str, Any]:
    m = _FILTER.match(expr.strip())
    if not m:
        raise JSONPathError(f"unrecognized filter {expr}")
    keys = [k for k in m.group(1).split(".") if k]
    op, raw = m.group(2) or "", m.group(3).strip()
    value: Any = None
    if op:
        if raw[:1] in ("'", '"'):
            value = raw[1:-1]
        else:
            try:
                value = int(raw)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    value = {"true": True, "false": False}.get(raw, raw)
    return keys, op, value


def _lookup(obj: Any, keys: list[str]) -> Any:
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return _MISSING
        obj = obj[k]
    return obj


def _test(item: Any, flt: tuple[list[str], str, Any]) -> bool:
    keys, op, value = flt
    got = _lookup(item, keys)
    if got is _MISSING:
        return False
    if not op:
        return True
    try:
        return {
            "==": got == value,
            "!=": got != value,
            "<": got < value,
            ">": got > value,
            "<=": got <= value,
            ">=": got >= value,
        }[op]
    except TypeError:
        return False


def find(obj: Any, steps: list[tuple[str, Any]]) -> list[Any]:
    """Every value ``steps`` reach in ``obj`` (missing keys yield nothing, as AllowMissingKeys)."""
    cur = [obj]
    for kind, arg in steps:
        nxt: list[Any] = []
        for v in cur:
            if kind == "field":
                if isinstance(v, dict) and arg in v:
                    nxt.append(v[arg])
            elif kind == "index":
                if isinstance(v, list) and -len(v) <= arg < len(v):
                    nxt.append(v[arg])
            elif kind == "all":
                if isinstance(v, list):
                    nxt.extend(v)
                elif isinstance(v, dict):
                    nxt.extend(v.values())
            elif kind == "filter" and isinstance(v, list):
                nxt.extend(x for x in v if _test(x, arg))
        cur = nxt
    return cur
