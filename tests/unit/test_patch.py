"""JSON patch and merge patch, with kube-apiserver's status codes and evanphx/json-patch quirks."""

from __future__ import annotations

import copy
import json

import pytest

from mockkube.machinery.errors import APIError
from mockkube.machinery.patch import apply_json_patch, apply_merge_patch

GENERIC_422 = "the server rejected our request due to an error in our request"


def pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p1",
            "namespace": "default",
            "labels": {"app": "web", "a/b": "x", "t~n": "y"},
            "finalizers": ["f1", "f2"],
        },
        "spec": {
            "containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}],
            "nodeName": None,
        },
    }


# -- JSON patch: successes -----------------------------------------------------------

JSON_PATCH_OK = [
    (
        "add label",
        [{"op": "add", "path": "/metadata/labels/tier", "value": "fe"}],
        lambda d: d["metadata"]["labels"].__setitem__("tier", "fe"),
    ),
    (
        "add replaces existing key",
        [{"op": "add", "path": "/metadata/labels/app", "value": "db"}],
        lambda d: d["metadata"]["labels"].__setitem__("app", "db"),
    ),
    (
        "append with -",
        [{"op": "add", "path": "/metadata/finalizers/-", "value": "f3"}],
        lambda d: d["metadata"]["finalizers"].append("f3"),
    ),
    (
        "insert at index",
        [{"op": "add", "path": "/metadata/finalizers/0", "value": "f0"}],
        lambda d: d["metadata"]["finalizers"].insert(0, "f0"),
    ),
    (
        "insert at len",
        [{"op": "add", "path": "/metadata/finalizers/2", "value": "f3"}],
        lambda d: d["metadata"]["finalizers"].append("f3"),
    ),
    (
        "negative index on add",
        [{"op": "add", "path": "/metadata/finalizers/-1", "value": "z"}],
        lambda d: d["metadata"]["finalizers"].append("z"),
    ),
    ("remove list item", [{"op": "remove", "path": "/spec/containers/0"}], lambda d: d["spec"]["containers"].pop(0)),
    (
        "remove negative index",
        [{"op": "remove", "path": "/metadata/finalizers/-1"}],
        lambda d: d["metadata"]["finalizers"].pop(),
    ),
    (
        "remove escaped ~1",
        [{"op": "remove", "path": "/metadata/labels/a~1b"}],
        lambda d: d["metadata"]["labels"].pop("a/b"),
    ),
    (
        "remove escaped ~0",
        [{"op": "remove", "path": "/metadata/labels/t~0n"}],
        lambda d: d["metadata"]["labels"].pop("t~n"),
    ),
    ("remove key holding null", [{"op": "remove", "path": "/spec/nodeName"}], lambda d: d["spec"].pop("nodeName")),
    (
        "replace image",
        [{"op": "replace", "path": "/spec/containers/1/image", "value": "alpine"}],
        lambda d: d["spec"]["containers"][1].__setitem__("image", "alpine"),
    ),
    (
        "replace on a missing object key adds it (v4 quirk)",
        [{"op": "replace", "path": "/metadata/labels/new", "value": "v"}],
        lambda d: d["metadata"]["labels"].__setitem__("new", "v"),
    ),
    (
        "move",
        [{"op": "move", "from": "/metadata/labels/app", "path": "/metadata/labels/application"}],
        lambda d: d["metadata"]["labels"].__setitem__("application", d["metadata"]["labels"].pop("app")),
    ),
    (
        "copy",
        [{"op": "copy", "from": "/spec/containers/0", "path": "/spec/containers/-"}],
        lambda d: d["spec"]["containers"].append(copy.deepcopy(d["spec"]["containers"][0])),
    ),
    (
        "copy from a missing key adds null (v4 quirk)",
        [{"op": "copy", "from": "/metadata/labels/nope", "path": "/metadata/labels/x"}],
        lambda d: d["metadata"]["labels"].__setitem__("x", None),
    ),
    (
        "test then replace",
        [
            {"op": "test", "path": "/metadata/name", "value": "p1"},
            {"op": "replace", "path": "/metadata/name", "value": "p2"},
        ],
        lambda d: d["metadata"].__setitem__("name", "p2"),
    ),
    (
        "test object",
        [{"op": "test", "path": "/spec/containers/0", "value": {"image": "nginx:1", "name": "a"}}],
        lambda d: None,
    ),
    ("test null matches missing", [{"op": "test", "path": "/metadata/labels/missing", "value": None}], lambda d: None),
    (
        "add without value adds null",
        [{"op": "add", "path": "/metadata/labels/n"}],
        lambda d: d["metadata"]["labels"].__setitem__("n", None),
    ),
    (
        "path without leading slash drops its first segment",
        [{"op": "add", "path": "ignored/kind2", "value": "X"}],
        lambda d: d.__setitem__("kind2", "X"),
    ),
    ("null document is no patch", None, lambda d: None),
]


