"""Time one DRA selector evaluation in mockkube's engine and, when installed, in
cel-expr-python (``python -m tests.conformance.cel.run --bench``).

Two selectors over a GPU device with attributes model="a100", memoryGiB=80 and capacity
memory=80Gi:
- quantity: the usual shape, ``...model == "a100" && ...memory.compareTo(quantity("40Gi")) >= 0``;
  cel-expr-python has no Kubernetes quantity library, so quantities are modelled as ints
  with ``quantity()`` and ``compareTo()`` as Python callbacks (a cost mockkube does not pay);
- attributes: ``...model == "a100" && ...memoryGiB >= 40``: no callbacks in either engine.
mockkube's figure is ``CompiledExpression.matches(env)`` with the device env built once
(as the allocator does); cel-expr-python's is ``Expression.eval`` with a prebuilt
Activation, and with a plain dict (converted on every call).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable
from typing import Any

from mockkube.dra.cel import compile_expression, device_env

D = "gpu.example.com"
SELECTORS = {
    "quantity": f'device.attributes["{D}"].model == "a100" && '
    f'device.capacity["{D}"].memory.compareTo(quantity("40Gi")) >= 0',
    "attributes": f'device.attributes["{D}"].model == "a100" && device.attributes["{D}"].memoryGiB >= 40',
}
DEVICE = {
    "name": "gpu-0",
    "attributes": {"model": {"string": "a100"}, "memoryGiB": {"int": 80}},
    "capacity": {"memory": {"value": "80Gi"}},
}


def per_call(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Best per-call time in microseconds."""
    timer = timeit.Timer(fn)
    n, _ = timer.autorange()
    return min(timer.repeat(repeat, n)) / n * 1e6


def bench_mockkube() -> dict[str, dict[str, float]]:
    env = device_env(D, DEVICE)
    out = {}
    for name, expr in SELECTORS.items():
        compiled = compile_expression(expr)
        assert compiled.matches(env) is True
        out[name] = {
            "eval_us": per_call(lambda c=compiled: c.matches(env)),
            "compile_us": per_call(lambda e=expr: compile_expression.__wrapped__(e), repeat=3),
            "device_env_us": per_call(lambda: device_env(D, DEVICE)),
        }
    return out


def bench_cel_expr_python() -> dict[str, dict[str, float]]:
    from cel_expr_python import cel

    from mockkube.cel import lib  # quantity parsing for the callback

    def quantity(s: str) -> int:
        m, e = lib.quantity_parse(s).as_exact()
        return int(m * 10**e)

    functions = [
        cel.FunctionDecl(
            "quantity",
            [cel.Overload("quantity_string", return_type=cel.Type.INT, parameters=[cel.Type.STRING], impl=quantity)],
        ),
        cel.FunctionDecl(
            "compareTo",
            [
                cel.Overload(
                    "int_compareTo_int",
                    return_type=cel.Type.INT,
                    parameters=[cel.Type.INT, cel.Type.INT],
                    is_member=True,
                    impl=lambda a, b: (a > b) - (a < b),
                )
            ],
        ),
    ]
    env = cel.NewEnv(variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)}, functions=functions)
    device = {
        "driver": D,
        "attributes": {D: {"model": "a100", "memoryGiB": 80}},
        "capacity": {D: {"memory": quantity("80Gi")}},
        "allowMultipleAllocations": False,
    }
    out = {}
    for name, expr in SELECTORS.items():
        compiled = env.compile(expr)
        activation = env.Activation({"device": device})
        assert compiled.eval(activation).value() is True
        out[name] = {
            "eval_us": per_call(lambda c=compiled, a=activation: c.eval(a).value()),
            "eval_dict_us": per_call(lambda c=compiled: c.eval(data={"device": device}).value()),
            "compile_us": per_call(lambda e=expr: env.compile(e), repeat=3),
        }
    return out


def main() -> int:
    results = {"mockkube": bench_mockkube()}
    try:
        results["cel-expr-python"] = bench_cel_expr_python()
    except ImportError as exc:
        print(f"cel-expr-python: not installed ({exc})")
    print(
        f"{'engine':<16} {'selector':<11} {'eval µs':>8} {'eval(dict) µs':>14} {'compile µs':>11} {'device env µs':>14}"
    )
    for engine, rows in results.items():
        for name, r in rows.items():

            def cell(key: str, width: int, r: dict = r) -> str:
                return f"{r[key]:>{width}.2f}" if key in r else f"{'-':>{width}}"

            print(
                f"{engine:<16} {name:<11} {cell('eval_us', 8)} {cell('eval_dict_us', 14)} "
                f"{cell('compile_us', 11)} {cell('device_env_us', 14)}"
            )
    for name, expr in SELECTORS.items():
        print(f"  {name}: {expr}")
    return 0
