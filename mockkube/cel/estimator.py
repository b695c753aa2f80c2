"""Static cost estimation as cel-go's ``checker.Cost`` computes it, with Kubernetes' library
cost hooks (k8s.io/apiserver pkg/cel/library/cost.go).

cel-go estimates over the macro-expanded, type-checked AST: every macro is a comprehension
(``all`` is ``accu = true; loop while @not_strictly_false(accu); accu = accu && p``) and the
cost of a comprehension is the range's size times the cost of one step. mockkube's parser
keeps macros as calls, so this module first rewrites the checked AST into cel-go's shape
(`_Expander`, typed from the types the compiler recorded for each node) and then runs a
port of cel-go's ``coster`` over it: the same cost units (1 per identifier and select,
10/30/40 per list/map/message literal), the same size propagation through literals,
concatenation, ``split``, comprehensions and ``cel.bind``, and the same field paths
(``self.spec.items.@items``) handed to a size estimator, which for a CRD looks the path up in
the schema (maxLength, maxItems, maxProperties or the sizes a 3 MiB request bounds).

Pure: `estimate_cost(ast, types, sizes)` returns (min, max) as cel-go's CostEstimate.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from mockkube.cel.parser import Node

MAX_UINT64 = 2**64 - 1
_TWO_TO_64 = float(2**64)
STRING_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
REGEX_LENGTH = 0.25  # common.RegexStringLengthCostFactor
MAX_FORMAT_SIZE = 64  # apiserver cel.MaxFormatSize
MAX_NAME_FORMAT_REGEX_SIZE = 128
ACCU = "@result"

Range = tuple[int, int]  # (min, max), each saturating at MAX_UINT64
UNKNOWN: Range = (0, MAX_UINT64)
# a size estimator: (field path from a variable, CEL type) -> size range, or None
SizeEstimator = Callable[[list[str], Any], "Range | None"]


def _add(a: Range, b: Range) -> Range:
    return (min(a[0] + b[0], MAX_UINT64), min(a[1] + b[1], MAX_UINT64))


def _mul(a: Range, b: Range) -> Range:
    return (min(a[0] * b[0], MAX_UINT64), min(a[1] * b[1], MAX_UINT64))


def _factor_one(x: int, y: float) -> int:
    xf = float(x)
    if xf > 0 and y > 0 and xf > float(MAX_UINT64) / y:
        return MAX_UINT64
    c = math.ceil(xf * y)
    if c >= _TWO_TO_64:
        return MAX_UINT64
    return int(c)


def _factor(a: Range, y: float) -> Range:
    """multiplyByCostFactor: the product rounded up, as Go's float64 arithmetic does it."""
    return (_factor_one(a[0], y), _factor_one(a[1], y))


def _union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


# ---------------------------------------------------------------- types as cel-go sees them


def _kind(t: Any) -> str:
    """cel-go's type kind of one of the compiler's types."""
    if isinstance(t, tuple):
        k = t[0]
        if k == "object":
            return "struct"
        if k in ("list", "map"):
            return k
        if k == "optional_type":
            return "opaque"
        return k
    if t in ("bool", "int", "uint", "double", "string", "bytes", "dyn", "null_type", "type"):
        return t
    if t in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        return "scalar_time"
    if t in ("net.IP", "net.CIDR", "optional_type"):
        return "opaque"
    if t == "*":
        return "type_param"
    if t in ("list", "map"):
        return t
    return "struct"  # device, quantity, semver, url, kubernetes.NamedFormat, authorizer, ...


def _is_scalar(t: Any) -> bool:
    k = _kind(t)
    if k in ("bool", "double", "int", "uint", "scalar_time"):
        return True
    if isinstance(t, tuple) and t[0] == "optional_type":
        return _is_scalar(t[1])
    return False


def _list_elem(t: Any) -> Any:
    if isinstance(t, tuple) and t[0] == "list":
        return t[1]
    return None


# ---------------------------------------------------------------- cel-go's AST shape


class E:
    """A node of the expanded AST: lit, ident, select, call, list, map, struct, comp."""

    __slots__ = (
        "kind",
        "t",
        "value",
        "name",
        "operand",
        "test_only",
        "target",
        "args",
        "overloads",
        "entries",
        "iter_range",
        "iter_var",
        "iter_var2",
        "accu_var",
        "accu_init",
        "loop_cond",
        "loop_step",
        "result",
    )

    def __init__(self, kind: str, t: Any = "dyn", **kw: Any) -> None:
        self.kind = kind
        self.t = t
        self.value = kw.get("value")
        self.name = kw.get("name", "")
        self.operand = kw.get("operand")
        self.test_only = kw.get("test_only", False)
        self.target = kw.get("target")
        self.args = kw.get("args") or []
        self.overloads = kw.get("overloads") or []
        self.entries = kw.get("entries") or []
        self.iter_range = kw.get("iter_range")
        self.iter_var = kw.get("iter_var", "")
        self.iter_var2 = kw.get("iter_var2", "")
        self.accu_var = kw.get("accu_var", "")
        self.accu_init = kw.get("accu_init")
        self.loop_cond = kw.get("loop_cond")
        self.loop_step = kw.get("loop_step")
        self.result = kw.get("result")


def _lit(value: Any, t: str) -> E:
    return E("lit", t, value=value)


def _call(name: str, t: Any, args: list[E], overloads: list[str], target: E | None = None) -> E:
    return E("call", t, name=name, args=args, overloads=overloads, target=target)


_COMPARE = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}


