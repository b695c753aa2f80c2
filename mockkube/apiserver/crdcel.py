"""``x-kubernetes-validations`` of custom resources: CEL rules evaluated against the object.

As ``apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go``: every schema node with
rules binds ``self`` to the value at that node and, for transition rules (those naming
``oldSelf``), ``oldSelf`` to the correlated old value (through object fields, map keys and
``x-kubernetes-list-type: map`` items); a transition rule is skipped when there is no old
value unless ``optionalOldSelf`` is set (then ``oldSelf`` is an optional). A failing rule is
a field error at the node (or at its ``fieldPath``) with the rule's ``reason``, ``message``
or evaluated ``messageExpression``. Pure functions over dicts.
"""

from __future__ import annotations

import re
from typing import Any

from mockkube.cel import CELError, compile_with
from mockkube.cel.celtypes import parse_duration, parse_timestamp
from mockkube.cel.engine import COST_KEY, DURATION, OPT, TIMESTAMP, ObjectType, object_type
from mockkube.cel.k8slib import FORMAT, optional_type
from mockkube.cel.lib import CELRuntimeError
from mockkube.cel.parser import LITERAL_WORDS, RESERVED_WORDS
from mockkube.cel.schemavalues import MapList, ObjectMap, SchemaList, SetList
from mockkube.machinery import fielderrors as fe

# upstream's per-expression static cost limit (StaticEstimatedCostLimit) and per-request budget
STATIC_COST_LIMIT = 10_000_000
RUNTIME_COST_BUDGET = 10_000_000
PER_CALL_LIMIT = 1_000_000  # one rule's evaluation (PerCallLimit)

_OLD_SELF = re.compile(r"\boldSelf\b")
VARIABLES = (("self", "dyn"), ("oldSelf", "dyn"), ("format", "format_lib"))


def is_transition_rule(rule: str) -> bool:
    return bool(_OLD_SELF.search(rule or ""))


def compile_rule(rule: str, node: dict | None = None, root: bool = False, optional_old: bool = False) -> Any:
    """The compiled rule; CELError with upstream's compilation message. With the schema
    ``node`` the rule sits on, ``self`` (and ``oldSelf``) are typed as upstream types them,
    so an undeclared field is a compile error; ``root``: the node is the resource's root."""
    t = decl_type(node, root) if node is not None else None
    if t is None:  # no schema, or one CEL cannot type (only x-kubernetes-preserve-unknown-fields)
        return compile_with(rule, VARIABLES, tracked=True)
    return compile_with(
        rule, (("self", t), ("oldSelf", (OPT, t) if optional_old else t), ("format", "format_lib")), tracked=True
    )


_DECLS: dict[tuple[int, bool], tuple[dict, Any]] = {}  # (id(schema node), root) -> (node, CEL type)
_FORMAT_TYPES = {"byte": "bytes", "duration": DURATION, "date": TIMESTAMP, "date-time": TIMESTAMP}
_META = {"name": {"type": "string"}, "generateName": {"type": "string"}}


