"""An optional comparison backend: cel-expr-python (PyPI; Google's CEL C++ runtime wrapped
for Python). Only the ``run`` script uses it, and only when it is installed; the project's
tests never need it. Extensions: strings, optionals, bindings (the ones it ships that
Kubernetes also has; it has no network or two-variable comprehension library).

Approximations: bindings of undeclared variables (``disable_check`` tests) are passed as
dyn, so a uint binding arrives as an int; timestamps and durations come back with
microsecond precision (Python's datetime); a parse error and a check error both raise
RuntimeError and are told apart by the message."""

from __future__ import annotations

import datetime
import re
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from .runner import Case, Outcome
from .values import Duration, Map, Timestamp, TypeValue, UInt

_PRIM = {
    "int": cel.Type.INT,
    "uint": cel.Type.UINT,
    "double": cel.Type.DOUBLE,
    "bool": cel.Type.BOOL,
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "dyn": cel.Type.DYN,
    "null_type": cel.Type.NULL,
    "google.protobuf.Timestamp": cel.Type.TIMESTAMP,
    "google.protobuf.Duration": cel.Type.DURATION,
}
_NAMES = {"NULL": "null_type", "DURATION": "google.protobuf.Duration", "TIMESTAMP": "google.protobuf.Timestamp"}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _cel_type(t: Any) -> Any:
    if isinstance(t, str):
        return _PRIM.get(t, cel.Type.DYN)
    tag = t[0]
    if tag == "list":
        return cel.Type.List(_cel_type(t[1]))
    if tag == "map":
        return cel.Type.Map(_cel_type(t[1]), _cel_type(t[2]))
    if tag == "type":
        return cel.Type.Type(_cel_type(t[1])) if len(t) > 1 else cel.Type.TYPE
    if tag == "abstract":
        return cel.Type.AbstractType(t[1], [_cel_type(p) for p in t[2:]])
    return cel.Type.DYN


def spell(name: str) -> str:
    """cel-cpp's ``MAP<STRING, LIST<INT>>`` in cel-go's spelling ``map(string, list(int))``."""

    def one(m: re.Match) -> str:
        word = m.group()
        return _NAMES.get(word, word.lower() if word.isupper() else word)

    return re.sub(r"[A-Za-z_.]+", one, name).replace("<", "(").replace(">", ")")


def _type_value(t: Any) -> TypeValue:
    name = t.name()
    base = name.split("<", 1)[0]
    return TypeValue(_NAMES.get(base, base.lower() if base.isupper() else base))


def to_neutral(v: Any) -> Any:
    """A cel.Value as a neutral value."""
    tname = v.type().name()
    try:
        raw = v.value()
    except TypeError:  # optionals and other values the wrapper cannot return
        return f"<{tname}>"
    if tname == "UINT":
        return UInt(raw)
    if tname.startswith("LIST"):
        return [to_neutral(x) for x in raw]
    if tname.startswith("MAP"):
        return Map([(_plain(k), to_neutral(x)) for k, x in raw.items()])
    if tname == "TYPE":
        return _type_value(raw)
    return _plain(raw)


def _plain(raw: Any) -> Any:
    if isinstance(raw, bytearray):
        return bytes(raw)
    if isinstance(raw, datetime.datetime):
        d = raw - _EPOCH
        return Timestamp(d.days * 86400 + d.seconds, d.microseconds * 1000)
    if isinstance(raw, datetime.timedelta):
        return Duration(raw.days * 86400 + raw.seconds, raw.microseconds * 1000)
    return raw


def to_native(v: Any) -> Any:
    if isinstance(v, UInt):
        return int(v)
    if isinstance(v, list):
        return [to_native(x) for x in v]
    if isinstance(v, Map):
        return {to_native(k): to_native(x) for k, x in v.pairs}
    if isinstance(v, Timestamp):
        return _EPOCH + datetime.timedelta(seconds=v.seconds, microseconds=v.nanos // 1000)
    if isinstance(v, Duration):
        return datetime.timedelta(seconds=v.seconds, microseconds=v.nanos // 1000)
    if isinstance(v, TypeValue):
        raise TypeError("type values as bindings")
    return v


def _extensions() -> list:
    return [ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()]


class CelExprPythonBackend:
    name = "cel-expr-python"
    reports_types = True

    def run(self, case: Case) -> Outcome:
        if case.functions:
            return Outcome("unsupported", error="function declarations in type_env")
        variables = {name: _cel_type(t) for name, t in case.decls.items()}
        if case.disable_check:
            for name in case.bindings:
                variables.setdefault(name, cel.Type.DYN)
        try:
            env = cel.NewEnv(variables=variables, extensions=_extensions(), container=case.container or None)
            expr = env.compile(case.expr, disable_check=case.disable_check)
        except RuntimeError as exc:
            msg = str(exc).removeprefix("INVALID_ARGUMENT: ")
            return Outcome("parse" if "Syntax error" in msg else "check", error=msg)
        out_type = None if case.disable_check else spell(expr.return_type().name())
        if case.check_only:
            return Outcome("ok", type=out_type)
        try:
            data = {k: to_native(v) for k, v in case.bindings.items()}
        except TypeError as exc:
            return Outcome("unsupported", error=str(exc))
        try:
            value = expr.eval(data=data)
        except Exception as exc:  # noqa: BLE001 - a wrapper failure is a result here
            return Outcome("eval", error=f"{type(exc).__name__}: {exc}", type=out_type)
        if value.type().name() == "ERROR":
            return Outcome("eval", error=str(value.value()), type=out_type)
        return Outcome("ok", value=to_neutral(value), type=out_type)