def _overload_ids(name: str, target: Any, args: list[Any]) -> list[str]:
    """The overload ids cel-go's checker would record for a call, as far as costs tell them
    apart (a dyn argument leaves every candidate, as cel-go's checker does)."""
    kinds = [_kind(a) for a in args]
    if name == "_+_" and len(args) == 2:
        ks = {k for k in kinds if k != "dyn"}
        if not ks:
            return ["add_int64", "add_string", "add_bytes", "add_list"]
        k = ks.pop()
        return [{"string": "add_string", "bytes": "add_bytes", "list": "add_list"}.get(k, f"add_{k}")]
    if name in _COMPARE and len(args) == 2:
        ks = {k for k in kinds if k != "dyn"}
        base = _COMPARE[name]
        if not ks:
            return [f"{base}_int64", f"{base}_string", f"{base}_bytes"]
        k = ks.pop()
        return [f"{base}_{k}" if k in ("string", "bytes") else f"{base}_{k}"]
    if name == "_==_":
        return ["equals"]
    if name == "_!=_":
        return ["not_equals"]
    if name == "@in" and len(args) == 2:
        k = kinds[1]
        if k == "list":
            return ["in_list"]
        if k == "map":
            return ["in_map"]
        return ["in_list", "in_map"]
    if target is not None:
        tk = _kind(target)
        if name == "matches":
            return ["matches_string"]
        if name == "contains" and tk in ("string", "dyn"):
            return ["contains_string"]
        if name == "startsWith":
            return ["starts_with_string"]
        if name == "endsWith":
            return ["ends_with_string"]
        if name == "format" and tk in ("string", "dyn"):
            return ["string_format"]
        if name == "ip" and target == "net.CIDR":
            return ["cidr_ip"]
        if name == "containsIP":
            return ["cidr_contains_ip_string" if kinds and kinds[0] == "string" else "cidr_contains_ip_ip"]
        if name == "containsCIDR":
            return ["cidr_contains_cidr_string" if kinds and kinds[0] == "string" else "cidr_contains_cidr"]
        return [f"{name}_member"]
    if name == "matches":
        return ["matches"]
    if name == "bytes" and kinds == ["string"]:
        return ["string_to_bytes"]
    if name == "string" and kinds == ["bytes"]:
        return ["bytes_to_string"]
    if name == "strings.quote":
        return ["strings_quote"]
    return [name]


