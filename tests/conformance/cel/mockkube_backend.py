"""The conformance backend for mockkube's CEL engine: the one module of the runner that
imports the engine (the import below is the line to change if the engine moves)."""

from __future__ import annotations

from typing import Any

from mockkube.cel import celtypes, engine, parser  # the engine under test

from .runner import Case, Outcome
from .values import Duration, Map, Timestamp, TypeValue, UInt


class Opaque:
    """A result the runner cannot express as a cel.expr.Value (optional, quantity...)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.text}>"


def _engine_type(t: Any) -> Any:
    """The runner's nested-tuple type as the engine's (it has no parametrized optional or
    type-of-type; those become their bare names)."""
    if isinstance(t, str):
        return t
    tag = t[0]
    if tag == "list":
        return ("list", _engine_type(t[1]))
    if tag == "map":
        return ("map", _engine_type(t[1]), _engine_type(t[2]))
    if tag == "abstract":
        return t[1]
    return tag


def to_native(v: Any) -> Any:
    if isinstance(v, UInt):
        return engine.UInt(int(v))
    if isinstance(v, list):
        return [to_native(x) for x in v]
    if isinstance(v, Map):
        return {to_native(k): to_native(x) for k, x in v.pairs}
    if isinstance(v, Timestamp):
        return celtypes.Timestamp(v.seconds * 1_000_000_000 + v.nanos)
    if isinstance(v, Duration):
        return celtypes.Duration(v.seconds * 1_000_000_000 + v.nanos)
    if isinstance(v, TypeValue):
        return celtypes.CelType(v.name)
    return v


def to_neutral(v: Any) -> Any:
    if v is None or type(v) in (bool, int, float, str, bytes):
        return v
    if isinstance(v, engine.UInt):
        return UInt(int(v))
    if isinstance(v, list):
        return [to_neutral(x) for x in v]
    if isinstance(v, dict):
        return Map([(to_neutral(k), to_neutral(x)) for k, x in v.items()])
    if isinstance(v, celtypes.Timestamp):
        return Timestamp(*divmod(v.ns, 1_000_000_000))
    if isinstance(v, celtypes.Duration):
        seconds = abs(v.ns) // 1_000_000_000 * (1 if v.ns >= 0 else -1)
        return Duration(seconds, v.ns - seconds * 1_000_000_000)
    if isinstance(v, celtypes.CelType):
        return TypeValue(v.name)
    if isinstance(v, engine.optional_type):
        return Opaque(f"optional.of({to_neutral(v.value)!r})" if v.present else "optional.none()")
    return Opaque(engine.runtime_type(v))


class MockkubeBackend:
    name = "mockkube"
    reports_types = True

    def run(self, case: Case) -> Outcome:
        if case.functions:
            return Outcome("unsupported", error="function declarations in type_env")
        try:
            parser.parse(case.expr)
        except parser.CELSyntaxError as exc:
            return Outcome("parse", error=exc.message)
        except RecursionError:
            return Outcome("parse", error="expression nesting exceeds limit")
        variables = {name: _engine_type(t) for name, t in case.decls.items()}
        if case.disable_check:  # the engine always checks: undeclared bindings are dyn
            for name in case.bindings:
                variables.setdefault(name, "dyn")
        try:
            compiled = engine.compile_with(
                case.expr, tuple(sorted(variables.items())), not case.disable_check, case.container, kubernetes=False
            )
        except engine.CELError as exc:
            return Outcome("check", error=exc.message)
        except Exception as exc:  # noqa: BLE001 - an engine bug is a result here
            return Outcome("crash", error=f"compile: {type(exc).__name__}: {exc}")
        out_type = engine.type_name(compiled.output_type)
        if case.check_only:
            return Outcome("ok", type=out_type)
        try:
            activation = {k: to_native(v) for k, v in case.bindings.items()}
        except TypeError as exc:
            return Outcome("unsupported", error=str(exc))
        try:
            value = compiled.evaluate(activation)
        except engine.CELError as exc:
            return Outcome("eval", error=exc.message, type=out_type)
        except Exception as exc:  # noqa: BLE001
            return Outcome("crash", error=f"eval: {type(exc).__name__}: {exc}", type=out_type)
        return Outcome("ok", value=to_neutral(value), type=out_type)
