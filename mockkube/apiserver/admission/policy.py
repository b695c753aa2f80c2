"""What validating and mutating admission policies share (upstream
``admission/plugin/policy/generic`` and ``admission/plugin/cel``): the CEL variables of one
evaluation, matchConditions, and finding a policy's bindings and params in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from mockkube.apiserver.admission.matching import EXEMPT, Attributes, resources_match
from mockkube.cel import CELError, CompiledExpression, compile_with
from mockkube.cel.authz import Authorizer
from mockkube.cel.engine import COST_KEY
from mockkube.cel.lib import CELRuntimeError
from mockkube.machinery import selectors

if TYPE_CHECKING:
    from mockkube.apiserver.rest import Resources

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer")
DYN = tuple((v, "dyn") for v in VARIABLES)
PER_CALL_LIMIT = 1_000_000  # celconfig.PerCallLimit: one expression's evaluation
RUNTIME_COST_BUDGET = 10_000_000  # celconfig.RuntimeCELCostBudget: one policy evaluation
MATCH_CONDITIONS_BUDGET = 2_500_000  # celconfig.RuntimeCELCostBudgetMatchConditions
BUDGET_KEY = "@budget"
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


class OutOfBudget(CELError):
    """The policy evaluation's runtime cost budget is spent: no further expression runs."""


def compile_program(expression: str, extra: tuple[tuple[str, Any], ...] = ()) -> CompiledExpression:
    """An admission expression: every variable is dynamically typed (CELError if it does not
    compile); ``extra`` adds declarations (the mutating policies' ``Object``/``JSONPatch`` types)."""
    return compile_with(expression, DYN + extra, tracked=True)