class _Expander:
    """Our AST, typed by the compiler, rewritten into cel-go's macro-expanded shape."""

    def __init__(self, types: dict[int, Any], namespaced: Callable[[Node], bool]) -> None:
        self.types = types
        self.namespaced = namespaced

    def t(self, n: Node) -> Any:
        return self.types.get(id(n), "dyn")

    def expand(self, n: Node) -> E:
        k = n.kind
        if k == "lit":
            return _lit(n.value, n.type_name)
        if k == "ident":
            return E("ident", self.t(n), name=n.name)
        if k == "select":
            if n.target is not None and id(n.target) not in self.types and id(n) in self.types:
                return E("ident", self.t(n), name=_dotted(n))  # a dotted variable or type name
            operand = self.expand(n.target)
            if n.optional:
                field = _lit(n.name, "string")
                return _call("_?._", self.t(n), [operand, field], ["select_optional_field"])
            return E("select", self.t(n), operand=operand, name=n.name, test_only=n.test_only)
        if k == "index":
            target, index = self.expand(n.target), self.expand(n.args[0])
            tk = _kind(target.t)
            if n.optional:
                return _call("_[?_]", self.t(n), [target, index], ["optional_index"])
            ids = ["index_list"] if tk == "list" else ["index_map"] if tk == "map" else ["index_list", "index_map"]
            return _call("_[_]", self.t(n), [target, index], ids)
        if k == "list":
            return E("list", self.t(n), args=[self.expand(a) for a in n.args])
        if k == "map":
            return E("map", self.t(n), entries=[(self.expand(a), self.expand(b)) for a, b in n.entries])
        if k == "message":
            return E("struct", self.t(n), entries=[(None, self.expand(v)) for _f, v in n.entries])
        if k == "cond":
            args = [self.expand(a) for a in n.args]
            return _call("_?_:_", self.t(n), args, ["conditional"])
        return self._call(n)

    def _call(self, n: Node) -> E:
        name, t = n.name, self.t(n)
        if n.target is None:
            if name == "has" and len(n.args) == 1 and n.args[0].kind == "select":
                sel = n.args[0]
                return E("select", t, operand=self.expand(sel.target), name=sel.name, test_only=True)
            if name in ("_&&_", "_||_"):
                ids = ["logical_and" if name == "_&&_" else "logical_or"]
                return _call(name, t, [self.expand(a) for a in n.args], ids)
            if name == "dyn" and len(n.args) == 1:
                return _call("dyn", t, [self.expand(n.args[0])], ["to_dyn"])
            args = [self.expand(a) for a in n.args]
            return _call(name, t, args, _overload_ids(name, None, [a.t for a in args]))
        m = self._macro(n)
        if m is not None:
            return m
        if self.namespaced(n):
            args = [self.expand(a) for a in n.args]
            fname = f"{n.target.name}.{name}"
            return _call(fname, t, args, _overload_ids(fname, None, [a.t for a in args]))
        target = self.expand(n.target)
        args = [self.expand(a) for a in n.args]
        return _call(name, t, args, _overload_ids(name, target.t, [a.t for a in args]), target)

    def _macro(self, n: Node) -> E | None:
        name, args, t = n.name, n.args, self.t(n)
        if not args or args[0].kind != "ident":
            return None
        if name == "bind" and n.target.kind == "ident" and n.target.name == "cel" and len(args) == 3:
            init = self.expand(args[1])
            return E(
                "comp",
                t,
                iter_range=E("list", ("list", "*")),
                iter_var="#unused",
                accu_var=args[0].name,
                accu_init=init,
                loop_cond=_lit(False, "bool"),
                loop_step=E("ident", init.t, name=args[0].name),
                result=self.expand(args[2]),
            )
        two = len(args) >= 3 and args[1].kind == "ident"
        if name in ("all", "exists", "exists_one", "existsOne", "map", "filter") and not (
            two and name in ("all", "exists", "existsOne") and len(args) == 3
        ):
            return self._one_var(n, name, args, t)
        if two and name in ("all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry"):
            return self._two_var(n, name, args, t)
        if name == "sortBy" and len(args) == 2:
            # cel.bind(@__sortBy_input__, target, @__sortBy_input__.@sortByAssociatedKeys(
            #     @__sortBy_input__.map(e, key)))
            var = "@__sortBy_input__"
            rng = self.expand(n.target)
            bound = E("ident", rng.t, name=var)
            keys = self._one_var_over(E("ident", rng.t, name=var), "map", args, ("list", self.t(args[1])))
            call = _call("@sortByAssociatedKeys", t, [keys], ["list_sortByAssociatedKeys"], bound)
            return E(
                "comp", t, iter_range=E("list", ("list", "*")), iter_var="#unused", accu_var=var, accu_init=rng,
                loop_cond=_lit(False, "bool"), loop_step=E("ident", rng.t, name=var), result=call,
            )  # fmt: skip
        if name in ("optMap", "optFlatMap") and len(args) == 2:
            target = self.expand(n.target)
            value = _call("value", _opt_inner(target.t), [], ["optional_value"], target)
            body = self.expand(args[1])
            bound = E(
                "comp",
                body.t,
                iter_range=E("list", ("list", "*")),
                iter_var="#unused",
                accu_var=args[0].name,
                accu_init=value,
                loop_cond=_lit(False, "bool"),
                loop_step=E("ident", value.t, name=args[0].name),
                result=body,
            )
            has = _call("hasValue", "bool", [], ["optional_hasValue"], self.expand(n.target))
            if name == "optMap":
                bound = _call("optional.of", t, [bound], ["optional_of"])
            none = _call("optional.none", t, [], ["optional_none"])
            return _call("_?_:_", t, [has, bound, none], ["conditional"])
        return None

    def _one_var(self, n: Node, name: str, args: list[Node], t: Any) -> E:
        return self._one_var_over(self.expand(n.target), name, args, t)

    def _one_var_over(self, rng: E, name: str, args: list[Node], t: Any) -> E:
        v = args[0].name
        result: E
        if name in ("all", "exists"):
            init, cond, step, result = self._quantifier(name, args[1])
        elif name in ("exists_one", "existsOne"):
            init, cond, step, result = self._exists_one(args[1])
        else:  # map, filter
            accu = E("ident", t, name=ACCU)
            init = E("list", ("list", "*"))
            cond = _lit(True, "bool")
            if name == "filter":
                item = E("ident", _list_elem(t) or "dyn", name=v)
                pred = self.expand(args[1])
                step = _call("_+_", t, [accu, E("list", t, args=[item])], ["add_list"])
                step = _call("_?_:_", t, [pred, step, accu], ["conditional"])
            else:
                fn = self.expand(args[-1])
                step = _call("_+_", t, [accu, E("list", t, args=[fn])], ["add_list"])
                if len(args) == 3:
                    step = _call("_?_:_", t, [self.expand(args[1]), step, accu], ["conditional"])
            result = accu
        return E(
            "comp", t, iter_range=rng, iter_var=v, accu_var=ACCU, accu_init=init, loop_cond=cond,
            loop_step=step, result=result,
        )  # fmt: skip

    def _quantifier(self, name: str, pred: Node) -> tuple[E, E, E, E]:
        """``all``/``exists`` as cel-go expands them, for one- and two-variable forms alike."""
        accu_b = E("ident", "bool", name=ACCU)
        if name == "all":
            init = _lit(True, "bool")
            cond = _call("@not_strictly_false", "bool", [accu_b], ["not_strictly_false"])
            step = _call("_&&_", "bool", [accu_b, self.expand(pred)], ["logical_and"])
        else:
            init = _lit(False, "bool")
            inner = _call("!_", "bool", [accu_b], ["logical_not"])
            cond = _call("@not_strictly_false", "bool", [inner], ["not_strictly_false"])
            step = _call("_||_", "bool", [accu_b, self.expand(pred)], ["logical_or"])
        return init, cond, step, accu_b

    def _exists_one(self, pred: Node) -> tuple[E, E, E, E]:
        accu_i = E("ident", "int", name=ACCU)
        init = _lit(0, "int")
        cond = _lit(True, "bool")
        plus = _call("_+_", "int", [accu_i, _lit(1, "int")], ["add_int64"])
        step = _call("_?_:_", "int", [self.expand(pred), plus, accu_i], ["conditional"])
        result = _call("_==_", "bool", [accu_i, _lit(1, "int")], ["equals"])
        return init, cond, step, result

    def _two_var(self, n: Node, name: str, args: list[Node], t: Any) -> E:
        rng = self.expand(n.target)
        k, v = args[0].name, args[1].name
        result: E
        if name in ("all", "exists"):
            init, cond, step, result = self._quantifier(name, args[2])
        elif name == "existsOne":
            init, cond, step, result = self._exists_one(args[2])
        elif name == "transformList":
            accu = E("ident", t, name=ACCU)
            init = E("list", ("list", "*"))
            cond = _lit(True, "bool")
            step = _call("_+_", t, [accu, E("list", t, args=[self.expand(args[-1])])], ["add_list"])
            if len(args) == 4:
                step = _call("_?_:_", t, [self.expand(args[2]), step, accu], ["conditional"])
            result = accu
        else:  # transformMap, transformMapEntry
            accu = E("ident", t, name=ACCU)
            init = E("map", ("map", "*", "*"))
            cond = _lit(True, "bool")
            fn = self.expand(args[-1])
            if name == "transformMap":
                ins = [accu, E("ident", "dyn", name=k), fn]
            else:
                ins = [accu, fn]
            step = _call("cel.@mapInsert", t, ins, ["@mapInsert"])
            if len(args) == 4:
                step = _call("_?_:_", t, [self.expand(args[2]), step, accu], ["conditional"])
            result = accu
        return E(
            "comp", t, iter_range=rng, iter_var=k, iter_var2=v, accu_var=ACCU, accu_init=init, loop_cond=cond,
            loop_step=step, result=result,
        )  # fmt: skip


