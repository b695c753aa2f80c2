"""The AST validators every Kubernetes CEL environment adds (k8s.io/apiserver
pkg/cel/environment/base.go: cel.ASTValidators(ValidateDurationLiterals,
ValidateTimestampLiterals, ValidateRegexLiterals, ValidateHomogeneousAggregateLiterals)).
Cases and expected texts from upstream's apiextensions TestValidationExpressions, whose
error map holds a text the message must contain."""

import pytest

from mockkube.cel import CELError, compile_with

SELF = (("self", "dyn"),)


@pytest.mark.parametrize(
    "expression, contains",
    [
        ("self.val1.matches(')')", "compilation failed: ERROR: <input>:1:19: invalid matches argument"),
        ("duration('1')", "compilation failed: ERROR: <input>:1:10: invalid duration argument"),
        ("duration('1d')", "compilation failed: ERROR: <input>:1:10: invalid duration argument"),
        ("duration('1us') < duration('1nns')", "compilation failed: ERROR: <input>:1:28: invalid duration argument"),
        ("timestamp('1000-00-00T00:00:00Z')", "compilation failed: ERROR: <input>:1:11: invalid timestamp"),
        ("timestamp('1000-01-01T00:00:00ZZ')", "compilation failed: ERROR: <input>:1:11: invalid timestamp"),
        ("timestamp(-62135596801)", "compilation failed: ERROR: <input>:1:11: invalid timestamp"),
        ("[1, 'a', false].filter(x, string(x) == 'a')", "compilation"),
        ("self.str.find(')') == ''", "program instantiation failed: error parsing regexp: unexpected ): `)`"),
        ("self.str.findAll(')') == []", "program instantiation failed: error parsing regexp: unexpected ): `)`"),
        ("self.str.findAll(')', 1) == []", "program instantiation failed: error parsing regexp: unexpected ): `)`"),
    ],
)
def test_upstream_compile_errors(expression: str, contains: str) -> None:
    with pytest.raises(CELError) as err:
        compile_with(expression, SELF)
    assert contains in str(err.value)


@pytest.mark.parametrize(
    "expression, message",
    [
        # cel-go's validator texts and positions (the element that breaks the first one's type)
        ("[1, 'a', false].size() == 3", "ERROR: <input>:1:5: expected type 'int' but found 'string'"),
        ("{'a': 1, 'b': 'x'}.size() == 2", "ERROR: <input>:1:15: expected type 'int' but found 'string'"),
        ("{'a': 1, 2: 1}.size() == 2", "ERROR: <input>:1:10: expected type 'string' but found 'int'"),
        ("[1, 2.0].size() == 2", "ERROR: <input>:1:5: expected type 'int' but found 'double'"),
    ],
)
def test_mixed_literals_refused(expression: str, message: str) -> None:
    with pytest.raises(CELError) as err:
        compile_with(expression, ())
    assert str(err.value).splitlines()[0] == "compilation failed: " + message


@pytest.mark.parametrize(
    "expression",
    [
        # string format calls may mix types, through nested list and map literals too
        "'%d %s'.format([1, 'abc']) == '1 abc'",
        "'%s'.format([[1, 'a']]) != ''",
        "'%s'.format([{'a': 1, 'b': 'x'}]) != ''",
        "[[1], [2]] == [[1], [2]]",
        "[?optional.of(1), 2].size() == 2",
        "duration('1h2m3s4ms') == duration('1h2m') + duration('3s4ms')",
        "timestamp('2011-08-18T19:03:37.010+01:00') != timestamp(0)",
        "'abc'.matches('^a')",
    ],
)
def test_valid_literals_pass(expression: str) -> None:
    assert compile_with(expression, ()).evaluate({}) is True


def test_spec_environment_has_no_validators() -> None:
    """cel-spec's conformance tests run cel-go without Kubernetes' validators."""
    assert compile_with("[1, 'a'].size() == 2", (), kubernetes=False).evaluate({}) is True
    with pytest.raises(CELError, match="unknown unit"):
        compile_with("duration('1d')", (), kubernetes=False).evaluate({})


def test_elements_typed_at_run_time_pass() -> None:
    """An element whose type is dyn here (upstream would know it from the schema) is not
    judged: refusing it would refuse what upstream accepts."""
    assert compile_with("{'team': 'a', 'name': self.name}.size() == 2", SELF).evaluate({"self": {"name": "x"}})
    assert compile_with("[self.n, 1].size() == 2", SELF).evaluate({"self": {"n": 2}})