@pytest.mark.parametrize("name,ops,mutate", JSON_PATCH_OK, ids=[c[0] for c in JSON_PATCH_OK])
def test_json_patch_applies(name, ops, mutate):
    doc = pod()
    before = copy.deepcopy(doc)
    ops_before = copy.deepcopy(ops)
    expected = pod()
    mutate(expected)
    assert apply_json_patch(doc, ops) == expected
    assert doc == before and ops == ops_before  # inputs untouched


def test_json_patch_accepts_raw_bytes():
    body = json.dumps([{"op": "replace", "path": "/metadata/labels/app", "value": "x"}]).encode()
    assert apply_json_patch(pod(), body)["metadata"]["labels"]["app"] == "x"


def test_json_patch_values_are_not_aliased():
    value = {"k": ["v"]}
    out = apply_json_patch({"a": {}}, [{"op": "add", "path": "/a/x", "value": value}])
    out["a"]["x"]["k"].append("w")
    assert value == {"k": ["v"]}


# -- JSON patch: failed operations are a bare 422 --------------------------------------

JSON_PATCH_FAIL = [
    (
        "test fails",
        [{"op": "test", "path": "/metadata/name", "value": "other"}],
        "testing value /metadata/name failed: test failed",
    ),
    (
        "test of a bool against a number",
        [{"op": "test", "path": "/x", "value": 1}],
        "testing value /x failed: test failed",
    ),
    (
        "test of a missing key against a value",
        [{"op": "test", "path": "/metadata/labels/zz", "value": "v"}],
        "testing value /metadata/labels/zz failed: test failed",
    ),
    (
        "remove missing key",
        [{"op": "remove", "path": "/metadata/labels/nope"}],
        "error in remove for path: '/metadata/labels/nope': Unable to remove nonexistent key: nope: missing value",
    ),
    (
        "add under missing parent",
        [{"op": "add", "path": "/spec/missing/x", "value": 1}],
        'add operation does not apply: doc is missing path: "/spec/missing/x": missing value',
    ),
    (
        "add past the end",
        [{"op": "add", "path": "/spec/containers/5", "value": {}}],
        "error in add for path: '/spec/containers/5': Unable to access invalid index: 5: invalid index referenced",
    ),
    (
        "add with a bad index",
        [{"op": "add", "path": "/spec/containers/x", "value": {}}],
        "error in add for path: '/spec/containers/x': value was not a proper array index: 'x': "
        'strconv.Atoi: parsing "x": invalid syntax',
    ),
    (
        "remove past the end",
        [{"op": "remove", "path": "/metadata/finalizers/2"}],
        "error in remove for path: '/metadata/finalizers/2': Unable to access invalid index: 2: invalid index referenced",
    ),
    (
        "replace past the end",
        [{"op": "replace", "path": "/metadata/finalizers/9", "value": "x"}],
        "replace operation does not apply: doc is missing key: /metadata/finalizers/9: missing value",
    ),
    (
        "replace under missing parent",
        [{"op": "replace", "path": "/nope/x", "value": "x"}],
        "replace operation does not apply: doc is missing path: /nope/x: missing value",
    ),
    (
        "move from missing key",
        [{"op": "move", "from": "/metadata/labels/nope", "path": "/metadata/labels/x"}],
        "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value",
    ),
    (
        "move without from",
        [{"op": "move", "path": "/metadata/labels/x"}],
        "move operation failed to decode from: operation, missing from field: missing value",
    ),
    ("remove without path", [{"op": "remove"}], "remove operation failed to decode path: missing value"),
    ("unknown op", [{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate"),
    ("missing op", [{"path": "/a"}], "Unexpected kind: unknown"),
    (
        "traverse into a scalar",
        [{"op": "add", "path": "/metadata/name/x", "value": 1}],
        'add operation does not apply: doc is missing path: "/metadata/name/x": missing value',
    ),
    (
        "second op fails, nothing applied",
        [
            {"op": "add", "path": "/metadata/labels/ok", "value": "1"},
            {"op": "test", "path": "/metadata/labels/ok", "value": "2"},
        ],
        "testing value /metadata/labels/ok failed: test failed",
    ),
]


@pytest.mark.parametrize("name,ops,cause", JSON_PATCH_FAIL, ids=[c[0] for c in JSON_PATCH_FAIL])
def test_json_patch_failures_are_422(name, ops, cause):
    doc = pod()
    doc["x"] = True
    before = copy.deepcopy(doc)
    with pytest.raises(APIError) as ei:
        apply_json_patch(doc, ops)
    err = ei.value
    assert (err.code, err.reason, err.message) == (422, "Invalid", GENERIC_422)
    assert str(err.__cause__) == cause
    assert doc == before


# -- JSON patch: malformed documents -------------------------------------------------

JSON_PATCH_MALFORMED = [
    (
        "object body",
        {"op": "add"},
        400,
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
    ),
    ("string body", "[", 400, None),
    (
        "number item",
        [1],
        400,
        "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
    ),
    (
        "non-string op",
        [{"op": 1, "path": "/a"}],
        400,
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string",
    ),
    (
        "non-string path",
        [{"op": "add", "path": ["a"]}],
        400,
        "error decoding patch: json: cannot unmarshal array into Go struct field jsonPatchOp.path of type string",
    ),
    (
        "too many operations",
        [{"op": "test", "path": "/a"}] * 10001,
        413,
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    ),
]


@pytest.mark.parametrize("name,ops,code,message", JSON_PATCH_MALFORMED, ids=[c[0] for c in JSON_PATCH_MALFORMED])
def test_json_patch_malformed(name, ops, code, message):
    with pytest.raises(APIError) as ei:
        apply_json_patch(pod(), ops)
    assert ei.value.code == code
    assert ei.value.reason == {400: "BadRequest", 413: "RequestEntityTooLarge"}[code]
    if message is not None:
        assert ei.value.message == message


def test_json_patch_ignore_validation_uses_decodepatch_wording():
    with pytest.raises(APIError) as ei:
        apply_json_patch(pod(), {"op": "add"}, field_validation="Ignore")
    assert ei.value.message == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"


def test_json_patch_replace_root_with_array_is_invalid():
    with pytest.raises(APIError) as ei:
        apply_json_patch(pod(), [{"op": "replace", "path": "", "value": [1]}])
    assert ei.value.code == 422
    assert ei.value.message.startswith(' "" is invalid: patch: Invalid value: "[1]"')


def test_json_patch_replace_root_with_object():
    assert apply_json_patch(pod(), [{"op": "replace", "path": "", "value": {"a": 1}}]) == {"a": 1}


# -- merge patch ---------------------------------------------------------------------

# RFC 7386 appendix A, restricted to object targets and object patches.
RFC7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    # kubectl label/annotate
    (
        {"metadata": {"labels": {"x": "1"}}},
        {"metadata": {"labels": {"foo": "bar", "x": None}}},
        {"metadata": {"labels": {"foo": "bar"}}},
    ),
    # nulls in a new array's objects are pruned; null items stay
    ({}, {"a": [{"x": None, "y": 1}, None]}, {"a": [{"y": 1}, None]}),
    # an object replaced by an array keeps the array as sent (no pruning there)
    ({"a": {"k": 1}}, {"a": [{"x": None}]}, {"a": [{"x": None}]}),
]


@pytest.mark.parametrize("doc,patch,expected", RFC7386)
def test_merge_patch(doc, patch, expected):
    before, pbefore = copy.deepcopy(doc), copy.deepcopy(patch)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == before and patch == pbefore


def test_merge_patch_containers_list_is_replaced():
    out = apply_merge_patch(pod(), {"spec": {"containers": [{"name": "b", "image": "x"}]}})
    assert out["spec"]["containers"] == [{"name": "b", "image": "x"}]


@pytest.mark.parametrize(
    "patch,message",
    [
        (None, "Invalid JSON Patch"),
        ([1], "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b'"x"', "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (b"null", "Invalid JSON Patch"),
    ],
)
def test_merge_patch_bad_documents_are_400(patch, message):
    with pytest.raises(APIError) as ei:
        apply_merge_patch(pod(), patch)
    assert (ei.value.code, ei.value.reason, ei.value.message) == (400, "BadRequest", message)


def test_merge_patch_scalar_with_ignore_is_bad_json_patch():
    with pytest.raises(APIError) as ei:
        apply_merge_patch(pod(), 3, field_validation="Ignore")
    assert (ei.value.code, ei.value.message) == (400, "Invalid JSON Patch")


def test_merge_patch_array_with_ignore_fails_to_decode_as_object():
    with pytest.raises(APIError) as ei:
        apply_merge_patch(pod(), [{"a": None}], field_validation="Ignore")
    assert ei.value.code == 422
    assert ei.value.message == (
        ' "" is invalid: patch: Invalid value: "[{}]": '
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    )
