"""MutatingAdmissionPolicy over HTTP: ApplyConfiguration and JSONPatch mutations, params,
match conditions, namespace selection, reinvocation, failure policy and validation."""

from __future__ import annotations

import pytest

from mockkube.apiserver.admission.mutating import apply_configuration
from mockkube.cel.engine import CelObject
from mockkube.machinery import schema

ADM = "/apis/admissionregistration.k8s.io/v1"
CMS = "/api/v1/namespaces/default/configmaps"
RULES = {
    "resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}
    ]
}


async def _policy(api, name: str, mutations: list[dict], **spec) -> None:
    spec.setdefault("reinvocationPolicy", "Never")  # required, no default (upstream validation)
    body = {"metadata": {"name": name}, "spec": {"matchConstraints": RULES, "mutations": mutations, **spec}}
    code, out, _ = await api.post(f"{ADM}/mutatingadmissionpolicies", body)
    assert code == 201, out
    binding = {"metadata": {"name": name}, "spec": {"policyName": name}}
    if "paramKind" in spec:
        binding["spec"]["paramRef"] = {"name": "defaults", "namespace": "default", "parameterNotFoundAction": "Allow"}
    code, out, _ = await api.post(f"{ADM}/mutatingadmissionpolicybindings", binding)
    assert code == 201, out


def _apply(expr: str) -> dict:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expr}}


def _patch(expr: str) -> dict:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expr}}


def _obj(type_name: str, **fields) -> CelObject:
    o = CelObject(type_name)
    o.update(fields)
    return o


def test_apply_configuration_merges_as_server_side_apply():
    """Maps merge key by key, keyed lists by key (structured-merge-diff), scalars are replaced."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "app", "image": "app:1"}, {"name": "side", "image": "s:1"}]},
    }
    patch = _obj(
        "Object",
        metadata=_obj("Object.metadata", labels={"b": "2"}),
        spec=_obj("Object.spec", containers=[_obj("Object.spec.containers", name="side", image="s:2")]),
    )
    out = apply_configuration(pod, patch, schema.for_kind("", "v1", "Pod"))
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert out["spec"]["containers"] == [{"name": "app", "image": "app:1"}, {"name": "side", "image": "s:2"}]


async def test_apply_configuration_adds_labels(api):
    await _policy(
        api,
        "label",
        [_apply("Object{metadata: Object.metadata{labels: {'team': 'platform', 'name': object.metadata.name}}}")],
    )
    code, body, _ = await api.post(CMS, {"metadata": {"name": "c1", "labels": {"keep": "me"}}, "data": {"k": "v"}})
    assert code == 201, body
    assert body["metadata"]["labels"] == {"keep": "me", "team": "platform", "name": "c1"}
    assert body["data"] == {"k": "v"}


async def test_json_patch_with_escaped_keys(api):
    await _policy(
        api, "annotate", [_patch("[JSONPatch{op: 'add', path: '/data/' + jsonpatch.escapeKey('a/b~c'), value: 'x'}]")]
    )
    code, body, _ = await api.post(CMS, {"metadata": {"name": "c2"}, "data": {}})
    assert code == 201, body
    assert body["data"] == {"a/b~c": "x"}


async def test_params_and_match_conditions(api):
    assert (await api.post(CMS, {"metadata": {"name": "defaults"}, "data": {"owner": "sre"}}))[0] == 201
    await _policy(
        api,
        "owner",
        [_apply("Object{data: {'owner': params.data.owner}}")],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        matchConditions=[{"name": "not-exempt", "expression": "!object.metadata.name.startsWith('exempt')"}],
    )
    code, body, _ = await api.post(CMS, {"metadata": {"name": "c3"}, "data": {"x": "1"}})
    assert body["data"] == {"x": "1", "owner": "sre"}
    code, body, _ = await api.post(CMS, {"metadata": {"name": "exempt-1"}, "data": {"x": "1"}})
    assert body["data"] == {"x": "1"}


async def test_reinvocation_and_failure_policy(api):
    # "a-count" runs first and counts labels; "b-label" adds one; IfNeeded reruns "a-count"
    await _policy(
        api,
        "a-count",
        [
            _apply(
                "Object{metadata: Object.metadata{annotations: {'labels': string(size(object.metadata.?labels.orValue({})))}}}"
            )
        ],
        reinvocationPolicy="IfNeeded",
    )
    await _policy(api, "b-label", [_apply("Object{metadata: Object.metadata{labels: {'added': 'yes'}}}")])
    code, body, _ = await api.post(CMS, {"metadata": {"name": "c4"}})
    assert code == 201, body
    assert body["metadata"]["annotations"] == {"labels": "1"}
    await _policy(api, "broken", [_patch("[JSONPatch{op: 'remove', path: '/nothing/here'}]")])
    code, body, _ = await api.post(CMS, {"metadata": {"name": "c5"}})
    assert code == 403 and body["message"].startswith("policy 'broken' with binding 'broken' denied request: ")


async def test_policy_validation(api):
    bad = {
        "metadata": {"name": "bad"},
        "spec": {"matchConstraints": RULES, "mutations": [{"patchType": "Merge"}, _apply("Object{")]},
    }
    code, body, _ = await api.post(f"{ADM}/mutatingadmissionpolicies", bad)
    assert code == 422
    assert 'spec.mutations[0].patchType: Unsupported value: "Merge"' in body["message"]
    assert "spec.mutations[1].applyConfiguration.expression: Invalid value" in body["message"]


@pytest.mark.parametrize("plural", ["mutatingadmissionpolicies", "mutatingadmissionpolicybindings"])
async def test_listed_in_discovery(api, plural):
    code, body, _ = await api.get(f"{ADM}")
    assert plural in [r["name"] for r in body["resources"]]
