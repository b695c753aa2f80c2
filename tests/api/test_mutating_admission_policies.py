"""MutatingAdmissionPolicy over HTTP: ApplyConfiguration and JSONPatch mutations on create and
update (before validation), params, matchConditions, failurePolicy, reinvocation, custom
resources, the kinds' own validation and Table columns."""

from __future__ import annotations

MAP = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
MAPB = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"
VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
VAPB = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
CM = "/api/v1/namespaces/default/configmaps"

CM_RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]


def _apply(expr: str) -> dict:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expr}}


def _jsonpatch(expr: str) -> dict:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expr}}


def _policy(name: str, *mutations: dict, **spec) -> dict:
    rules = spec.pop("rules", CM_RULES)
    spec.setdefault("reinvocationPolicy", "Never")
    return {
        "metadata": {"name": name},
        "spec": {"matchConstraints": {"resourceRules": rules}, "mutations": list(mutations), **spec},
    }


def _binding(name: str, policy: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"policyName": policy, **spec}}


LABEL = "Object{metadata: Object.metadata{labels: {'team': 'blue'}}}"


async def test_apply_configuration_adds_a_label_on_create_and_update(api):
    st, pol, _ = await api.post(MAP, _policy("label", _apply(LABEL)))
    assert st == 201, pol
    assert pol["spec"]["failurePolicy"] == "Fail"
    assert pol["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert "status" not in pol
    # without a binding nothing happens
    st, cm, _ = await api.post(CM, {"metadata": {"name": "before"}})
    assert st == 201 and "labels" not in cm["metadata"]
    assert (await api.post(MAPB, _binding("label", "label")))[0] == 201
    st, cm, _ = await api.post(CM, {"metadata": {"name": "a", "labels": {"keep": "me"}}, "data": {"k": "v"}})
    assert st == 201, cm
    assert cm["metadata"]["labels"] == {"keep": "me", "team": "blue"}
    assert cm["data"] == {"k": "v"}
    # an update that drops the label gets it back; a label the client changes is overwritten
    st, cm, _ = await api.put(f"{CM}/before", {"metadata": {"name": "before", "labels": {"team": "red"}}})
    assert st == 200, cm
    assert cm["metadata"]["labels"] == {"team": "blue"}
    st, got, _ = await api.get(f"{CM}/a")
    assert got["metadata"]["labels"]["team"] == "blue"
    # dry-run shows the mutation too
    st, cm, _ = await api.post(CM + "?dryRun=All", {"metadata": {"name": "dry"}})
    assert st == 201 and cm["metadata"]["labels"] == {"team": "blue"}


async def test_json_patch_with_escape_key_and_test_op(api):
    expr = (
        "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {}},"
        " JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/owner'),"
        " value: request.userInfo.username}]"
    )
    assert (await api.post(MAP, _policy("owner", _jsonpatch(expr))))[0] == 201
    assert (await api.post(MAPB, _binding("owner", "owner")))[0] == 201
    st, cm, _ = await api.post(CM, {"metadata": {"name": "j"}})
    assert st == 201, cm
    assert cm["metadata"]["annotations"] == {"example.com/owner": "kubernetes-admin"}
    # a failed `test` leaves the object as it was
    guarded = "[JSONPatch{op: 'test', path: '/data/mode', value: 'x'}, JSONPatch{op: 'remove', path: '/data'}]"
    assert (await api.post(MAP, _policy("guard", _jsonpatch(guarded))))[0] == 201
    assert (await api.post(MAPB, _binding("guard", "guard")))[0] == 201
    st, cm, _ = await api.post(CM, {"metadata": {"name": "g"}, "data": {"mode": "y"}})
    assert st == 201 and cm["data"] == {"mode": "y"}
    st, cm, _ = await api.post(CM, {"metadata": {"name": "g2"}, "data": {"mode": "x"}})
    assert st == 201 and "data" not in cm


async def test_params_from_a_configmap_and_match_conditions(api):
    await api.post("/api/v1/namespaces", {"metadata": {"name": "map-params"}})
    assert (
        await api.post(
            "/api/v1/namespaces/map-params/configmaps", {"metadata": {"name": "defaults"}, "data": {"tier": "gold"}}
        )
    )[0] == 201
    pol = _policy(
        "tier",
        _apply("Object{metadata: Object.metadata{labels: {'tier': params.data.tier}}}"),
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        matchConditions=[{"name": "not-params", "expression": "object.metadata.name != 'defaults'"}],
    )
    assert (await api.post(MAP, pol))[0] == 201
    b = _binding(
        "tier", "tier", paramRef={"name": "defaults", "namespace": "map-params", "parameterNotFoundAction": "Deny"}
    )
    assert (await api.post(MAPB, b))[0] == 201
    st, cm, _ = await api.post(CM, {"metadata": {"name": "p"}})
    assert st == 201 and cm["metadata"]["labels"] == {"tier": "gold"}
    # missing params with Deny: a configuration error, 403 Forbidden
    await api.delete("/api/v1/namespaces/map-params/configmaps/defaults")
    st, body, _ = await api.post(CM, {"metadata": {"name": "q"}})
    assert (st, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        "policy 'tier' with binding 'tier' denied request: failed to configure binding: "
        "no params found for policy binding with `Deny` parameterNotFoundAction"
    )


async def test_errors_fail_or_ignore_and_mutation_runs_before_validation(api):
    bad = _apply("Object{metadata: Object.metadata{labels: {'n': string(object.data.missing)}}}")
    assert (await api.post(MAP, _policy("broken", bad)))[0] == 201
    assert (await api.post(MAPB, _binding("broken", "broken")))[0] == 201
    st, body, _ = await api.post(CM, {"metadata": {"name": "e"}, "data": {"a": "b"}})
    assert (st, body["reason"], body["code"]) == (403, "Invalid", 403)
    assert body["message"].startswith("policy 'broken' with binding 'broken' denied request: expression ")
    assert "no such key: missing" in body["message"]
    assert body["details"]["causes"] == [{"message": body["message"]}]
    pol = (await api.get(f"{MAP}/broken"))[1]
    pol["spec"]["failurePolicy"] = "Ignore"
    assert (await api.put(f"{MAP}/broken", pol))[0] == 200
    assert (await api.post(CM, {"metadata": {"name": "e"}, "data": {"a": "b"}}))[0] == 201
    # a validating policy sees the mutated object
    assert (await api.post(MAP, _policy("stamp", _apply(LABEL))))[0] == 201
    assert (await api.post(MAPB, _binding("stamp", "stamp")))[0] == 201
    vap = {
        "metadata": {"name": "needs-team"},
        "spec": {
            "matchConstraints": {"resourceRules": CM_RULES},
            "validations": [{"expression": "object.metadata.labels.team == 'blue'"}],
        },
    }
    assert (await api.post(VAP, vap))[0] == 201
    assert (
        await api.post(
            VAPB,
            {"metadata": {"name": "needs-team"}, "spec": {"policyName": "needs-team", "validationActions": ["Deny"]}},
        )
    )[0] == 201
    assert (await api.post(CM, {"metadata": {"name": "v"}}))[0] == 201
    # the mutated object is validated as any other: a label value that is not valid is refused
    assert (
        await api.post(
            MAP, _policy("badlabel", _apply("Object{metadata: Object.metadata{labels: {'x': 'not valid!'}}}"))
        )
    )[0] == 201
    assert (await api.post(MAPB, _binding("badlabel", "badlabel")))[0] == 201
    st, body, _ = await api.post(CM, {"metadata": {"name": "w"}})
    assert st == 422 and body["details"]["causes"][0]["field"] == "metadata.labels"


async def test_atomic_lists_are_refused_and_reinvocation(api):
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["services"]}]
    # Service.spec.ports is a map list (fine); spec.externalIPs is atomic
    atomic = _apply("Object{spec: Object.spec{externalIPs: ['1.2.3.4']}}")
    assert (await api.post(MAP, _policy("atomic", atomic, rules=rules)))[0] == 201
    assert (await api.post(MAPB, _binding("atomic", "atomic")))[0] == 201
    st, body, _ = await api.post(
        "/api/v1/namespaces/default/services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    )
    assert st == 403
    assert body["message"].endswith(
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic "
        "arrays, maps or structs: .spec.externalIPs"
    )
    # reinvocation: 'a-copy' copies a label that the later 'b-set' adds; IfNeeded runs it again
    copy = _apply(
        "Object{metadata: Object.metadata{annotations: {'copied': object.metadata.?labels.?src.orValue('none')}}}"
    )
    assert (await api.post(MAP, _policy("a-copy", copy, reinvocationPolicy="IfNeeded")))[0] == 201
    assert (await api.post(MAPB, _binding("a-copy", "a-copy")))[0] == 201
    assert (await api.post(MAP, _policy("b-set", _apply("Object{metadata: Object.metadata{labels: {'src': 'b'}}}"))))[
        0
    ] == 201
    assert (await api.post(MAPB, _binding("b-set", "b-set")))[0] == 201
    st, cm, _ = await api.post(CM, {"metadata": {"name": "r"}})
    assert st == 201, cm
    assert cm["metadata"]["annotations"] == {"copied": "b"}
    pol = (await api.get(f"{MAP}/a-copy"))[1]
    pol["spec"]["reinvocationPolicy"] = "Never"
    assert (await api.put(f"{MAP}/a-copy", pol))[0] == 200
    st, cm, _ = await api.post(CM, {"metadata": {"name": "r2"}})
    assert cm["metadata"]["annotations"] == {"copied": "none"}


async def test_custom_resources_are_mutated(api):
    crd = {
        "metadata": {"name": "gadgets.map.example.com"},
        "spec": {
            "group": "map.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer"}, "color": {"type": "string"}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    assert (await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd))[0] == 201
    rules = [
        {"apiGroups": ["map.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["gadgets"]}
    ]
    pol = _policy("color", _apply("Object{spec: Object.spec{color: 'red'}}"), rules=rules)
    assert (await api.post(MAP, pol))[0] == 201
    assert (await api.post(MAPB, _binding("color", "color")))[0] == 201
    path = "/apis/map.example.com/v1/namespaces/default/gadgets"
    st, body, _ = await api.post(
        path, {"apiVersion": "map.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 2}}
    )
    assert st == 201, body
    assert body["spec"] == {"size": 2, "color": "red"}


async def test_policy_and_binding_validation(api):
    st, body, _ = await api.post(MAP, {"metadata": {"name": "x"}, "spec": {}})
    assert st == 422
    causes = {(c["field"], c["message"]) for c in body["details"]["causes"]}
    assert ("spec.matchConstraints", "Required value") in causes
    assert ("spec.mutations", "Required value: mutations must contain at least one item") in causes
    assert ("spec.reinvocationPolicy", "Required value") in causes
    st, body, _ = await api.post(
        MAP,
        _policy(
            "x",
            {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
            reinvocationPolicy="Sometimes",
        ),
    )
    msgs = {c["field"]: c["message"] for c in body["details"]["causes"]}
    assert msgs["spec.mutations[0].jsonPatch"] == "Required value: must be specified when patchType is JSONPatch"
    assert msgs["spec.mutations[0].applyConfiguration"] == (
        'Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch'
    )
    assert msgs["spec.reinvocationPolicy"] == 'Unsupported value: "Sometimes": supported values: "Never", "IfNeeded"'
    st, body, _ = await api.post(MAP, _policy("x", {"patchType": "Merge"}))
    assert body["details"]["causes"][0]["message"] == (
        'Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"'
    )
    st, body, _ = await api.post(MAP, _policy("x", _apply("'a string'")))
    assert body["details"]["causes"][0]["field"] == "spec.mutations[0].applyConfiguration.expression"
    assert "must evaluate to Object" in body["details"]["causes"][0]["message"]
    st, body, _ = await api.post(
        MAP,
        _policy(
            "x",
            _apply(LABEL),
            rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["pods"]}],
        ),
    )
    assert body["details"]["causes"][0]["message"] == (
        'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"'
    )
    st, body, _ = await api.post(MAPB, {"metadata": {"name": "b"}, "spec": {}})
    assert st == 422 and body["details"]["causes"][0]["field"] == "spec.policyName"


async def test_table_columns(api):
    assert (await api.post(MAP, _policy("t", _apply(LABEL), paramKind={"apiVersion": "v1", "kind": "ConfigMap"})))[
        0
    ] == 201
    assert (await api.post(MAPB, _binding("t", "t", paramRef={"name": "p", "parameterNotFoundAction": "Allow"})))[
        0
    ] == 201
    hdr = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    st, table, _ = await api.get(MAP, headers=hdr)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Mutations", "ParamKind", "Age"]
    assert table["rows"][0]["cells"][:3] == ["t", 1, "v1/ConfigMap"]
    st, table, _ = await api.get(MAPB, headers=hdr)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "PolicyName", "ParamRef", "Age"]
    assert table["rows"][0]["cells"][:3] == ["t", "t", "*/p"]
