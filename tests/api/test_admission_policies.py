"""ValidatingAdmissionPolicy over HTTP: Deny/Warn with upstream's wording and codes,
params, variables, matchConditions, selectors, userInfo, failurePolicy, status."""

from __future__ import annotations

VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
VAPB = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
CM = "/api/v1/namespaces/default/configmaps"


def _policy(name: str, validations: list, **spec) -> dict:
    rules = spec.pop(
        "rules",
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
    )
    return {
        "metadata": {"name": name},
        "spec": {"matchConstraints": {"resourceRules": rules}, "validations": validations, **spec},
    }


def _binding(name: str, policy: str, actions=("Deny",), **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": list(actions), **spec}}


async def test_deny_with_upstream_wording_and_status(api):
    st, pol, _ = await api.post(VAP, _policy("small", [{"expression": "size(object.data) <= 1"}]))
    assert st == 201, pol
    assert pol["spec"]["failurePolicy"] == "Fail"
    assert pol["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert pol["spec"]["matchConstraints"]["resourceRules"][0]["scope"] == "*"
    assert pol["status"] == {"observedGeneration": 1, "typeChecking": {}}
    assert (await api.post(VAPB, _binding("small", "small")))[0] == 201
    st, body, _ = await api.post(CM, {"metadata": {"name": "big"}, "data": {"a": "1", "b": "2"}})
    msg = (
        "ValidatingAdmissionPolicy 'small' with binding 'small' denied request: failed expression: "
        "size(object.data) <= 1"
    )
    assert st == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == f'configmaps "big" is forbidden: {msg}'
    assert body["details"] == {"name": "big", "kind": "configmaps", "causes": [{"message": msg}]}
    assert (await api.post(CM, {"metadata": {"name": "ok"}, "data": {"a": "1"}}))[0] == 201
    st, body, _ = await api.patch(f"{CM}/ok", {"data": {"b": "2"}})
    assert st == 422 and "denied request" in body["message"]
    # other resources are not matched, deletes are not in the rules
    assert (await api.delete(f"{CM}/ok"))[0] == 200


async def test_message_expression_reason_and_warn(api):
    pol = _policy(
        "named",
        [
            {
                "expression": "object.metadata.name.startsWith('ok-')",
                "reason": "Forbidden",
                "messageExpression": "'name ' + object.metadata.name + ' lacks the prefix'",
            }
        ],
    )
    assert (await api.post(VAP, pol))[0] == 201
    assert (await api.post(VAPB, _binding("named", "named")))[0] == 201
    st, body, _ = await api.post(CM, {"metadata": {"name": "bad"}})
    assert (st, body["reason"], body["code"]) == (403, "Forbidden", 403)
    assert body["message"].endswith("denied request: name bad lacks the prefix")
    # Warn instead of Deny: the write succeeds with a Warning header
    st, b, _ = await api.put(
        f"{VAPB}/named", {**_binding("named", "named", ["Warn", "Audit"]), "metadata": {"name": "named"}}
    )
    assert st == 200, b
    st, _, headers = await api.post(CM, {"metadata": {"name": "bad"}})
    assert st == 201
    assert headers.getall("Warning") == [
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'named' with "
        "binding 'named': name bad lacks the prefix\""
    ]


async def test_params_variables_and_user(api):
    assert (await api.post(CM, {"metadata": {"name": "limits"}, "data": {"max": "2"}}))[0] == 201
    pol = _policy(
        "limit",
        [
            {"expression": "variables.count <= int(params.data.max)", "message": "too many keys"},
            {"expression": "request.userInfo.username != 'mallory'", "reason": "Forbidden"},
        ],
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        variables=[{"name": "count", "expression": "has(object.data) ? size(object.data) : 0"}],
        matchConditions=[{"name": "not-params", "expression": "object.metadata.name != 'limits'"}],
    )
    assert (await api.post(VAP, pol))[0] == 201
    b = _binding("limit", "limit", paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})
    st, body, _ = await api.post(VAPB, b)
    assert st == 201, body
    st, body, _ = await api.post(CM, {"metadata": {"name": "x"}, "data": {"a": "1", "b": "2", "c": "3"}})
    assert st == 422 and body["message"].endswith("denied request: too many keys")
    assert (await api.post(CM, {"metadata": {"name": "y"}, "data": {"a": "1"}}))[0] == 201
    st, body, _ = await api.post(CM, {"metadata": {"name": "z"}}, headers={"Impersonate-User": "mallory"})
    assert st == 403 and "failed expression: request.userInfo.username != 'mallory'" in body["message"]
    # matchConditions exclude the params object itself
    assert (await api.patch(f"{CM}/limits", {"data": {"max": "9", "a": "1", "b": "2"}}))[0] == 200
    # params gone: the binding's Deny action refuses the write (failurePolicy Fail)
    assert (await api.delete(f"{CM}/limits"))[0] == 200
    st, body, _ = await api.post(CM, {"metadata": {"name": "w"}})
    assert st == 422
    assert body["message"] == (
        "configmaps \"w\" is forbidden: ValidatingAdmissionPolicy 'limit' with binding "
        "'limit' denied request: failed to configure binding: no params found for policy "
        "binding with `Deny` parameterNotFoundAction"
    )


async def test_selectors_exclusions_and_failure_policy(api):
    st, _, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": "guarded", "labels": {"guard": "on"}}})
    assert st == 201
    pol = _policy(
        "guard",
        [{"expression": "object.data.x == 'y'"}],
        rules=[{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}],
        failurePolicy="Ignore",
    )
    pol["spec"]["matchConstraints"]["namespaceSelector"] = {"matchLabels": {"guard": "on"}}
    pol["spec"]["matchConstraints"]["excludeResourceRules"] = [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["secrets"]}
    ]
    assert (await api.post(VAP, pol))[0] == 201
    b = _binding(
        "guard",
        "guard",
        matchResources={"objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}},
    )
    assert (await api.post(VAPB, b))[0] == 201
    g = "/api/v1/namespaces/guarded/configmaps"
    assert (await api.post(g, {"metadata": {"name": "a"}, "data": {"x": "n"}}))[0] == 422
    assert (await api.post(g, {"metadata": {"name": "b"}, "data": {"x": "y"}}))[0] == 201
    # no data: the expression errors, failurePolicy Ignore admits
    assert (await api.post(g, {"metadata": {"name": "c"}}))[0] == 201
    assert (await api.post(g, {"metadata": {"name": "d", "labels": {"skip": "1"}}, "data": {"x": "n"}}))[0] == 201
    assert (await api.post(CM, {"metadata": {"name": "e"}, "data": {"x": "n"}}))[0] == 201
    assert (await api.post("/api/v1/namespaces/guarded/secrets", {"metadata": {"name": "s"}}))[0] == 201


async def test_policy_validation(api):
    st, body, _ = await api.post(
        VAP,
        {
            "metadata": {"name": "bad"},
            "spec": {
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                    ]
                },
                "validations": [{"expression": "object.x >"}],
            },
        },
    )
    assert st == 422
    assert body["details"]["causes"][0]["field"] == "spec.validations[0].expression"
    assert "compilation failed: ERROR: <input>:1:" in body["details"]["causes"][0]["message"]
    st, body, _ = await api.post(VAPB, {"metadata": {"name": "b"}, "spec": {"policyName": "p"}})
    assert st == 422
    assert body["message"] == (
        'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "b" is invalid: '
        "spec.validationActions: Required value: at least one validation action is required"
    )


