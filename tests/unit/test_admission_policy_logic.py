"""Pure admission logic: rule matching, selectors, CEL optionals, and policy evaluation
(messages, failurePolicy, variables) without a server."""

from __future__ import annotations

import pytest

from mockkube.apiserver.admission.matching import Attributes, resources_match, rule_matches
from mockkube.apiserver.admission.validating import compile_program, evaluate
from mockkube.cel import CELError


def _attrs(op="CREATE", resource="resourceslices", sub="", obj=None, old=None, user=None, ns="", **kw) -> Attributes:
    return Attributes(
        op,
        kw.pop("group", "resource.k8s.io"),
        "v1",
        "ResourceSlice",
        resource,
        sub,
        ns,
        kw.pop("name", "s"),
        obj,
        old,
        bool(ns),
        user or {"username": "admin"},
        namespace_object=kw.pop("namespace_object", None),
    )


RULE = {
    "apiGroups": ["resource.k8s.io"],
    "apiVersions": ["v1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["resourceslices"],
    "scope": "*",
}


@pytest.mark.parametrize(
    "rule,attrs,want",
    [
        (RULE, _attrs(), True),
        (RULE, _attrs(op="DELETE"), False),
        (RULE, _attrs(sub="status", op="UPDATE"), False),
        ({**RULE, "resources": ["resourceslices/*"]}, _attrs(sub="status", op="UPDATE"), True),
        ({**RULE, "resources": ["*/status"]}, _attrs(sub="status", op="UPDATE"), True),
        ({**RULE, "resources": ["*"]}, _attrs(sub="status", op="UPDATE"), False),
        ({**RULE, "resources": ["*/*"]}, _attrs(sub="status", op="UPDATE"), True),
        ({**RULE, "apiGroups": ["*"], "operations": ["*"]}, _attrs(op="DELETE"), True),
        ({**RULE, "scope": "Namespaced"}, _attrs(), False),
        ({**RULE, "resourceNames": ["other"]}, _attrs(), False),
    ],
)
def test_rule_matches(rule, attrs, want):
    assert rule_matches(rule, attrs) is want


def test_selectors_and_exclusions():
    mr = {
        "resourceRules": [{**RULE, "resources": ["configmaps"], "apiGroups": [""]}],
        "namespaceSelector": {"matchLabels": {"env": "prod"}},
        "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
    }

    def cm(labels=None, ns_labels=None):
        return _attrs(
            group="",
            resource="configmaps",
            ns="n",
            obj={"metadata": {"labels": labels or {}}},
            namespace_object={"metadata": {"labels": ns_labels or {}}},
        )

    assert resources_match(mr, cm(ns_labels={"env": "prod"}), True)
    assert not resources_match(mr, cm(ns_labels={"env": "dev"}), True)
    assert not resources_match(mr, cm({"skip": "y"}, {"env": "prod"}), True)
    excl = {**mr, "excludeResourceRules": [{**RULE, "resources": ["configmaps"], "apiGroups": [""]}]}
    assert not resources_match(excl, cm(ns_labels={"env": "prod"}), True)
    # a binding without resourceRules matches whatever its policy matched
    assert resources_match({}, cm(), False)


def test_cel_optionals():
    assert (
        compile_program("object.spec.?nodeName.orValue('none')").evaluate({"object": {"spec": {}}, "request": None})
        == "none"
    )
    assert (
        compile_program("request.extra[?'k'][0].orValue('')").evaluate(
            {"object": None, "request": {"extra": {"k": ["v"]}}}
        )
        == "v"
    )
    assert (
        compile_program("request.extra[?'j'][0].orValue('')").evaluate(
            {"object": None, "request": {"extra": {"k": ["v"]}}}
        )
        == ""
    )
    assert compile_program("optional.of(2).value() + optional.none().orValue(1)").evaluate({}) == 3
    with pytest.raises(CELError, match="optional.none\\(\\) dereference"):
        compile_program("object.?x.value()").evaluate({"object": {}})


# dra-example-driver's chart (deployments/helm/.../validatingadmissionpolicy.yaml)
DRIVER_POLICY = {
    "metadata": {"name": "resourceslices-policy-dra-example-driver"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConditions": [
            {
                "name": "isRestrictedUser",
                "expression": 'request.userInfo.username == "system:serviceaccount:dra:dra-example-driver-service-account"',
            }
        ],
        "variables": [
            {
                "name": "userNodeName",
                "expression": "request.userInfo.extra[?'authentication.kubernetes.io/node-name'][0].orValue('')",
            },
            {
                "name": "objectNodeName",
                "expression": '(request.operation == "DELETE" ? oldObject : object).spec.?nodeName.orValue("")',
            },
        ],
        "validations": [
            {
                "expression": 'variables.userNodeName != ""',
                "message": "no node association found for user, this user must run in a pod on a node and "
                "ServiceAccountTokenPodNodeInfo must be enabled",
            },
            {
                "expression": "variables.userNodeName == variables.objectNodeName",
                "messageExpression": '"this user running on node \'"+variables.userNodeName+"\' may not modify " + '
                '(variables.objectNodeName == "" ?"cluster resourceslices" : '
                '"resourceslices on node \'"+variables.objectNodeName+"\'")',
            },
        ],
    },
}
DRIVER = "system:serviceaccount:dra:dra-example-driver-service-account"


