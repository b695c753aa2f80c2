"""ValidatingAdmissionPolicy evaluation (upstream ``admission/plugin/policy/validating``).

`evaluate` is pure: one policy, one binding, one params object, one request ->
decisions. `ValidatingPolicies` finds the policies, bindings and params in the store
and turns decisions into a Deny error, warnings, or (Audit) a log line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockkube.machinery import errors
from mockkube.machinery.admission.matching import EXEMPT, Attributes, resources_match
from mockkube.machinery.cel import CELError, CompiledExpression, compile_with
from mockkube.machinery.cel.authz import Authorizer
from mockkube.machinery.cel.lib import CELRuntimeError

if TYPE_CHECKING:
    from mockkube.machinery.rest import Resources

log = logging.getLogger("mockkube.admission")

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer")
_DYN = tuple((v, "dyn") for v in VARIABLES)


def compile_program(expression: str) -> CompiledExpression:
    """An admission expression: every variable is dynamically typed (CELError if it does not compile)."""
    return compile_with(expression, _DYN)


_REASON_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


@dataclass
class Decision:
    """A failed validation (or an evaluation error under failurePolicy Fail)."""

    message: str
    reason: str = ""
    is_error: bool = False


class _Variables(dict):
    """`variables`: composited variables evaluated lazily, once, in declaration order."""

    def __init__(self, defs: list[dict], activation: dict) -> None:
        super().__init__()
        self._defs = {d.get("name"): d.get("expression", "") for d in defs or []}
        self._act = activation

    def __missing__(self, key: str) -> Any:
        if key not in self._defs:
            raise KeyError(key)
        try:
            value = compile_program(self._defs[key]).evaluate(self._act)
        except CELError as exc:
            raise CELRuntimeError(exc.message) from None
        self[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._defs


def authorizer(a: Attributes) -> Authorizer:
    """The ``authorizer`` variable for this request's user; RBAC is not enforced yet, so
    every check is allowed (as the request itself was)."""
    rr = {"group": a.group, "resource": a.resource, "subresource": a.subresource, "namespace": a.namespace,
          "name": a.name}
    return Authorizer(a.request()["userInfo"], request_resource=rr)


def activation(a: Attributes, params: Any, spec: dict) -> dict:
    """The CEL variables of one evaluation."""
    act: dict[str, Any] = {"object": a.obj, "oldObject": a.old, "request": a.request(), "params": params,
                           "namespaceObject": a.namespace_object, "authorizer": authorizer(a)}
    act["variables"] = _Variables(spec.get("variables") or [], act)
    return act


def _run(expr: str, act: dict) -> Any:
    return compile_program(expr).evaluate(act)


def match_conditions_pass(conds: list[dict] | None, act: dict) -> tuple[bool, str]:
    """(applies, error): every condition must be true; an error is reported, not raised."""
    for c in conds or []:
        expr = c.get("expression", "")
        try:
            result = _run(expr, act)
        except CELError as exc:
            return False, f"failed to evaluate match condition {c.get('name')!r}: expression '{expr}' " \
                          f"resulted in error: {exc.message}"
        if result is not True:
            if result is False:
                return False, ""
            return False, f"failed to evaluate match condition {c.get('name')!r}: expression '{expr}' " \
                          f"resulted in error: must evaluate to bool"
    return True, ""


def _message(v: dict, act: dict) -> str:
    """messageExpression, else message, else `failed expression: <expression>`."""
    if v.get("messageExpression"):
        try:
            m = _run(v["messageExpression"], act)
            if isinstance(m, str) and m.strip() and "\n" not in m:
                return m.strip()
        except CELError as exc:
            log.info("messageExpression %r failed: %s", v["messageExpression"], exc.message)
    if v.get("message"):
        return v["message"]
    return f"failed expression: {v.get('expression', '').strip()}"


def evaluate(policy: dict, a: Attributes, params: Any) -> tuple[list[Decision], dict[str, str]]:
    """One policy against one request with one params object: the failed validations
    and the audit annotations (key -> value)."""
    spec = policy.get("spec") or {}
    fail = spec.get("failurePolicy", "Fail") == "Fail"
    act = activation(a, params, spec)
    applies, err = match_conditions_pass(spec.get("matchConditions"), act)
    if err:
        return ([Decision(err, is_error=True)] if fail else []), {}
    if not applies:
        return [], {}
    out: list[Decision] = []
    for v in spec.get("validations") or []:
        expr = v.get("expression", "")
        try:
            result = _run(expr, act)
            if type(result) is not bool:
                raise CELError(f"validation expression must evaluate to bool, not {type(result).__name__}")
        except CELError as exc:
            if fail:
                out.append(Decision(f"expression '{expr}' resulted in error: {exc.message}", is_error=True))
            continue
        if not result:
            out.append(Decision(_message(v, act), v.get("reason") or ""))
    annotations: dict[str, str] = {}
    for aa in spec.get("auditAnnotations") or []:
        try:
            value = _run(aa.get("valueExpression", ""), act)
        except CELError as exc:
            if fail:
                out.append(Decision(f"expression '{aa.get('valueExpression')}' resulted in error: {exc.message}",
                                    is_error=True))
            continue
        if isinstance(value, str):
            annotations[f"{policy['metadata']['name']}/{aa.get('key')}"] = value
    return out, annotations


class ParamsError(Exception):
    """The binding's params cannot be resolved (a configuration error upstream)."""