def _int_literal(node: AstNode, default: int) -> int:
    """nodeAsIntValue: an int literal's value (0 when negative), else ``default``."""
    e = node.expr
    if e is not None and e.kind == "lit" and type(e.value) is int and not isinstance(e.value, bool):
        return max(e.value, 0) if getattr(e, "t", "int") == "int" else default
    return default


def _opt_inner(t: Any) -> Any:
    if isinstance(t, tuple) and t[0] == "optional_type":
        return t[1]
    return "dyn"


def _dotted(n: Node) -> str:
    parts = []
    while n.kind == "select":
        parts.append(n.name)
        n = n.target
    parts.append(n.name)
    return ".".join(reversed(parts))


# ---------------------------------------------------------------- cel-go's coster


class _Local:
    __slots__ = ("path", "size", "entry")

    def __init__(self, path: list[str], size: Range | None, entry: tuple | None) -> None:
        self.path, self.size, self.entry = path, size, entry


class AstNode:
    """What a size estimator and a call estimator see of an expression (cel-go's AstNode)."""

    __slots__ = ("path", "t", "expr", "computed")

    def __init__(self, path: list[str] | None, t: Any, expr: E | None, computed: Range | None) -> None:
        self.path, self.t, self.expr, self.computed = path, t, expr, computed


Entry = tuple  # (container kind, key size, value size)