def decl_type(node: Any, root: bool = False, name: str = "self") -> Any:
    """The CEL type of values of a schema node (upstream's SchemaDeclType): objects with
    properties are objects of those fields (a resource's root and an embedded resource also
    have apiVersion, kind and metadata.name/generateName), additionalProperties maps,
    arrays lists, formats their types, int-or-string dyn. None for a node with no type (only
    x-kubernetes-preserve-unknown-fields), or a list or map of such: upstream declares no
    field for it, so rules cannot name it."""
    if not isinstance(node, dict):
        return None
    key = (id(node), root)
    hit = _DECLS.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    typ = node.get("type")
    out: Any
    if node.get("x-kubernetes-int-or-string"):
        out = "dyn"
    elif typ == "object":
        props = node.get("properties")
        embedded = bool(node.get("x-kubernetes-embedded-resource"))
        addl = node.get("additionalProperties")
        if props is not None or embedded or root:
            decl = ObjectType(name)
            out = object_type(decl)
            _bounded(_DECLS)[key] = (node, out)  # before the fields: a field may refer back
            fields = dict(props or {})
            if embedded or root:
                meta = dict(_META)
                declared = fields.get("metadata")
                if isinstance(declared, dict):
                    meta.update(declared.get("properties") or {})
                fields.setdefault("apiVersion", {"type": "string"})
                fields.setdefault("kind", {"type": "string"})
                fields["metadata"] = {"type": "object", "properties": meta}
            for k, sub in fields.items():
                cel_name = escape(k)
                ft = decl_type(sub, False, f"{name}.{k}")
                if cel_name is not None and ft is not None:
                    decl.fields[cel_name] = ft
                    if cel_name == f"__{k}__" and k in RESERVED_WORDS:
                        decl.fields[k] = ft  # `self.if` as well as `self.__if__`
            return out
        if isinstance(addl, dict):
            vt = decl_type(addl, False, f"{name}.@values")
            out = ("map", "string", vt) if vt is not None else None
        else:
            out = "dyn" if addl is True else object_type(ObjectType(name))
    elif typ == "array":
        it = decl_type(node.get("items"), False, f"{name}.@idx")
        out = ("list", it) if it is not None else None
    elif typ == "string":
        out = _FORMAT_TYPES.get(node.get("format", ""), "string")
    elif typ in ("integer", "number", "boolean"):
        out = {"integer": "int", "number": "double", "boolean": "bool"}[typ]
    else:
        out = None
    _bounded(_DECLS)[key] = (node, out)
    return out


# ---------------------------------------------------------------- static cost (upstream's CRD size estimator)

MAX_REQUEST_SIZE = 3 * 1024 * 1024  # celconfig.MaxRequestSizeBytes
STATIC_CRD_COST_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit: all rules of one version's schema


class CostDecl:
    """What the cost estimator needs of a schema node's DeclType (k8s.io/apiserver
    pkg/cel/common/schemas.go SchemaDeclType): the most elements (characters, items,
    properties) a value may have, the fewest bytes it serializes to, and its children."""

    __slots__ = ("max_elements", "min_size", "fields", "elem", "key")

    def __init__(self, max_elements: int = 0, min_size: int = 1) -> None:
        self.max_elements, self.min_size = max_elements, min_size
        self.fields: dict[str, CostDecl] = {}
        self.elem: CostDecl | None = None
        self.key: CostDecl | None = None


_COST_DECLS: dict[tuple[int, bool], tuple[dict, Any]] = {}
_STRING_KEY = CostDecl(0, 2)
_ROOT_PROPS = {
    "kind": {"type": "string"},
    "apiVersion": {"type": "string"},
    "metadata": {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}},
}  # map keys: apiservercel.StringType, no declared maximum


def _max_string(node: dict) -> int:
    """estimateMaxStringLengthPerRequest."""
    if node.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    return {"duration": 32, "date": 12, "date-time": 32}.get(node.get("format", ""), MAX_REQUEST_SIZE - 2)


def _nonneg(v: Any) -> int:
    return max(int(v), 0)


def cost_decl(node: Any, root: bool = False) -> CostDecl | None:
    """The sizes of a schema node's values as upstream's SchemaDeclType bounds them; None
    where CEL declares no type (as `decl_type`)."""
    if not isinstance(node, dict):
        return None
    key = (id(node), root)
    hit = _COST_DECLS.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    out = _cost_decl(node, root)
    _bounded(_COST_DECLS)[key] = (node, out)
    return out


