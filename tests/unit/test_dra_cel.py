import time

import pytest

from mockkube.dra.cel import CELError, compile_expression, device_env

DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"},
        "index": {"int": 3},
        "healthy": {"bool": True},
        "driverVersion": {"version": "1.2.3"},
        "pcie.dev/root": {"string": "pci0"},
    },
    "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "108"}},
}
ENV = device_env("gpu.example.com", DEVICE)
A = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'


@pytest.mark.parametrize(
    "expr,want",
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.driver != "gpu.example.com"', False),
        (f'{A}.model == "a100"', True),
        (f"{A}.index > 2 && {A}.index < 4", True),
        (f"{A}.index >= 3.0", True),
        (f"{A}.healthy", True),
        ('device.attributes["pcie.dev"].root == "pci0"', True),
        (f"has({A}.model)", True),
        (f"has({A}.nope)", False),
        ('"gpu.example.com" in device.attributes', True),
        ('"other.com" in device.attributes', False),
        (f'{A}.driverVersion.isGreaterThan(semver("1.2.0"))', True),
        (f'{A}.driverVersion.compareTo(semver("1.2.3")) == 0', True),
        (f'{A}.driverVersion == semver("1.2.3")', True),
        (f"{A}.driverVersion.major() == 1 && {A}.driverVersion.minor() == 2", True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('isSemver("1.2") || isSemver("v1.2.3")', False),
        ('isSemver("v1.2", true)', True),
        (f'{C}.memory.isGreaterThan(quantity("40Gi"))', True),
        (f'{C}.memory.compareTo(quantity("80Gi")) == 0', True),
        (f'{C}.memory == quantity("81920Mi")', True),
        (f"{C}.cores.asInteger() == 108", True),
        ('quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi")', True),
        ('quantity("2").sub(1).isLessThan(quantity("1500m"))', True),
        ('isQuantity("1Gi") && !isQuantity("1x")', True),
        (f'{A}.exists(k, k == "model")', True),
        (f"{A}.all(k, k.size() > 2)", True),
        ("[1, 2, 3].exists_one(x, x == 2)", True),
        ("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", True),
        ("[1, 2, 3].filter(x, x > 1).size() == 2", True),
        (f'cel.bind(g, {A}, g.model.startsWith("a") && g.index == 3)', True),
        (f'{A}.model.matches("^a[0-9]+$")', True),
        ('"A100".lowerAscii() == "a100"', True),
        ("device.allowMultipleAllocations == false", True),
        ("size(device.attributes) == 2", True),
        ("1 + 2 * 3 == 7 && 7 / 2 == 3 && -7 % 3 == -1", True),
        ("true ? 1 == 1 : 1 == 2", True),
        ('{"a": 1}["a"] == 1', True),
        (f"{A}.nope == 1 || true", True),  # error absorbed by ||
        (f"false && {A}.nope == 1", False),
    ],
)
def test_matches(expr, want):
    assert compile_expression(expr).matches(ENV) is want


@pytest.mark.parametrize(
    "expr,fragment",
    [
        ("1 +", "Syntax error"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ("1", "must evaluate to bool or the unknown type, not int"),
        ("foo(1)", "undeclared reference to 'foo'"),
        ("x == 1", "undeclared reference to 'x' (in container '')"),
        ("device.nope", "undefined field 'nope'"),
        ('1 == "a"', "found no matching overload for '_==_' applied to '(int, string)'"),
        ("device.driver.contains(1)", "found no matching overload for 'contains' applied to 'string.(int)'"),
        ('quantity("1").isGreaterThan(1)', "found no matching overload for 'isGreaterThan'"),
        ("device.driver > 1", "found no matching overload for '_>_'"),
    ],
)
def test_compile_errors(expr, fragment):
    with pytest.raises(CELError) as exc:
        compile_expression(expr)
    assert fragment in exc.value.message


def test_compile_error_has_upstream_shape():
    with pytest.raises(CELError) as exc:
        compile_expression("device.driver == x")
    assert exc.value.message == (
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'x' (in container '')\n"
        " | device.driver == x\n"
        " | .................^"
    )


@pytest.mark.parametrize(
    "expr,fragment",
    [
        ('device.attributes["other.com"].model == "x"', "no such key: model"),
        (f"{A}.nope", "no such key: nope"),
        (f"{A}.model", "CEL result of type string could not be converted to bool"),
        ("1 / 0 == 1", "division by zero"),
        ('quantity("1x") == quantity("1")', "quantities must match the regular expression"),
        (f"{A}.model > 1", "no such overload"),
    ],
)
def test_runtime_errors(expr, fragment):
    compiled = compile_expression(expr)
    with pytest.raises(CELError) as exc:
        compiled.matches(ENV)
    assert fragment in exc.value.message


def test_compile_is_cached():
    assert compile_expression('device.driver == "x"') is compile_expression('device.driver == "x"')


def test_device_env_qualified_names_and_types():
    env = device_env(
        "d.io",
        {
            "attributes": {"a": {"int": 1}, "x.io/b": {"bool": False}},
            "capacity": {"mem": {"value": "1Gi", "requestPolicy": {"default": "1Mi"}}},
            "allowMultipleAllocations": True,
        },
    )
    assert env["attributes"]["d.io"] == {"a": 1}
    assert env["attributes"]["x.io"] == {"b": False}
    assert env["attributes"]["missing"] == {}
    assert env["capacity"]["d.io"]["mem"].canonical() == "1Gi"
    assert env["allowMultipleAllocations"] is True


def test_evaluation_is_microseconds():
    compiled = compile_expression(f'device.driver == "gpu.example.com" && {A}.model == "a100"')
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        compiled.matches(ENV)
    per_eval = (time.perf_counter() - start) / n
    assert per_eval < 50e-6  # about 1us on a laptop; generous for CI


def test_cost_estimate_small_for_plain_selectors_and_over_limit_for_deep_nesting():
    plain = compile_expression(f'device.driver == "gpu.example.com" && {A}.model == "a100"')
    assert 0 < plain.max_cost < 100 and not plain.exceeds_cost_limit
    two = compile_expression('device.attributes.all(d, device.attributes[d].all(k, k.startsWith("a")))')
    assert plain.max_cost < two.max_cost < 1_000_000
    deep = compile_expression(
        "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, "
        'device.attributes[c].all(k, k.matches("^a.*b")))))'
    )
    assert deep.exceeds_cost_limit


def test_cost_estimate_is_cel_gos_with_the_device_declaration():
    """Upstream's DRA size estimator: a driver name of up to 63 characters, an attribute
    value of up to 64, 32 domains of 32 attributes; the comparison costs a tenth of the
    shorter side."""
    plain = compile_expression(f'device.driver == "gpu.example.com" && {A}.model == "a100"')
    assert plain.max_cost == 9
    assert (
        compile_expression('device.attributes.all(d, device.attributes[d].all(k, k.startsWith("a")))').max_cost == 5379
    )


def test_upstream_cel_cost_case_is_too_complex():
    """pkg/apis/resource/validation's CEL-cost case: "too complex, exceeds cost limit"."""
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expr = f"{ten}.all(x, {ten}.all(y, {ten}.all(z, {ten}.all(z2, {ten}.all(z3, {ten}.all(z4, {ten}.all(z5, "
    expr += "int('1'.find('[0-9]*')) < 100)))))))"
    assert compile_expression(expr).exceeds_cost_limit