def _driver(node=""):
    extra = {"authentication.kubernetes.io/node-name": [node]} if node else {}
    return {"username": DRIVER, "extra": extra}


def test_driver_chart_policy():
    slice_n1 = {"spec": {"nodeName": "n1", "driver": "gpu.example.com"}}
    msgs = lambda a: [d.message for d in evaluate(DRIVER_POLICY, a, None)[0]]  # noqa: E731
    assert msgs(_attrs(obj=slice_n1, user={"username": "admin"})) == []  # not the driver: no match
    assert msgs(_attrs(obj=slice_n1, user=_driver("n1"))) == []
    assert msgs(_attrs(obj=slice_n1, user=_driver("n2"))) == [
        "this user running on node 'n2' may not modify resourceslices on node 'n1'"
    ]
    assert msgs(_attrs(op="DELETE", old={"spec": {"allNodes": True}}, user=_driver("n2"))) == [
        "this user running on node 'n2' may not modify cluster resourceslices"
    ]
    assert msgs(_attrs(obj=slice_n1, user=_driver())) == [
        DRIVER_POLICY["spec"]["validations"][0]["message"],
        "this user running on node '' may not modify resourceslices on node 'n1'",
    ]


def test_failure_policy_and_default_message():
    pol = {
        "metadata": {"name": "p"},
        "spec": {
            "failurePolicy": "Fail",
            "validations": [{"expression": "object.missing == 1"}, {"expression": "false"}],
        },
    }
    a = _attrs(obj={"spec": {}})
    ds = evaluate(pol, a, None)[0]
    assert [(d.message, d.is_error) for d in ds] == [
        ("expression 'object.missing == 1' resulted in error: no such key: missing", True),
        ("failed expression: false", False),
    ]
    pol["spec"]["failurePolicy"] = "Ignore"
    assert [d.message for d in evaluate(pol, a, None)[0]] == ["failed expression: false"]
    pol["spec"]["auditAnnotations"] = [{"key": "k", "valueExpression": "'v-' + request.name"}]
    assert evaluate(pol, a, None)[1] == {"p/k": "v-s"}


@pytest.mark.parametrize(
    "expr",
    [
        "authorizer.group('resource.k8s.io').resource('resourceslices').namespace('').name('x').check('create')"
        ".allowed()",
        "authorizer.requestResource.subresource('status').check('update').allowed()",
        "!authorizer.path('/healthz').check('get').errored() && authorizer.path('/x').check('get').error() == ''",
        "authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('get').reason() == ''",
    ],
)
def test_authorizer_library_allows_until_rbac_is_enforced(expr):
    from mockkube.apiserver.admission.validating import activation

    assert compile_program(expr).evaluate(activation(_attrs(), None, {})) is True


def _costly_policy(n_validations: int, failure_policy: str = "Fail") -> dict:
    return {
        "metadata": {"name": "costly"},
        "spec": {"failurePolicy": failure_policy, "validations": [{"expression": CONTAINS}] * n_validations},
    }


# cel-go charges contains() a tenth of each string's length, multiplied
CONTAINS = "!object.s.contains(object.t)"


def _strings(n: int) -> Attributes:
    return _attrs(obj={"s": "a" * n, "t": "b" * n})


def test_an_expression_over_the_per_call_cost_limit_fails():
    """celconfig.PerCallLimit (1,000,000) per expression: 1,100 x 1,100 is over it."""
    decisions, _ = evaluate(_costly_policy(1), _strings(11_000), None)
    assert [d.message for d in decisions] == [
        f"expression '{CONTAINS}' resulted in error: operation cancelled: actual cost limit exceeded"
    ]
    assert evaluate(_costly_policy(1), _strings(9_000), None) == ([], {})


def test_a_policy_evaluation_over_the_runtime_cost_budget_stops():
    """RuntimeCELCostBudget (10,000,000) per policy evaluation: 810,005 per expression here,
    so the 13th runs out; under failurePolicy Ignore the request is admitted."""
    assert evaluate(_costly_policy(12), _strings(9_000), None) == ([], {})
    decisions, _ = evaluate(_costly_policy(13), _strings(9_000), None)
    assert [(d.message, d.is_error) for d in decisions] == [
        ("validation failed due to running out of cost budget, no further validation rules will be run", True)
    ]
    assert evaluate(_costly_policy(13, "Ignore"), _strings(9_000), None) == ([], {})