async def test_warn_on_delete_authorizer_and_printer_columns(api):
    """A Warn policy's message reaches the DELETE response's Warning header; the CEL
    ``authorizer`` answers (every check allowed until RBAC is enforced); Table columns."""
    st, out, _ = await api.post(
        VAP,
        _policy(
            "del",
            [
                {
                    "expression": "authorizer.group('').resource('configmaps').namespace('default').check('delete').allowed()"
                    " && authorizer.requestResource.check('delete').allowed() && false",
                    "message": "deleting configmaps is discouraged",
                }
            ],
            rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}],
            paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        ),
    )
    assert st == 201, out
    st, out, _ = await api.post(
        VAPB,
        _binding(
            "del", "del", ("Warn",), paramRef={"name": "p", "namespace": "default", "parameterNotFoundAction": "Allow"}
        ),
    )
    assert st == 201, out
    await api.post(CM, {"metadata": {"name": "p"}})
    await api.post(CM, {"metadata": {"name": "gone"}})
    st, _, headers = await api.delete(f"{CM}/gone")
    assert st == 200
    assert headers.getall("Warning") == [
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'del' with binding 'del': deleting configmaps "
        'is discouraged"'
    ]
    table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    st, t, _ = await api.get(VAP + "/del", headers=table)
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Validations", "ParamKind", "Age"]
    assert t["rows"][0]["cells"][:3] == ["del", 1, "v1/ConfigMap"]
    st, t, _ = await api.get(VAPB + "/del", headers=table)
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "PolicyName", "ParamRef", "Age"]
    assert t["rows"][0]["cells"][:3] == ["del", "del", "default/p"]


async def test_policy_status_reports_type_checking_warnings(api):
    policy = {
        "metadata": {"name": "typo"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["deployments"],
                    }
                ]
            },
            "validations": [{"expression": "object.spec.replica <= 5"}],
        },
    }
    code, body, _ = await api.post("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", policy)
    assert code == 201, body
    assert body["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[0].expression",
                "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n"
                " | object.spec.replica <= 5\n | ...........^",
            }
        ]
    }


async def test_expressions_over_the_cost_limits(api):
    """An expression over PerCallLimit fails with cel-go's error; a policy evaluation over
    the runtime budget denies with upstream's message (failurePolicy Fail)."""
    expr = "!object.data.s.contains(object.data.t)"  # a tenth of each string's length, multiplied
    for name, count in (("costly-one", 1), ("costly-many", 13)):
        pol = _policy(
            name,
            [{"expression": expr}] * count,
            rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}],
        )
        pol["spec"]["matchConstraints"]["objectSelector"] = {"matchLabels": {"cost": name}}
        assert (await api.post(VAP, pol))[0] == 201
        assert (await api.post(VAPB, _binding(name, name)))[0] == 201

    async def create(name: str, policy: str, n: int) -> tuple[int, dict]:
        cm = {"metadata": {"name": name, "labels": {"cost": policy}}, "data": {"s": "a" * n, "t": "b" * n}}
        st, body, _ = await api.post(CM, cm)
        return st, body

    assert (await create("c1", "costly-many", 10))[0] == 201
    st, body = await create("c2", "costly-one", 11_000)  # 1,100 x 1,100: over 1,000,000
    assert st == 422
    assert body["message"].endswith(
        f"ValidatingAdmissionPolicy 'costly-one' with binding 'costly-one' denied request: expression '{expr}' "
        "resulted in error: operation cancelled: actual cost limit exceeded"
    )
    st, body = await create("c3", "costly-many", 9_000)  # 810,005 each: the 13th is over 10,000,000
    assert st == 422
    assert body["message"].endswith(
        "ValidatingAdmissionPolicy 'costly-many' with binding 'costly-many' denied request: validation failed due "
        "to running out of cost budget, no further validation rules will be run"
    )
