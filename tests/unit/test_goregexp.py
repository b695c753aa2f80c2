"""Go's regexp (RE2) as CEL's matches/find/findAll and Kubernetes read patterns: syntax
Python's re accepts but Go refuses, Go's error texts, and where the two match differently."""

import pytest

from mockkube.cel import CELError, compile_with
from mockkube.machinery import goregexp


@pytest.mark.parametrize(
    "pattern, message",
    [
        # Go 1.22 regexp/syntax messages (error parsing regexp: <code>: `<arg>`)
        ("x++", "invalid nested repetition operator: `++`"),
        ("a**", "invalid nested repetition operator: `**`"),
        (")", "unexpected ): `)`"),
        ("a)", "unexpected ): `a)`"),
        ("foo(", "missing closing ): `foo(`"),
        ("[a", "missing closing ]: `[a`"),
        ("*", "missing argument to repetition operator: `*`"),
        ("a{2,1}", "invalid repeat count: `{2,1}`"),
        ("a{1001}", "invalid repeat count: `{1001}`"),
        ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
        ("(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
        (r"\Z", r"invalid escape sequence: `\Z`"),
        (r"(a)\1", r"invalid escape sequence: `\1`"),
        ("[z-a]", "invalid character class range: `z-a`"),
        ("a\\", "trailing backslash at end of expression: ``"),
    ],
)
def test_refused_as_go_refuses(pattern: str, message: str) -> None:
    with pytest.raises(goregexp.RegexpError) as err:
        goregexp.compile(pattern)
    assert str(err.value) == "error parsing regexp: " + message


@pytest.mark.parametrize(
    "pattern, text, found",
    [
        ("abc$", "abc\n", False),  # Go's $ is the end of the text; Python's also matches before a final \n
        (r"\d", "\u0663", False),  # Go's \d is ASCII
        (r"\w+", "héllo", True),
        (r"\pL+", "12héllo", True),  # Unicode classes: Python's re has none
        ("[[:alpha:]]+", "1ab2", True),  # POSIX classes
        (r"\Aab\z", "ab", True),
        ("(?i)ABC", "xabcx", True),
        ("(?<name>a)b", "ab", True),
    ],
)
def test_matches_as_go_matches(pattern: str, text: str, found: bool) -> None:
    assert goregexp.compile(pattern).search(text) is found


def test_find_all_as_go() -> None:
    assert goregexp.compile("[0-9]+").find_all("a1b22c333") == ["1", "22", "333"]
    assert goregexp.compile("[0-9]+").find_all("a1b22c333", 2) == ["1", "22"]
    assert goregexp.compile("[0-9]+").find_all("abc", 0) == []
    # an empty match abutting the previous match is skipped, as FindAllString does
    assert goregexp.compile("a*").find_all("baaac") == ["", "aaa", ""]
    assert goregexp.compile("").find_all("héllo") == [""] * 6
    assert goregexp.compile(r"\pL").find("12é3") == "é"
    assert goregexp.compile("x").find("abc") == ""


@pytest.mark.parametrize(
    "expression",
    [
        # upstream apiextensions TestValidationExpressions: a bad constant pattern fails when
        # the program is made (OptimizeRegex), before any object is validated
        "'abc'.find(')') == ''",
        "'abc'.findAll(')') == []",
        "'abc'.findAll(')', 1) == []",
        "matches('abc', ')')",  # cel-go's literal validator checks matches' first argument only
    ],
)
def test_constant_pattern_fails_at_program_instantiation(expression: str) -> None:
    with pytest.raises(CELError) as err:
        compile_with(expression, ())
    assert str(err.value) == "program instantiation failed: error parsing regexp: unexpected ): `)`"


def test_variable_pattern_fails_at_evaluation() -> None:
    compiled = compile_with("'abc'.matches(p)", (("p", "string"),))
    assert compiled.evaluate({"p": "a.c"}) is True
    with pytest.raises(CELError) as err:
        compiled.evaluate({"p": "x++"})
    assert str(err.value) == "error parsing regexp: invalid nested repetition operator: `++`"
