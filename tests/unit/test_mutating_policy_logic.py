"""Pure MutatingAdmissionPolicy logic: Object{} construction and SMD merge, JSONPatch with
jsonpatch.escapeKey, matchConditions, params, atomic refusal, errors, compile checks."""

from __future__ import annotations

import pytest

from mockkube.apiserver.admission.matching import Attributes
from mockkube.apiserver.admission.mutating import TYPES, MutationError, check_patch_expression, mutate
from mockkube.cel import CELError, compile_with
from mockkube.machinery import schema

DEPLOY = schema.for_kind("apps", "v1", "Deployment")
CM = schema.for_kind("", "v1", "ConfigMap")


def _attrs(
    obj: dict,
    old: dict | None = None,
    op: str = "CREATE",
    kind: str = "ConfigMap",
    resource: str = "configmaps",
    group: str = "",
) -> Attributes:
    return Attributes(
        op,
        group,
        "v1",
        kind,
        resource,
        "",
        "default",
        obj["metadata"]["name"],
        obj,
        old,
        True,
        {"username": "alice", "groups": ["dev"]},
    )


def _policy(*mutations: dict, **spec) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"mutations": list(mutations), **spec}}


def _apply(expr: str) -> dict:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expr}}


def _jp(expr: str) -> dict:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expr}}


def test_apply_configuration_merges_maps_and_keyed_lists():
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"a": "1"}},
        "spec": {
            "replicas": 1,
            "template": {
                "spec": {"containers": [{"name": "app", "image": "app:1"}, {"name": "side", "image": "side:1"}]}
            },
        },
    }
    expr = (
        "Object{metadata: Object.metadata{labels: {'b': '2'}}, spec: Object.spec{replicas: 3, "
        "template: Object.spec.template{spec: Object.spec.template.spec{containers: ["
        "Object.spec.template.spec.containers{name: 'side', image: 'side:2'}]}}}}"
    )
    out = mutate(
        _policy(_apply(expr)), _attrs(dep, kind="Deployment", resource="deployments", group="apps"), None, DEPLOY
    )
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert out["spec"]["replicas"] == 3
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "app:1"},
        {"name": "side", "image": "side:2"},
    ]
    assert dep["spec"]["replicas"] == 1  # pure: the input is not touched


def test_atomic_lists_are_refused_and_type_names_must_match_fields():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}
    a = _attrs(dep, kind="Deployment", resource="deployments", group="apps")
    with pytest.raises(
        MutationError,
        match=r"may not mutate atomic arrays, maps or structs: "
        r"\.spec\.template\.spec\.containers\[0\]\.args",
    ):
        mutate(
            _policy(
                _apply(
                    "Object{spec: Object.spec{template: Object.spec.template{spec: "
                    "Object.spec.template.spec{containers: [Object.spec.template.spec.containers{"
                    "name: 'a', args: ['x']}]}}}}"
                )
            ),
            a,
            None,
            DEPLOY,
        )
    with pytest.raises(MutationError, match="type mismatch"):
        mutate(_policy(_apply("Object{spec: Object.metadata{}}")), a, None, DEPLOY)
    with pytest.raises(
        MutationError,
        match=r"failed to convert patch object to typed object: \.spec\.bogus: "
        r"field not declared in schema",
    ):
        mutate(_policy(_apply("Object{spec: Object.spec{bogus: 1}}")), a, None, DEPLOY)


def test_json_patch_ops_escape_key_and_failed_test():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}}, "data": {"x": "1"}}
    expr = (
        "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a.io/b~c'), value: 'v'},"
        " JSONPatch{op: 'replace', path: '/data/x', value: string(int(object.data.x) + 1)},"
        " JSONPatch{op: 'copy', from: '/data/x', path: '/data/y'}]"
    )
    out = mutate(_policy(_jp(expr)), _attrs(cm), None, CM)
    assert out["metadata"]["labels"] == {"a.io/b~c": "v"}
    assert out["data"] == {"x": "2", "y": "2"}
    # a failed test operation: the patch is not applied, no error
    out = mutate(
        _policy(_jp("[JSONPatch{op: 'test', path: '/data/x', value: '9'}, JSONPatch{op: 'remove', path: '/data'}]")),
        _attrs(cm),
        None,
        CM,
    )
    assert out == cm
    with pytest.raises(MutationError, match="^JSONPath: "):
        mutate(_policy(_jp("[JSONPatch{op: 'remove', path: '/nope'}]")), _attrs(cm), None, CM)


def test_mutations_run_in_order_and_see_each_other():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    first = _apply("Object{data: {'a': 'x'}}")
    second = _apply("Object{data: {'b': object.data.a + '!'}}")
    out = mutate(_policy(first, second), _attrs(cm), None, CM)
    assert out["data"] == {"a": "x", "b": "x!"}


def test_variables_params_request_and_match_conditions():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    pol = _policy(
        _apply("Object{metadata: Object.metadata{labels: {'by': variables.who, 'env': params.data.env}}}"),
        variables=[{"name": "who", "expression": "request.userInfo.username"}],
        matchConditions=[{"name": "dev", "expression": "'dev' in request.userInfo.groups"}],
    )
    out = mutate(pol, _attrs(cm), {"data": {"env": "prod"}}, CM)
    assert out["metadata"]["labels"] == {"by": "alice", "env": "prod"}
    pol["spec"]["matchConditions"][0]["expression"] = "'ops' in request.userInfo.groups"
    assert mutate(pol, _attrs(cm), {"data": {"env": "prod"}}, CM) is None
    pol["spec"]["matchConditions"][0]["expression"] = "object.nope"
    with pytest.raises(MutationError, match="failed to evaluate match condition 'dev'"):
        mutate(pol, _attrs(cm), None, CM)


def test_evaluation_error_message():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    with pytest.raises(MutationError) as exc:
        mutate(_policy(_apply("Object{data: {'a': object.data.b}}")), _attrs(cm), None, CM)
    assert exc.value.message.startswith("expression 'Object{data: {'a': object.data.b}}' resulted in error: ")
    assert exc.value.reason == "Invalid"


@pytest.mark.parametrize(
    "patch_type,expr,want",
    [
        ("ApplyConfiguration", "Object{}", ""),
        ("ApplyConfiguration", "[1]", "must evaluate to Object but got list(int)"),
        ("JSONPatch", "[JSONPatch{op: 'add', path: '/a', value: 1}]", ""),
        ("JSONPatch", "Object{}", "must evaluate to list(JSONPatch) but got Object"),
        ("JSONPatch", "[Nope{}]", "undeclared reference to 'Nope'"),
    ],
)
def test_check_patch_expression(patch_type, expr, want):
    got = check_patch_expression(patch_type, expr)
    assert (want in got) if want else got == ""


def test_object_construction_is_only_known_where_declared():
    with pytest.raises(CELError, match="undeclared reference to 'Object'"):
        compile_with("Object{}", (("object", "dyn"),))
    with pytest.raises(CELError, match="Syntax error"):
        compile_with("Object{1: 2}", TYPES)
    e = compile_with("Object{?metadata: optional.none()}", TYPES)
    assert e.evaluate({}) == {}