class Coster:
    """cel-go's checker/cost.go coster, with Kubernetes' CostEstimator as the estimator."""

    def __init__(self, sizes: SizeEstimator | None = None, presence_test_cost: int = 1, k8s: bool = True) -> None:
        self.sizes = sizes
        self.k8s = k8s
        self.presence = (presence_test_cost, presence_test_cost)
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.computed: dict[int, Range] = {}
        self.entries: dict[int, Entry] = {}

    # -- estimator hooks
    def estimate_size(self, node: AstNode) -> Range | None:
        if self.sizes is None:
            return None
        return self.sizes(node.path or [], node.t)

    def _size_estimate(self, node: AstNode) -> Range:
        if node.computed is not None:
            return node.computed
        sz = self.estimate_size(node)
        return sz if sz is not None else UNKNOWN

    # -- scopes
    def _push(self, name: str, path: list[str], size: Range | None, entry: Entry | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def _pop(self, name: str) -> None:
        self.locals[name].pop()

    def _peek(self, name: str) -> _Local | None:
        s = self.locals.get(name)
        return s[-1] if s else None

    def _container(self, e: E, entry: Entry | None) -> str:
        if entry is not None:
            return entry[0]
        return _kind(e.t)

    def _push_iter_key(self, var: str, rng: E) -> None:
        entry = self.entry_size(rng)
        container = self._container(rng, entry)
        sub = "@indices" if container == "list" else "@keys"
        self._push(var, self.path(rng) + [sub], entry[1] if entry else None, None)

    def _push_iter_value(self, var: str, rng: E) -> None:
        entry = self.entry_size(rng)
        container = self._container(rng, entry)
        sub = "@items" if container == "list" else "@values"
        self._push(var, self.path(rng) + [sub], entry[2] if entry else None, None)

    def _push_iter_single(self, var: str, rng: E) -> None:
        entry = self.entry_size(rng)
        size = entry[1] if entry else None
        sub = "@keys"
        if self._container(rng, entry) == "list":
            size = entry[2] if entry else None
            sub = "@items"
        self._push(var, self.path(rng) + [sub], size, None)

    def _push_local(self, var: str, e: E) -> None:
        self._push(var, self.path(e), self.size(e), self.entry_size(e))

    # -- cost
    def cost(self, e: E | None) -> Range:
        if e is None:
            return (0, 0)
        k = e.kind
        if k == "lit":
            return (0, 0)
        if k == "ident":
            v = self._peek(e.name)
            self.paths[id(e)] = list(v.path) if v is not None else [e.name]
            return (1, 1)
        if k == "select":
            return self._select(e)
        if k == "call":
            return self._call(e)
        if k == "list":
            return self._list(e)
        if k == "map":
            return self._map(e)
        if k == "struct":
            total = (40, 40)
            for _f, v in e.entries:
                total = _add(total, self.cost(v))
            return total
        if k == "comp":
            return self._bind(e) if self._is_bind(e) else self._comprehension(e)
        return (0, 0)

    def _select(self, e: E) -> Range:
        if e.test_only:
            return _add(self.presence, self.cost(e.operand))
        total = self.cost(e.operand)
        if _kind(e.operand.t) in ("map", "struct", "type_param"):
            total = _add(total, (1, 1))
        self.paths[id(e)] = self.path(e.operand) + [e.name]
        return total

    def _call(self, e: E) -> Range:
        if e.name == "dyn" and len(e.args) == 1:
            arg = e.args[0]
            c = self.cost(arg)
            self._copy_sizes(e, arg)
            return _add((1, 1), c)
        arg_costs = [self.cost(a) for a in e.args]
        arg_nodes = [self.node(a) for a in e.args]
        if not e.overloads:
            return (0, 0)
        total = (0, 0)
        target_node = None
        if e.target is not None:
            total = _add(total, self.cost(e.target))
            target_node = self.node(e.target)
        fn_cost = (MAX_UINT64, 0)
        result_size: Range | None = None
        for ov in e.overloads:
            est_cost, est_size = self._function_cost(e, e.name, ov, target_node, arg_nodes, arg_costs)
            fn_cost = _union(fn_cost, est_cost)
            if est_size is not None:
                result_size = est_size if result_size is None else _union(result_size, est_size)
            if ov == "index_list" and e.args:
                entry = self.entry_size(e.args[0])
                result_size = entry[2] if entry else None
                self.paths[id(e)] = self.path(e.args[0]) + ["@items"]
            elif ov == "index_map" and e.args:
                entry = self.entry_size(e.args[0])
                result_size = entry[2] if entry else None
                self.paths[id(e)] = self.path(e.args[0]) + ["@values"]
            if result_size is None:
                result_size = self.size(e)
        if result_size is not None:
            self.computed[id(e)] = result_size
        return _add(total, fn_cost)

    def _list(self, e: E) -> Range:
        total = (0, 0)
        item = (MAX_UINT64, 0) if e.args else (0, 0)
        for a in e.args:
            total = _add(total, self.cost(a))
            item = _union(item, self.size_or_unknown(a))
        self.entries[id(e)] = ("list", (1, 1), item)
        return _add(total, (10, 10))

    def _map(self, e: E) -> Range:
        total = (0, 0)
        ks = (MAX_UINT64, 0) if e.entries else (0, 0)
        vs = ks
        for a, b in e.entries:
            total = _add(total, self.cost(a))
            total = _add(total, self.cost(b))
            ks = _union(ks, self.size_or_unknown(a))
            vs = _union(vs, self.size_or_unknown(b))
        self.entries[id(e)] = ("map", ks, vs)
        return _add(total, (30, 30))

    def _comprehension(self, e: E) -> Range:
        total = self.cost(e.iter_range)
        total = _add(total, self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        if e.iter_var2:
            self._push_iter_key(e.iter_var, e.iter_range)
            self._push_iter_value(e.iter_var2, e.iter_range)
        else:
            self._push_iter_single(e.iter_var, e.iter_range)
        loop = self.cost(e.loop_cond)
        step = self.cost(e.loop_step)
        self._pop(e.iter_var)
        if e.iter_var2:
            self._pop(e.iter_var2)
        total = _add(total, self.cost(e.result))
        self._pop(e.accu_var)
        rng = self.size_or_unknown(e.iter_range)
        total = _add(total, _mul(rng, _add(step, loop)))
        init = e.accu_init
        if init.kind == "lit":
            sz = self.size(init)
            if sz is not None:
                self.computed[id(e)] = sz
        elif init.kind in ("list", "map"):
            self.computed[id(e)] = rng
            step_entry = self.entry_size(e.loop_step)
            if step_entry is not None:
                self.entries[id(e)] = step_entry
        return total

    @staticmethod
    def _is_bind(e: E) -> bool:
        r = e.iter_range
        return (
            r.kind == "list"
            and not r.args
            and e.loop_cond.kind == "lit"
            and e.loop_cond.value is False
            and e.accu_var != ACCU
        )

    def _bind(self, e: E) -> Range:
        total = _add(self.cost(e.iter_range), self.cost(e.accu_init))
        self._push_local(e.accu_var, e.accu_init)
        total = _add(total, self.cost(e.result))
        self._pop(e.accu_var)
        self._copy_sizes(e, e.result)
        return total

    def _function_cost(
        self, e: E, fn: str, ov: str, target: AstNode | None, args: list[AstNode], arg_costs: list[Range]
    ) -> tuple[Range, Range | None]:
        arg_sum = (0, 0)
        for a in arg_costs:
            arg_sum = _add(arg_sum, a)
        lists = self._lists_ext(fn, target, args)  # cel-go ext/lists.go v3's overload estimators
        if lists is not None:
            return _add(lists[0], arg_sum), lists[1]
        if fn in _SETS and len(args) == 2:  # cel-go ext/sets.go's overload estimators come first
            product = _mul(self._size_estimate(args[0]), self._size_estimate(args[1]))
            return _add(_add(_factor(product, _SETS[fn]), (1, 1)), arg_sum), None
        k8s = self._k8s_call_cost(fn, ov, target, args) if self.k8s else None
        if k8s is not None:
            return _add(k8s[0], arg_sum), k8s[1]
        sz = self.size_or_unknown
        if ov == "string_format" and target is not None:
            return _add(_factor(sz(target), STRING_TRAVERSAL), arg_sum), None
        if ov == "string_to_bytes" and len(args) == 1:
            s = sz(args[0])
            return _add(_factor(s, STRING_TRAVERSAL), arg_sum), (s[0], min(s[1] * 4, MAX_UINT64))
        if ov == "bytes_to_string" and len(args) == 1:
            s = sz(args[0])
            return _add(_factor(s, STRING_TRAVERSAL), arg_sum), (s[0] // 4, s[1])
        if ov == "strings_quote" and len(args) == 1:
            s = sz(args[0])
            return _add(_factor(s, STRING_TRAVERSAL), arg_sum), (s[0] + 2, min(s[1] * 2 + 2, MAX_UINT64))
        if ov in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _add(_factor(sz(args[0]), STRING_TRAVERSAL), arg_sum), None
        if ov == "in_list" and len(args) == 2:
            return _add(_factor(sz(args[1]), 1), arg_sum), None
        if ov == "matches_string" and target is not None and len(args) == 1:
            s = _factor(_add(sz(target), (1, 1)), STRING_TRAVERSAL)
            r = _factor(sz(args[0]), REGEX_LENGTH)
            return _add(_mul(s, r), arg_sum), None
        if ov == "contains_string" and target is not None and len(args) == 1:
            s = _factor(sz(target), STRING_TRAVERSAL)
            sub = _factor(sz(args[0]), STRING_TRAVERSAL)
            return _add(_mul(s, sub), arg_sum), None
        if ov in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return (lhs[0], _add(lhs, rhs)[1]), None
        if ov == "conditional":
            size = _union(sz(args[1]), sz(args[2]))
            a1, a2 = self.entry_size(args[1].expr), self.entry_size(args[2].expr)
            if a1 is not None and a2 is not None:
                self.entries[id(e)] = (a1[0], _union(a1[1], a2[1]), _union(a1[2], a2[2]))
            return _add(arg_costs[0], _union(arg_costs[1], arg_costs[2])), size
        if ov in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = _add(sz(args[0]), sz(args[1]))
            a0, a1 = self.entry_size(args[0].expr), self.entry_size(args[1].expr)
            if a0 is not None and a1 is not None:
                self.entries[id(e)] = (a0[0], _union(a0[1], a1[1]), _union(a0[2], a1[2]))
            if ov == "add_list":
                return _add((1, 1), arg_sum), result
            return _add(_factor(result, STRING_TRAVERSAL), arg_sum), result
        if ov in _SIZED_COMPARISONS:
            lhs, rhs = sz(args[0]), sz(args[1])
            smallest = min(lhs[1], rhs[1])
            lo = 1 if smallest > 0 else 0
            return _add(_factor((lo, smallest), STRING_TRAVERSAL), arg_sum), None
        return _add((1, 1), arg_sum), None

    def _lists_ext(self, fn: str, target: AstNode | None, args: list[AstNode]) -> tuple[Range, Range] | None:
        """ext.Lists(v3)'s estimators: an allocating call costs 1 + 10 + its size times a factor."""

        def alloc(factor: float, size: Range) -> tuple[Range, Range]:
            return _add(_add(_factor(size, factor), (1, 1)), (10, 10)), size

        se = self._size_estimate
        is_list = target is not None and _kind(target.t) == "list"
        if fn == "slice" and is_list and len(args) == 2:
            sz = se(target)
            start, end = _int_literal(args[0], 0), _int_literal(args[1], sz[1])
            n = (end - start) % 2**64
            return alloc(1.0, (n, n))
        if fn == "lists.range" and target is None and len(args) == 1:
            n = _int_literal(args[0], MAX_UINT64)
            return alloc(1.0, (n, n))
        if fn == "reverse" and is_list and not args:
            return alloc(1.0, se(target))
        if fn == "flatten" and is_list and len(args) <= 1:
            depth = _int_literal(args[0], MAX_UINT64) if args else 1
            return alloc(float(depth), se(target))
        if fn == "distinct" and is_list and not args:
            sz = se(target)
            return alloc(2.0, _mul(sz, sz))
        if fn in ("sort", "@sortByAssociatedKeys"):
            node = target if fn == "sort" and not args else (args[0] if fn != "sort" and len(args) == 1 else None)
            if node is None or target is None:
                return None
            sz = se(node)
            factor = 2.0 + (STRING_TRAVERSAL if _kind(_list_elem(node.t)) in ("string", "bytes") else 0.0)
            return alloc(factor, _mul(sz, sz))
        return None

    # -- Kubernetes' library.CostEstimator.EstimateCallCost
    def _k8s_call_cost(
        self, fn: str, ov: str, target: AstNode | None, args: list[AstNode]
    ) -> tuple[Range, Range | None] | None:
        se = self._size_estimate
        if fn == "check":
            return (350000, 350000), None
        if fn in _UNIT_AUTHZ:
            return (1, 1), None
        if fn in ("fieldSelector", "labelSelector"):
            if len(args) == 1:
                length = se(args[0])
                parse = _factor(length, STRING_TRAVERSAL)
                reqs = _factor(_factor(length, 0.5), 50.0)
                return _add(_add((10, 10), parse), reqs), None
            return None
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
            if target is None:
                return None
            el = (1, 1)
            elem_t = _list_elem(target.t)
            if elem_t is not None:
                if _kind(elem_t) in ("string", "bytes"):
                    elem = AstNode(target.path + ["@items"] if target.path else None, elem_t, None, None)
                    el = _add(el, _factor(se(elem), STRING_TRAVERSAL))
                return _mul(se(target), el), None
            return _factor(se(target), STRING_TRAVERSAL), None
        if fn in ("url", "jsonpatch.escapeKey"):
            if len(args) == 1:
                s = se(args[0])
                return _factor(s, STRING_TRAVERSAL), s
            return None
        if fn in ("lowerAscii", "upperAscii", "substring", "trim"):
            if target is not None:
                s = se(target)
                return _factor(s, STRING_TRAVERSAL), s
            return None
        if fn == "replace":
            if target is not None and len(args) >= 2:
                return self._replace(target, args)
            return None
        if fn == "split":
            if target is not None:
                s = se(target)
                hi = s[1]
                if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == "lit":
                    v = args[1].expr.value
                    if type(v) is int:
                        hi = v % (2**64)
                return _factor(s, 2 * STRING_TRAVERSAL), (0, hi)
            return None
        if fn == "join":
            if target is not None:
                list_size = se(target)
                size: Range = (0, 0)
                elem_t = _list_elem(target.t)
                if elem_t is not None:
                    elem = AstNode(target.path + ["@items"] if target.path else None, elem_t, None, None)
                    size = _mul(list_size, se(elem))
                if args:
                    sep = se(args[0])
                    seps = (max(list_size[0] - 1, 0), max(list_size[1] - 1, 0))
                    size = _add(size, _mul(sep, seps))
                return _factor(size, STRING_TRAVERSAL), size
            return None
        if fn in ("find", "findAll"):
            if target is not None and args:
                s = se(target)
                str_cost = _factor(_add(s, (1, 1)), STRING_TRAVERSAL)
                regex = _factor(se(args[0]), REGEX_LENGTH)
                return _mul(str_cost, regex), (0, s[1])
            return None
        if fn in ("cidr", "isIP", "isCIDR"):
            if args:
                return _factor(se(args[0]), STRING_TRAVERSAL), None
            return None
        if fn == "ip":
            if ov == "cidr_ip":
                return (1, 1), None
            if args:
                return _factor(se(args[0]), STRING_TRAVERSAL), None
            return None
        if fn == "ip.isCanonical":
            if args:
                return _factor(se(args[0]), 2 * STRING_TRAVERSAL), None
            return None
        if fn in _UNIT_NET:
            return (1, 1), None
        if fn == "containsIP":
            if args:
                c = _factor(_add((4, 16), (4, 16)), STRING_TRAVERSAL)
                if ov == "cidr_contains_ip_string":
                    c = _add(c, _factor(se(args[0]), STRING_TRAVERSAL))
                return c, None
            return None
        if fn == "containsCIDR":
            if args:
                c = _factor(_add((4, 16), (4, 16)), STRING_TRAVERSAL)
                c = _add(c, _factor((4, 16), STRING_TRAVERSAL))
                c = _add(c, (1, 1))
                if ov == "cidr_contains_cidr_string":
                    c = _add(c, _factor(se(args[0]), STRING_TRAVERSAL))
                return c, None
            return None
        if fn in ("quantity", "isQuantity", "semver", "isSemver"):
            if args:
                return _factor(se(args[0]), STRING_TRAVERSAL), None
            return None
        if fn == "validate":
            if args:
                s = _factor(se(args[0]), STRING_TRAVERSAL)
                return _factor(s, MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH), None
            return None
        if fn in _UNIT_OTHER:
            return (1, 1), None
        if fn == "_==_" and len(args) == 2:
            lt, rt = args[0].t, args[1].t
            if lt == rt:
                if lt in ("net.IP", "net.CIDR", "quantity", "semver") or lt in _AUTHZ_TYPES:
                    return (1, 1), None
                if lt == "kubernetes.NamedFormat":
                    return _factor((1, MAX_FORMAT_SIZE), STRING_TRAVERSAL), None
                if lt == "url":
                    size = (1, 1)
                    r = args[1].computed
                    if r is not None:
                        size = _union(r, r)
                    return _factor((1, size[1]), STRING_TRAVERSAL), None
        return None

    def _replace(self, target: AstNode, args: list[AstNode]) -> tuple[Range, Range | None]:
        se = self._size_estimate
        sz, to_replace, replace_with = se(target), se(args[0]), se(args[1])
        count_min = count_max = retained_min = retained_max = 0
        if to_replace[0] == 0:
            count_max = sz[1] + 1 if sz[1] < MAX_UINT64 else sz[1]
            retained_max = sz[1]
        elif replace_with[1] <= to_replace[0]:
            count_max = 0
            retained_max = sz[1]
        else:
            count_max = math.ceil(float(sz[1]) / float(to_replace[0]))
        if to_replace[1] == 0:
            count_min = sz[0] + 1 if sz[0] < MAX_UINT64 else sz[0]
            retained_min = sz[0]
        elif to_replace[1] <= replace_with[0]:
            count_min = 0
            retained_min = sz[0]
        else:
            count_min = math.ceil(float(sz[0]) / float(to_replace[1]))
        size = _add(_mul((count_min, min(count_max, MAX_UINT64)), replace_with), (retained_min, retained_max))
        return _factor(sz, 2 * STRING_TRAVERSAL), size

    # -- sizes and paths
    def path(self, e: E) -> list[str]:
        if e.kind == "ident":
            v = self._peek(e.name)
            if v is not None:
                return list(v.path)
        return list(self.paths.get(id(e), []))

    def node(self, e: E) -> AstNode:
        p: list[str] | None = self.path(e)
        if p and p[0] in (ACCU, "__result__"):
            p = None
        return AstNode(p, e.t, e, self.size(e))

    def size_or_unknown(self, x: E | AstNode) -> Range:
        s = x.computed if isinstance(x, AstNode) else self.size(x)
        return s if s is not None else UNKNOWN

    def _copy_sizes(self, dst: E, src: E) -> None:
        s = self.size(src)
        if s is not None:
            self.computed[id(dst)] = s
        en = self.entry_size(src)
        if en is not None:
            self.entries[id(dst)] = en

    def size(self, e: E) -> Range | None:
        got = self.computed.get(id(e))
        if got is not None:
            return got
        fixed = _expr_size(e)
        if fixed is not None:
            return fixed
        est = self.estimate_size(AstNode(self.path(e), e.t, e, None))
        if est is not None:
            self.computed[id(e)] = est
            return est
        if _is_scalar(e.t):
            return (1, 1)
        if e.kind == "ident":
            v = self._peek(e.name)
            if v is not None and v.size is not None:
                return v.size
        return None

    def entry_size(self, e: E | None) -> Entry | None:
        if e is None:
            return None
        got = self.entries.get(id(e))
        if got is not None:
            return got
        if e.kind == "ident":
            v = self._peek(e.name)
            if v is not None and v.entry is not None:
                return v.entry
        return None


def _expr_size(e: E) -> Range | None:
    if e.kind == "lit":
        v = e.value
        if isinstance(v, str):
            return (len(v), len(v))
        if isinstance(v, bytes):
            return (len(v), len(v))
        return (1, 1)
    if e.kind == "list":
        return (len(e.args), len(e.args))
    if e.kind == "map":
        return (len(e.entries), len(e.entries))
    return None


_SETS = {"sets.contains": 1.0, "sets.intersects": 1.0, "sets.equivalent": 2.0}
_SIZED_COMPARISONS = frozenset(
    ("equals", "not_equals")
    + tuple(f"{op}_{k}" for op in ("less", "greater", "less_equals", "greater_equals") for k in ("string", "bytes"))
)
_UNIT_AUTHZ = frozenset(
    (
        "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed", "reason",
        "error", "errored",
    )
)  # fmt: skip
_UNIT_NET = frozenset(
    (
        "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
        "isLinkLocalUnicast", "isGlobalUnicast",
    )
)  # fmt: skip
_UNIT_OTHER = frozenset(
    (
        "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
        "compareTo", "add", "sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort",
        "getEscapedPath", "getQuery",
    )
)  # fmt: skip
_AUTHZ_TYPES = frozenset(
    (
        "kubernetes.authorization.Authorizer", "kubernetes.authorization.PathCheck",
        "kubernetes.authorization.GroupCheck", "kubernetes.authorization.ResourceCheck",
        "kubernetes.authorization.Decision",
    )
)  # fmt: skip


class Decl:
    """The size bounds of a declared type (upstream's DeclType.MaxElements with its fields,
    key and element types), for environments whose variables have fixed declarations."""

    __slots__ = ("max_elements", "fields", "elem", "key")

    def __init__(
        self, max_elements: int = 0, fields: dict | None = None, elem: "Decl | None" = None, key: "Decl | None" = None
    ) -> None:
        self.max_elements, self.fields, self.elem, self.key = max_elements, fields or {}, elem, key


# k8s.io/dynamic-resource-allocation/cel's `device` (v1.36): driver names of up to 63
# characters, 32 attribute/capacity domains of 32 entries each, attribute values (and names
# of any other field below a domain) of up to 64, domain keys 63, ids 32
_DRA_ATTRIBUTE = Decl(64)
_DRA_DEVICE = Decl(
    0,
    {
        "driver": Decl(63),
        "allowMultipleAllocations": Decl(1),
        "attributes": Decl(32, elem=Decl(32, elem=_DRA_ATTRIBUTE, key=Decl(32)), key=Decl(63)),
        "capacity": Decl(32, elem=Decl(32, elem=Decl(0), key=Decl(32)), key=Decl(63)),
    },
)


def dra_sizes(path: list[str], _t: Any) -> Range | None:
    """The DRA compiler's sizeEstimator: a path below ``device`` looked up in its
    declaration; a name under an attribute domain is an attribute value."""
    if not path or path[0] != "device":
        return None
    cur: Decl | None = _DRA_DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            cur = cur.elem
        elif name == "@keys":
            cur = cur.key
        elif name in cur.fields:
            cur = cur.fields[name]
        elif cur.elem is _DRA_ATTRIBUTE:
            cur = _DRA_ATTRIBUTE
        else:
            return None
        if cur is None:
            return None
    return (0, cur.max_elements)


def estimate_cost(
    ast: Node,
    types: dict[int, Any],
    sizes: SizeEstimator | None = None,
    namespaced: Callable[[Node], bool] | None = None,
    presence_test_cost: int = 1,
    k8s: bool = True,
) -> Range:
    """cel-go's EstimateCost of a checked expression: (min, max) in cost units; ``k8s``
    adds Kubernetes' library call costs (cel-go's own tests run without them)."""
    tree = _Expander(types, namespaced or (lambda n: False)).expand(ast)
    return Coster(sizes, presence_test_cost, k8s).cost(tree)