class ValidatingPolicies:
    """The ValidatingAdmissionPolicy admission step over the store's policies."""

    def __init__(self, resources: "Resources") -> None:
        self.res = resources
        reg = resources.registry
        self.policy_rt = reg.get("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
        self.binding_rt = reg.get("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings")

    def _objects(self, rt: Any) -> list[dict]:
        if rt is None:
            return []
        return [e.obj for e in list(self.res.store.cache(rt).entries.values())]

    def validate(self, a: Attributes, warnings: list[str]) -> None:
        """Raise the first Deny; add Warn messages to ``warnings``."""
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
                self._apply_binding(policy, binding, a, warnings)

    def _apply_binding(self, policy: dict, binding: dict, a: Attributes, warnings: list[str]) -> None:
        spec = policy.get("spec") or {}
        bspec = binding.get("spec") or {}
        if bspec.get("matchResources") and not resources_match(bspec["matchResources"], a, rules_required=False):
            return
        pname, bname = policy["metadata"]["name"], binding["metadata"]["name"]
        actions = bspec.get("validationActions") or []
        try:
            params_list = self._params(spec.get("paramKind"), bspec.get("paramRef"), a)
        except ParamsError as exc:
            if spec.get("failurePolicy", "Fail") == "Fail":
                self._act_on(pname, bname, ["Deny"], Decision(f"failed to configure binding: {exc}"), a, warnings)
            return
        for params in params_list:
            decisions, annotations = evaluate(policy, a, params)
            for key, value in annotations.items():
                log.info("audit annotation %s=%s", key, value)
            for d in decisions:
                self._act_on(pname, bname, ["Deny"] if d.is_error else actions, d, a, warnings)

    def _act_on(self, pname: str, bname: str, actions: list[str], d: Decision, a: Attributes,
                warnings: list[str]) -> None:
        if "Warn" in actions:
            w = f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding '{bname}': {d.message}"
            if w not in warnings:
                warnings.append(w)
        if "Audit" in actions:
            log.info("validation.policy.admission.k8s.io/validation_failure: policy=%s binding=%s message=%s",
                     pname, bname, d.message)
        if "Deny" in actions:
            raise deny_error(a, f"ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied request: "
                                f"{d.message}", d.reason)

    def _params(self, param_kind: dict | None, ref: dict | None, a: Attributes) -> list[Any]:
        """The params objects of a binding: [None] when the policy takes none."""
        if not param_kind:
            return [None]
        if not ref:
            raise ParamsError("paramKind is specified but paramRef is nil")
        rt = self.res.registry.for_api_version(param_kind.get("apiVersion", ""), param_kind.get("kind", ""))
        if rt is None:
            raise ParamsError(f"failed to find resource referenced by paramKind: "
                              f"'{param_kind.get('apiVersion')}, Kind={param_kind.get('kind')}'")
        ns = ""
        if rt.namespaced:
            ns = ref.get("namespace") or a.namespace
            if not ns:
                raise ParamsError("cannot use namespaced paramRef in policy binding that matches cluster-scoped "
                                  "resources")
        found: list[dict] = []
        if ref.get("name"):
            e = self.res.store.get(rt, ns, ref["name"])
            if e is not None:
                found.append(e.obj)
        else:
            from mockkube.machinery import selectors

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


def deny_error(a: Attributes, message: str, reason: str = "") -> errors.APIError:
    """admission.NewForbidden with the validation's reason and code (upstream dispatcher)."""
    name = a.name or ((a.obj or a.old or {}).get("metadata") or {}).get("name") or "Unknown"
    err = errors.forbidden(a.resource, a.group, name, message)
    reason = reason or "Invalid"
    err.reason = reason
    err.code = _REASON_CODES.get(reason, 422)
    err.details = dict(err.details or {}, causes=[{"message": message}])
    return err