class _Variables(dict):
    """`variables`: composited variables evaluated lazily, once, in declaration order."""

    def __init__(self, defs: list[dict], activation: dict, extra: tuple = ()) -> None:
        super().__init__()
        self._defs = {d.get("name"): d.get("expression", "") for d in defs or []}
        self._act = activation
        self._extra = extra

    def __missing__(self, key: str) -> Any:
        if key not in self._defs:
            raise KeyError(key)
        try:
            value = run(self._defs[key], self._act, self._extra)
        except CELError as exc:
            raise CELRuntimeError(exc.message) from None
        self[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._defs


def authorizer(a: Attributes) -> Authorizer:
    """The ``authorizer`` variable for this request's user: checks go to the server's
    authorizer (``--authorization-mode``; AlwaysAllow allows them all)."""
    rr = {
        "group": a.group,
        "resource": a.resource,
        "subresource": a.subresource,
        "namespace": a.namespace,
        "name": a.name,
    }
    if a.authorize is not None:
        return Authorizer(a.request()["userInfo"], a.authorize, request_resource=rr)
    return Authorizer(a.request()["userInfo"], request_resource=rr)


def activation(a: Attributes, params: Any, spec: dict, extra: tuple = ()) -> dict:
    """The CEL variables of one evaluation."""
    act: dict[str, Any] = {
        "object": a.obj,
        "oldObject": a.old,
        "request": a.request(),
        "params": params,
        "namespaceObject": a.namespace_object,
        "authorizer": authorizer(a),
    }
    act["variables"] = _Variables(spec.get("variables") or [], act, extra)
    act[BUDGET_KEY] = [RUNTIME_COST_BUDGET]
    return act


def run(expr: str, act: dict, extra: tuple = ()) -> Any:
    """Evaluate one expression (CELError on compile or runtime errors), charged as cel-go
    charges it: over PerCallLimit it fails with "operation cancelled: actual cost limit
    exceeded"; its cost then comes off the evaluation's budget, and OutOfBudget is raised
    once that is spent (upstream checks the budget before the expression's own error)."""
    prog = compile_program(expr, extra)
    outer = act.get(COST_KEY)
    call = [PER_CALL_LIMIT]
    act[COST_KEY] = call
    try:
        return prog.evaluate(act)
    finally:
        act[COST_KEY] = outer
        if outer is None:
            del act[COST_KEY]
        budget = act.get(BUDGET_KEY)
        if budget is not None:
            budget[0] -= PER_CALL_LIMIT - call[0]
            if budget[0] < 0:
                raise OutOfBudget(OUT_OF_BUDGET)


def match_conditions_pass(conds: list[dict] | None, act: dict) -> tuple[bool, str]:
    """(applies, error): every condition must be true; an error is reported, not raised.
    Match conditions have a budget of their own (RuntimeCELCostBudgetMatchConditions)."""
    saved = act.get(BUDGET_KEY)
    act[BUDGET_KEY] = [MATCH_CONDITIONS_BUDGET]
    try:
        return _match_conditions(conds, act)
    finally:
        act[BUDGET_KEY] = saved


def _match_conditions(conds: list[dict] | None, act: dict) -> tuple[bool, str]:
    for c in conds or []:
        expr = c.get("expression", "")
        try:
            result = run(expr, act)
        except CELError as exc:
            return (
                False,
                f"failed to evaluate match condition {c.get('name')!r}: expression '{expr}' "
                f"resulted in error: {exc.message}",
            )
        if result is not True:
            if result is False:
                return False, ""
            return (
                False,
                f"failed to evaluate match condition {c.get('name')!r}: expression '{expr}' "
                f"resulted in error: must evaluate to bool",
            )
    return True, ""


class ParamsError(Exception):
    """The binding's params cannot be resolved (a configuration error upstream)."""


class PolicySource:
    """The policies and bindings of one plugin kind in the store, matched to a request."""

    def __init__(self, resources: "Resources", policy_plural: str, binding_plural: str) -> None:
        self.res = resources
        reg = resources.registry
        self.policy_rt = reg.get("admissionregistration.k8s.io", "v1", policy_plural)
        self.binding_rt = reg.get("admissionregistration.k8s.io", "v1", binding_plural)

    def _objects(self, rt: Any) -> list[dict]:
        if rt is None:
            return []
        return [e.obj for e in list(self.res.store.cache(rt).entries.values())]

    def matching(self, a: Attributes) -> Iterator[tuple[dict, dict]]:
        """(policy, binding) pairs whose policy matchConstraints and binding matchResources
        select this request, policies and bindings in name order."""
        if (a.group, a.resource) in EXEMPT:
            return
        policies = self._objects(self.policy_rt)
        if not policies:
            return
        bindings: dict[str, list[dict]] = {}
        for b in self._objects(self.binding_rt):
            bindings.setdefault((b.get("spec") or {}).get("policyName", ""), []).append(b)
        for policy in sorted(policies, key=lambda p: p["metadata"]["name"]):
            pbs = bindings.get(policy["metadata"]["name"])
            if not pbs:
                continue
            spec = policy.get("spec") or {}
            if not resources_match(spec.get("matchConstraints"), a, rules_required=True):
                continue
            for binding in sorted(pbs, key=lambda b: b["metadata"]["name"]):
                bspec = binding.get("spec") or {}
                if bspec.get("matchResources") and not resources_match(
                    bspec["matchResources"], a, rules_required=False
                ):
                    continue
                yield policy, binding

    def params(self, param_kind: dict | None, ref: dict | None, a: Attributes) -> list[Any]:
        """The params objects of a binding: [None] when the policy takes none."""
        if not param_kind:
            return [None]
        if not ref:
            raise ParamsError("paramKind is specified but paramRef is nil")
        rt = self.res.registry.for_api_version(param_kind.get("apiVersion", ""), param_kind.get("kind", ""))
        if rt is None:
            raise ParamsError(
                f"failed to find resource referenced by paramKind: "
                f"'{param_kind.get('apiVersion')}, Kind={param_kind.get('kind')}'"
            )
        ns = ""
        if rt.namespaced:
            ns = ref.get("namespace") or a.namespace
            if not ns:
                raise ParamsError(
                    "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
                )
        found: list[dict] = []
        if ref.get("name"):
            e = self.res.store.get(rt, ns, ref["name"])
            if e is not None:
                found.append(e.obj)
        else:
            sel = selectors.label_selector_from_object(ref.get("selector") or {})
            for e in list(self.res.store.cache(rt).entries.values()):
                m = e.obj.get("metadata") or {}
                if (not rt.namespaced or m.get("namespace") == ns) and sel.matches(m.get("labels") or {}):
                    found.append(e.obj)
        if not found:
            if ref.get("parameterNotFoundAction") == "Deny":
                raise ParamsError("no params found for policy binding with `Deny` parameterNotFoundAction")
            return []
        return found