def _cost_decl(node: dict, root: bool) -> CostDecl | None:
    if node.get("x-kubernetes-int-or-string"):
        ml = node.get("maxLength")
        return CostDecl(_nonneg(ml) * 4 if ml is not None else _max_string(node), 1)
    typ = node.get("type")
    if root:  # WithTypeAndObjectMeta: what rules see of the type and object meta
        props = dict(node.get("properties") or {})
        props.update(_ROOT_PROPS)
        node = dict(node, properties=props)
    if typ == "array":
        items = node.get("items")
        if not isinstance(items, dict):
            return None
        it = cost_decl(items, bool(items.get("x-kubernetes-embedded-resource")))
        if it is None:
            return None
        mi = node.get("maxItems")
        d = CostDecl(_nonneg(mi) if mi is not None else (MAX_REQUEST_SIZE - 2) // (it.min_size + 1), 2)
        d.elem = it
        return d
    if typ == "object" or root:
        addl = node.get("additionalProperties")
        if isinstance(addl, dict):
            vt = cost_decl(addl, bool(addl.get("x-kubernetes-embedded-resource")))
            if vt is None:
                return None
            mp = node.get("maxProperties")
            d = CostDecl(_nonneg(mp) if mp is not None else (MAX_REQUEST_SIZE - 2) // (vt.min_size + 6), 2)
            d.elem, d.key = vt, _STRING_KEY
            return d
        d = CostDecl(0, 2)
        required = set(node.get("required") or ())
        min_size = 2
        for name, prop in (node.get("properties") or {}).items():
            if not isinstance(prop, dict):
                continue
            ft = cost_decl(prop, bool(prop.get("x-kubernetes-embedded-resource")))
            if ft is None:
                continue
            cel_name = escape(name)
            if cel_name is not None:
                d.fields[cel_name] = ft
            if name in required and prop.get("default") is None:
                min_size += len(name) + ft.min_size + 4
        d.min_size = min_size
        return d
    if typ == "string":
        fmt = node.get("format", "")
        ml = node.get("maxLength")
        if fmt == "byte":
            return CostDecl(_nonneg(ml) if ml is not None else _max_string(node), 2)
        if fmt == "duration":
            return CostDecl(32, 3)
        if fmt == "date":
            return CostDecl(12, 12)
        if fmt == "date-time":
            return CostDecl(32, 21)
        if ml is not None:
            return CostDecl(_nonneg(ml) * 4, 2)
        enum = node.get("enum")
        if enum:
            return CostDecl(max((len(v) for v in enum if isinstance(v, str)), default=0), 2)
        return CostDecl(_max_string(node), 2)
    if typ == "boolean":
        return CostDecl(0, 4)
    if typ in ("number", "integer"):
        return CostDecl(0, 1)
    return None


def _size_estimator(decl: CostDecl) -> Any:
    """apiextensions' sizeEstimator: a field path below ``self`` (or ``oldSelf``) looked
    up in the declarations; the most elements it declares."""

    def estimate(path: list[str], _t: Any) -> tuple[int, int] | None:
        if not path:
            return None
        cur: CostDecl | None = decl
        for name in path[1:]:
            if name in ("@items", "@values"):
                cur = cur.elem
            elif name == "@keys":
                cur = cur.key
            else:
                cur = cur.fields.get(name)
            if cur is None:
                return None
        return (0, cur.max_elements)

    return estimate


def rule_cost(prog: Any, node: dict, root: bool = False) -> int:
    """The estimated maximum cost of a compiled rule on ``node`` (cel.EstimateCost with
    the CRD's size estimator); 0 where CEL declares no type for the node."""
    decl = cost_decl(node, root)
    sizes = _size_estimator(decl) if decl is not None else None
    return prog.cost_estimate(sizes, key=("crd", id(decl)))[1]


def max_cardinality(node: dict, root: bool = False) -> int:
    """How often data of this schema could repeat in one request (upstream's
    maxCardinality of the DeclType's MinSerializedSize)."""
    decl = cost_decl(node, root)
    return MAX_REQUEST_SIZE // ((decl.min_size if decl is not None else 1) + 1)


def cost_error_message(what: str, cost: int, limit: int) -> str:
    """upstream's getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{what} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


class _Budget:
    """What is left of the request's runtime cost budget (RuntimeCELCostBudget)."""

    def __init__(self, total: int, per_call: int = PER_CALL_LIMIT) -> None:
        self.remaining = total
        self.per_call = per_call  # PerCallLimit: one rule's (or messageExpression's) evaluation
        self.exhausted = False


def validate(obj: dict, old: dict | None, schema: dict, budget: int = RUNTIME_COST_BUDGET) -> list[fe.FieldError]:
    """Field errors of every failing rule in ``obj`` (``old`` on update)."""
    errs: list[fe.FieldError] = []
    _walk(obj, old, root_node(schema), fe.Path(""), errs, old is not None, _Budget(budget), True)
    return errs


_ROOTS: dict[int, tuple[dict, dict]] = {}  # id(version schema) -> (schema, the root node rules see)


def root_node(schema: dict) -> dict:
    """The version's schema without metadata (rules see metadata as the root's declared
    metadata.name and generateName), made once per schema so its CEL type is too."""
    hit = _ROOTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    top = dict(schema)
    top["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"}
    _bounded(_ROOTS)[id(schema)] = (schema, top)
    return top


def _bounded(cache: dict) -> dict:
    """A cache keyed by schema nodes' ids is emptied when it grows past what any set of
    CRDs needs (deleted CRDs' schemas would otherwise stay)."""
    if len(cache) > 20_000:
        cache.clear()
    return cache


def _type_of(node: dict) -> str:
    if node.get("x-kubernetes-int-or-string"):
        return "string"
    return node.get("type", "object")


_TYPED_FORMATS = ("date-time", "date", "duration", "byte")
_CONVERTS: dict[int, tuple[dict, bool]] = {}  # id(schema node) -> (node, values below it need converting)

# k8s.io/apiserver pkg/cel/escaping.go: property names as CEL sees them
_RESERVED = RESERVED_WORDS | LITERAL_WORDS
_EXPAND = re.compile(r"(__|[-./]|[^a-zA-Z0-9\-./_])")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """A property's name in CEL (``__true__``, ``a__dash__b``), None when CEL cannot name it."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    bad = False

    def sub(m: re.Match) -> str:
        nonlocal bad
        out = _ESCAPES.get(m.group(0))
        if out is None:
            bad = True
            return ""
        return out

    out = _EXPAND.sub(sub, name)
    return None if bad else out


def _converts(node: Any) -> bool:
    """Whether values under ``node`` differ from the stored JSON as CEL sees them: typed
    string formats, numbers held as integers, lists (set and map semantics, their index
    errors), escaped property names, null properties (absent in CEL)."""
    if not isinstance(node, dict):
        return False
    hit = _CONVERTS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    typ = node.get("type")
    props = node.get("properties")
    found = (
        (typ == "string" and node.get("format") in _TYPED_FORMATS)
        or typ in ("number", "array")
        or (props is not None)
        or _converts(node.get("additionalProperties"))
    )
    _bounded(_CONVERTS)[id(node)] = (node, found)  # the node is kept, so its id is not reused
    return found


def _string_value(text: str, fmt: str) -> Any:
    """A string of a typed format as Kubernetes' UnstructuredToVal gives it to CEL."""
    try:
        if fmt == "date-time":
            t = text.replace(" ", "T", 1)
            if len(t) == 19:  # no zone: strfmt reads it as UTC
                t += "Z"
            return parse_timestamp(t)
        if fmt == "date":
            return parse_timestamp(text + "T00:00:00Z")
        if fmt == "duration":
            return parse_duration(text)
        if fmt == "byte":
            import base64
            import binascii

            try:
                return base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                return text
    except CELRuntimeError:
        return text  # schema validation reports the bad format
    return text


def cel_value(value: Any, node: dict) -> Any:
    """``value`` as rules see it (upstream's UnstructuredToVal): strings of format
    date-time/date are timestamps, duration durations, byte bytes; a number schema's
    integers are doubles; properties are named as CEL escapes them and a null property is
    absent; lists carry their list-type's equality and ``+``. The value itself when the
    schema below ``node`` changes nothing."""
    if not _converts(node):
        return value
    typ = node.get("type")
    if isinstance(value, str):
        fmt = node.get("format")
        return _string_value(value, fmt) if typ == "string" and fmt in _TYPED_FORMATS else value
    if typ == "number" and type(value) is int:
        return float(value)
    if isinstance(value, dict):
        props = node.get("properties")
        if props is not None or node.get("x-kubernetes-embedded-resource"):
            out = ObjectMap()
            for k, v in value.items():
                if v is None:
                    continue
                name = escape(k) or k  # a name CEL cannot spell stays, for a map list's keys
                sub = (props or {}).get(k)
                out[name] = cel_value(v, sub) if isinstance(sub, dict) else v
            return out
        addl = node.get("additionalProperties")
        if isinstance(addl, dict):
            return {k: cel_value(v, addl) for k, v in value.items()}
        return value
    if isinstance(value, list) and typ == "array":
        items = node.get("items")
        converted = [cel_value(v, items) for v in value] if _converts(items) else value
        kind = node.get("x-kubernetes-list-type")
        if kind == "set":
            return SetList(converted)
        if kind == "map":
            keys = tuple(escape(k) or k for k in node.get("x-kubernetes-list-map-keys") or ())
            return MapList(converted, keys)
        return SchemaList(converted)
    return value


def _walk(
    value: Any, old: Any, node: dict, path: Any, errs: list, has_old: bool, budget: _Budget, root: bool = False
) -> None:
    if value is None or budget.exhausted:
        return
    rules = node.get("x-kubernetes-validations")
    if rules:
        _check(value, old, has_old, node, rules, path, errs, budget, root)
    if isinstance(value, dict):
        props = node.get("properties")
        addl = node.get("additionalProperties")
        for k, v in value.items():
            sub = (props or {}).get(k) if props is not None else (addl if isinstance(addl, dict) else None)
            if sub is None:
                continue
            o_has = has_old and isinstance(old, dict) and k in old
            child = path.key(k) if props is None else path.child(k)
            _walk(v, old[k] if o_has else None, sub, child, errs, o_has, budget)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        items = node["items"]
        keys = node.get("x-kubernetes-list-map-keys") or []
        old_by_key: dict = {}
        if has_old and isinstance(old, list) and node.get("x-kubernetes-list-type") == "map" and keys:
            for o in old:
                if isinstance(o, dict):
                    old_by_key[tuple(repr(o.get(k)) for k in keys)] = o
        for i, v in enumerate(value):
            o = None
            if old_by_key and isinstance(v, dict):
                o = old_by_key.get(tuple(repr(v.get(k)) for k in keys))
            _walk(v, o, items, path.index(i), errs, o is not None, budget)


_OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


def _evaluate(prog: Any, act: dict, limit: int) -> tuple[Any, str | None, int]:
    """(value, error text, runtime cost) of one evaluation held to ``limit`` (PerCallLimit)."""
    call = [limit]
    act[COST_KEY] = call
    try:
        return prog.evaluate(act), None, limit - call[0]
    except CELError as exc:
        return None, str(exc), limit - call[0]


def _check(
    value: Any, old: Any, has_old: bool, node: dict, rules: list, path: Any, errs: list, budget: _Budget, root: bool
) -> None:
    """upstream's validateExpressions: each rule's runtime cost is taken from the
    request's budget; a rule over PerCallLimit, or over what is left, ends validation."""
    if budget.remaining <= 0:
        errs.append(fe.invalid(str(path), _type_of(node), _OUT_OF_BUDGET))
        budget.exhausted = True
        return
    cel_self = cel_value(value, node)
    cel_old = cel_value(old, node) if has_old else old
    for rule in rules:
        expr = rule.get("rule", "")
        transition = is_transition_rule(expr)
        optional = bool(rule.get("optionalOldSelf"))
        if transition and not has_old and not optional:
            continue
        try:
            prog = compile_rule(expr, node, root, optional and transition)
        except CELError:
            continue  # rejected when the CRD was written
        old_value: Any = cel_old
        if optional and transition:
            old_value = optional_type(old, True) if has_old else optional_type()
        act = {"self": cel_self, "oldSelf": old_value, "format": FORMAT}
        where = path
        if rule.get("fieldPath"):
            where = _field_path(path, rule["fieldPath"])
        ok, text, cost = _evaluate(prog, act, budget.per_call)
        if cost > budget.remaining:
            errs.append(fe.invalid(str(path), _type_of(node), _OUT_OF_BUDGET))
            budget.exhausted = True
            return
        budget.remaining -= cost
        if text is not None:
            what = _rule_error_string(rule)
            if text.startswith("no such overload"):
                errs.append(
                    fe.invalid(
                        str(path),
                        _type_of(node),
                        f"'{text}': call arguments did not match a supported operator, function or macro "
                        f"signature for rule: {what}",
                    )
                )
            elif text.startswith("operation cancelled: actual cost limit exceeded"):
                errs.append(
                    fe.invalid(
                        str(path),
                        _type_of(node),
                        f"'{text}': no further validation rules will be run due to call cost exceeds limit for "
                        f"rule: {what}",
                    )
                )
                budget.exhausted = True
                return
            else:
                errs.append(fe.invalid(str(path), _type_of(node), f"{text} evaluating rule: {what}"))
            continue
        if ok is True:
            continue
        message = rule.get("message") or f"failed rule: {_rule_text(expr)}"
        if rule.get("messageExpression"):
            try:
                mprog = compile_rule(rule["messageExpression"], node, root, optional and transition)
            except CELError:
                mprog = None
            if mprog is not None:
                act["oldSelf"] = cel_old
                got, mtext, mcost = _evaluate(mprog, act, budget.per_call)
                if mcost > budget.remaining:
                    errs.append(
                        fe.invalid(
                            str(where),
                            _type_of(node),
                            "messageExpression evaluation failed due to running out of cost budget, no further "
                            "validation rules will be run",
                        )
                    )
                    budget.exhausted = True
                    return
                if mtext is not None and mtext.startswith("operation cancelled: actual cost limit exceeded"):
                    errs.append(
                        fe.invalid(
                            str(where),
                            _type_of(node),
                            "no further validation rules will be run due to call cost exceeds limit for "
                            f'messageExpression: "{rule["messageExpression"]}"',
                        )
                    )
                    budget.exhausted = True
                    return
                budget.remaining -= mcost
                if (
                    mtext is None
                    and isinstance(got, str)
                    and got.strip()
                    and "\n" not in got
                    and len(got.strip()) <= 5120
                ):
                    message = got.strip()
        errs.append(_error(str(where), _type_of(node), value, message, rule.get("reason")))


def _rule_error_string(rule: dict) -> str:
    """upstream's ruleErrorString: the rule's message, else the rule."""
    return (rule.get("message") or "").strip() or (rule.get("rule") or "").strip()


def _rule_text(expr: str) -> str:
    return expr.strip()


def _error(where: str, type_name: str, value: Any, message: str, reason: str | None) -> fe.FieldError:
    if reason == "FieldValueForbidden":
        return fe.forbidden(where, message)
    if reason == "FieldValueRequired":
        return fe.required(where, message)
    if reason == "FieldValueDuplicate":
        return fe.duplicate(where, type_name)
    return fe.invalid(where, type_name, message)


def _field_path(base: Any, rel: str) -> Any:
    """Append a rule's ``fieldPath`` (``.spec.x``, ``.map['key']``, ``.list[0]``) to ``base``."""
    p = base
    for m in re.finditer(r"\.([A-Za-z0-9_\-]+)|\['([^']*)'\]|\[(\d+)\]", rel):
        if m.group(1) is not None:
            p = p.child(m.group(1))
        elif m.group(2) is not None:
            p = p.key(m.group(2))
        else:
            p = p.index(int(m.group(3)))
    return p
