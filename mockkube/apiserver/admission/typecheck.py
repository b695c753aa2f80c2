"""ValidatingAdmissionPolicy type checking, as upstream's type-checking controller reports
it in ``status.typeChecking.expressionWarnings``: the policy's expressions are checked
against the schema of every kind its ``matchConstraints`` name exactly (wildcards are not
expanded), and a field that kind does not have is reported with cel-go's rendering:

    apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'
     | object.replicas > 1
     | ......^

Only field names are checked (operand types are not): the commonest mistake, and the one
that makes a policy fail at admission time.
"""

from __future__ import annotations

from typing import Any, Iterator

from mockkube.cel import CELError
from mockkube.cel.engine import _format_issue
from mockkube.cel.parser import CELSyntaxError, Node, parse
from mockkube.machinery import schema

ROOTS = ("object", "oldObject")


def _matched_kinds(spec: dict, registry: Any) -> list[Any]:
    out = []
    for rule in (spec.get("matchConstraints") or {}).get("resourceRules") or []:
        for g in rule.get("apiGroups") or []:
            for v in rule.get("apiVersions") or []:
                for r in rule.get("resources") or []:
                    if "*" in (g, v, r) or "/" in r:
                        continue
                    rt = registry.get(g, v, r)
                    if rt is not None and rt not in out:
                        out.append(rt)
    return out


def _children(n: Node) -> Iterator[Node]:
    if n.target is not None:
        yield n.target
    yield from n.args
    for k, v in n.entries:
        if isinstance(k, Node):
            yield k
        if isinstance(v, Node):
            yield v


def _open(node: schema.Node) -> bool:
    """A schema whose unknown fields are allowed (maps, preserved or untyped objects)."""
    raw = node.raw
    return (
        node.is_map
        or raw.get("x-kubernetes-preserve-unknown-fields") is True
        or raw.get("x-kubernetes-int-or-string") is True
        or not node.properties
    )


def undefined_fields(expression: str, root: schema.Node) -> list[tuple[str, int]]:
    """(field, position) of every select on object/oldObject naming a field the schema lacks."""
    try:
        ast = parse(expression)
    except (CELError, CELSyntaxError, RecursionError):  # validation reports what does not parse
        return []
    found: list[tuple[str, int]] = []

    def resolve(n: Node) -> schema.Node | None:
        if n.kind == "ident":
            return root if n.name in ROOTS else None
        if n.kind == "select" and n.target is not None:
            t = resolve(n.target)
            if t is None:
                return None
            if n.name not in t.properties and not _open(t):
                found.append((n.name, n.pos))
                return None
            return t.field(n.name)
        if n.kind == "index" and n.target is not None:
            t = resolve(n.target)
            for a in n.args:
                walk(a)
            if t is None:
                return None
            return t.items() if t.items() is not None else t.additional()
        walk_children(n)
        return None

    def walk_children(n: Node) -> None:
        for c in _children(n):
            walk(c)

    def walk(n: Node) -> None:
        if n.kind in ("select", "index", "ident"):
            resolve(n)
        else:
            walk_children(n)

    walk(ast)
    return found


def expression_warnings(policy: dict, registry: Any) -> list[dict]:
    """``status.typeChecking.expressionWarnings`` of a ValidatingAdmissionPolicy."""
    spec = policy.get("spec") or {}
    kinds = [(rt, schema.for_type(rt)) for rt in _matched_kinds(spec, registry)]
    kinds = [(rt, root) for rt, root in kinds if root is not None]
    if not kinds:
        return []
    fields: list[tuple[str, str]] = []
    for i, v in enumerate(spec.get("validations") or []):
        fields.append((f"spec.validations[{i}].expression", v.get("expression") or ""))
        if v.get("messageExpression"):
            fields.append((f"spec.validations[{i}].messageExpression", v["messageExpression"]))
    for i, a in enumerate(spec.get("auditAnnotations") or []):
        fields.append((f"spec.auditAnnotations[{i}].valueExpression", a.get("valueExpression") or ""))
    out = []
    for ref, expr in fields:
        lines = []
        for rt, root in kinds:
            for name, pos in undefined_fields(expr, root):
                lines.append(
                    f"{rt.group}/{rt.version}, Kind={rt.kind}: " + _format_issue(expr, f"undefined field '{name}'", pos)
                )
        if lines:
            out.append({"fieldRef": ref, "warning": "\n".join(lines)})
    return out
