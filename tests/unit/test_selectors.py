import pytest

from mockkube.machinery.errors import APIError
from mockkube.machinery.selectors import (
    label_selector_from_object,
    node_selector_matches,
    node_selector_term_matches,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
)

KEY_RE_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_RE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


# Good strings from upstream TestSelectorParse: String() drops the spaces.
@pytest.mark.parametrize("s", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"])
def test_parse_round_trips(s):
    assert str(parse_label_selector(s)) == s.replace(" ", "")


@pytest.mark.parametrize("s", ["x=a||y=b", "x==a==b", "!x=a", "x<a", "x in", "a b", "a,,b", "a=b,"])
def test_parse_rejects(s):
    with pytest.raises(APIError) as e:
        parse_label_selector(s)
    assert e.value.code == 400 and e.value.reason == "BadRequest"


@pytest.mark.parametrize(
    "s,msg",
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("x !", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in x", "unable to parse requirement: found 'x' expected: '('"),
        ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
        ("a=b,", "found '', expected: identifier after ','"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        (")", "found ')', expected: !, identifier, or 'end of string'"),
        ("-a=b", f'unable to parse requirement: <nil>: Invalid value: "-a": {KEY_RE_MSG}'),
        ("a=-b", f'unable to parse requirement: values[0][a]: Invalid value: "-b": {VALUE_RE_MSG}'),
        (
            "x>a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("/a", 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'),
        (
            "a" * 64,
            f'unable to parse requirement: <nil>: Invalid value: "{"a" * 64}": name part must be no more than 63 bytes',
        ),
    ],
)
def test_parse_error_text(s, msg):
    with pytest.raises(APIError) as e:
        parse_label_selector(s)
    assert e.value.message == msg


@pytest.mark.parametrize(
    "s,labels,want",
    [
        ("", {"a": "b"}, True),
        ("", None, True),
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a!=b", {"a": "c"}, True),
        ("a in (b,c)", {"a": "c"}, True),
        ("a in (b,c)", {"a": "d"}, False),
        ("a notin (b,c)", {"a": "d"}, True),
        ("a notin (b,c)", {}, True),
        ("a notin (b,c)", {"a": "b"}, False),
        ("a", {"a": ""}, True),
        ("a", {"b": "x"}, False),
        ("!a", {"b": "x"}, True),
        ("!a", {"a": "x"}, False),
        ("a=", {"a": ""}, True),
        ("a in ()", {"a": ""}, True),
        ("a in (,b)", {"a": ""}, True),
        ("x>1", {"x": "2"}, True),
        ("x>1", {"x": "1"}, False),
        ("x>1", {"x": "abc"}, False),
        ("x>1", {}, False),
        ("x<5", {"x": "-3"}, True),
        ("x<5", {"x": "+3"}, True),
        ("a=b,c", {"a": "b", "c": "1"}, True),
        ("a=b,c", {"a": "b"}, False),
        ("example.com/role in (gpu),tier", {"example.com/role": "gpu", "tier": "x"}, True),
        ("in in (in)", {"in": "in"}, True),
    ],
)
def test_label_matching(s, labels, want):
    assert parse_label_selector(s).matches(labels) is want


def test_empty_and_exact_match():
    assert parse_label_selector("").empty
    assert parse_label_selector("  ").empty
    assert not parse_label_selector("a").empty
    sel = parse_label_selector("b=2,a in (x)")
    assert sel.requires_exact_match("a") == "x"
    assert sel.requires_exact_match("b") == "2"
    assert sel.requires_exact_match("c") is None
    assert str(sel) == "a in (x),b=2"  # sorted by key as upstream


def test_label_selector_from_object_nil_and_empty():
    assert not label_selector_from_object(None).matches({"a": "b"})
    assert not label_selector_from_object(None).matches({})
    assert not label_selector_from_object(None).empty
    assert label_selector_from_object({}).matches({"a": "b"})
    assert label_selector_from_object({"matchLabels": {}, "matchExpressions": []}).empty


@pytest.mark.parametrize(
    "sel,labels,want",
    [
        ({"matchLabels": {"app": "x"}}, {"app": "x", "o": "1"}, True),
        ({"matchLabels": {"app": "x"}}, {"app": "y"}, False),
        ({"matchExpressions": [{"key": "t", "operator": "In", "values": ["a", "b"]}]}, {"t": "b"}, True),
        ({"matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["a"]}]}, {"t": "b"}, True),
        ({"matchExpressions": [{"key": "t", "operator": "Exists"}]}, {"t": ""}, True),
        ({"matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]}, {"t": ""}, False),
        ({"matchLabels": {"app": "x"}, "matchExpressions": [{"key": "t", "operator": "Exists"}]}, {"app": "x"}, False),
    ],
)
def test_label_selector_from_object(sel, labels, want):
    assert label_selector_from_object(sel).matches(labels) is want


@pytest.mark.parametrize(
    "sel,msg",
    [
        (
            {"matchExpressions": [{"key": "t", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "t", "operator": "In"}]},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "t", "operator": "Exists", "values": ["a"]}]},
            'values: Invalid value: ["a"]: values set must be empty for exists and does not exist',
        ),
        ({"matchLabels": {"-t": "a"}}, f'key: Invalid value: "-t": {KEY_RE_MSG}'),
    ],
)
def test_label_selector_from_object_errors(sel, msg):
    with pytest.raises(APIError) as e:
        label_selector_from_object(sel)
    assert e.value.message == msg


def test_selector_from_set():
    assert selector_from_set({"a": "1"}).matches({"a": "1", "b": "2"})
    assert not selector_from_set({"a": "1"}).matches({"a": "2"})
    assert selector_from_set(None).empty


@pytest.mark.parametrize(
    "s,reqs",
    [
        ("", []),
        ("metadata.name=foo", [("metadata.name", "=", "foo")]),
        ("metadata.name==foo", [("metadata.name", "=", "foo")]),
        ("spec.nodeName!=", [("spec.nodeName", "!=", "")]),
        # terms are sorted as strings, like upstream
        ("z=1,a=2", [("a", "=", "2"), ("z", "=", "1")]),
        (r"a=x\,y", [("a", "=", "x,y")]),
        (r"a=x\=y", [("a", "=", "x=y")]),
        (r"a=x\\y", [("a", "=", "x\\y")]),
        ("a=b,", [("a", "=", "b")]),
        ("=", []),
        ("a!=b", [("a", "!=", "b")]),
    ],
)
def test_field_selector_parse(s, reqs):
    assert parse_field_selector(s).requirements == reqs


@pytest.mark.parametrize(
    "s,msg",
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=b,cd", "invalid selector: 'a=b,cd'; can't understand 'cd'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors(s, msg):
    with pytest.raises(APIError) as e:
        parse_field_selector(s)
    assert (e.value.code, e.value.message) == (400, msg)


def test_field_selector_matching():
    sel = parse_field_selector("metadata.namespace=ns,spec.nodeName!=")
    assert sel.matches({"metadata.namespace": "ns", "spec.nodeName": "n1"})
    assert not sel.matches({"metadata.namespace": "ns", "spec.nodeName": ""})
    assert not sel.matches({"metadata.namespace": "ns"})  # missing reads as ""
    assert not sel.matches({"metadata.namespace": "other", "spec.nodeName": "n1"})
    assert parse_field_selector("").matches({})
    assert parse_field_selector("").empty
    assert sel.requires_exact_match("metadata.namespace") == "ns"
    assert sel.requires_exact_match("spec.nodeName") is None
    assert str(parse_field_selector(r"a=x\,y")) == r"a=x\,y"


NODE = {"metadata": {"name": "n1", "labels": {"zone": "a", "gpus": "4", "kubernetes.io/hostname": "n1"}}}


def _term(exprs=None, fields=None):
    t = {}
    if exprs is not None:
        t["matchExpressions"] = exprs
    if fields is not None:
        t["matchFields"] = fields
    return t


@pytest.mark.parametrize(
    "term,want",
    [
        (_term(), False),
        (_term([], []), False),
        (_term([{"key": "zone", "operator": "In", "values": ["a", "b"]}]), True),
        (_term([{"key": "zone", "operator": "NotIn", "values": ["a"]}]), False),
        (_term([{"key": "zone", "operator": "Exists"}]), True),
        (_term([{"key": "rack", "operator": "DoesNotExist"}]), True),
        (_term([{"key": "gpus", "operator": "Gt", "values": ["3"]}]), True),
        (_term([{"key": "gpus", "operator": "Lt", "values": ["4"]}]), False),
        (_term([{"key": "gpus", "operator": "Gt", "values": ["x"]}]), False),  # parse error: no match
        (_term([{"key": "zone", "operator": "Bogus", "values": ["a"]}]), False),
        (_term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1"]}]), True),
        (_term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n2"]}]), False),
        (_term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["n2"]}]), True),
        (_term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]), False),
        (_term(fields=[{"key": "metadata.name", "operator": "Exists"}]), False),
        (
            _term(
                [{"key": "zone", "operator": "In", "values": ["a"]}],
                [{"key": "metadata.name", "operator": "In", "values": ["n2"]}],
            ),
            False,
        ),
    ],
)
def test_node_selector_term(term, want):
    assert node_selector_term_matches(term, NODE) is want


def test_node_selector_terms_are_ored():
    miss = _term([{"key": "zone", "operator": "In", "values": ["z"]}])
    hit = _term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1"]}])
    assert node_selector_matches({"nodeSelectorTerms": [miss, hit]}, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": [miss]}, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": []}, NODE)
    assert not node_selector_matches({"nodeSelectorTerms": [{}]}, NODE)
    assert node_selector_matches(None, NODE)


def test_node_selector_match_fields_ignored_for_unnamed_node():
    term = _term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n1"]}])
    assert node_selector_term_matches(term, {"metadata": {}})
