"""ValidatingAdmissionPolicy evaluation (upstream ``admission/plugin/policy/validating``).

`evaluate` is pure: one policy, one binding, one params object, one request ->
decisions. `ValidatingPolicies` finds the policies, bindings and params in the store
and turns decisions into a Deny error, warnings, or (Audit) a log line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockkube.apiserver.admission.matching import Attributes
from mockkube.apiserver.admission.policy import (  # noqa: F401  (VARIABLES and compile_program are re-exported)
    VARIABLES,
    OutOfBudget,
    ParamsError,
    PolicySource,
    activation,
    compile_program,
    match_conditions_pass,
)
from mockkube.apiserver.admission.policy import run as _run
from mockkube.cel import CELError
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.apiserver.rest import Resources

log = logging.getLogger("mockkube.admission")

_REASON_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}


@dataclass
class Decision:
    """A failed validation (or an evaluation error under failurePolicy Fail)."""

    message: str
    reason: str = ""
    is_error: bool = False


def _message(v: dict, act: dict) -> str:
    """messageExpression, else message, else `failed expression: <expression>`."""
    if v.get("messageExpression"):
        try:
            m = _run(v["messageExpression"], act)
            if isinstance(m, str) and m.strip() and "\n" not in m:
                return m.strip()
        except OutOfBudget:
            raise
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
    try:
        annotations = _validations(spec, act, fail, out)
    except OutOfBudget as exc:  # no further expression runs; the policy's failurePolicy decides
        return ([Decision(exc.message, is_error=True)] if fail else []), {}
    annotations = {f"{policy['metadata']['name']}/{k}": v for k, v in annotations.items()}
    return out, annotations


def _validations(spec: dict, act: dict, fail: bool, out: list[Decision]) -> dict[str, str]:
    """The validations' decisions into ``out``; the audit annotations (OutOfBudget once the
    evaluation's cost budget is spent)."""
    for v in spec.get("validations") or []:
        expr = v.get("expression", "")
        try:
            result = _run(expr, act)
            if type(result) is not bool:
                raise CELError(f"validation expression must evaluate to bool, not {type(result).__name__}")
        except OutOfBudget:
            raise
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
        except OutOfBudget:
            raise
        except CELError as exc:
            if fail:
                out.append(
                    Decision(
                        f"expression '{aa.get('valueExpression')}' resulted in error: {exc.message}", is_error=True
                    )
                )
            continue
        if isinstance(value, str):
            annotations[str(aa.get("key"))] = value
    return annotations


class ValidatingPolicies:
    """The ValidatingAdmissionPolicy admission step over the store's policies."""

    def __init__(self, resources: "Resources") -> None:
        self.source = PolicySource(resources, "validatingadmissionpolicies", "validatingadmissionpolicybindings")

    def active(self) -> bool:
        """Anything configured? (a write skips building attributes when nothing is)"""
        store = self.source.res.store
        return bool(len(store.cache(self.source.policy_rt)) and len(store.cache(self.source.binding_rt)))

    def validate(self, a: Attributes, warnings: list[str]) -> None:
        """Raise the first Deny; add Warn messages to ``warnings``."""
        for policy, binding in self.source.matching(a):
            self._apply_binding(policy, binding, a, warnings)

    def _apply_binding(self, policy: dict, binding: dict, a: Attributes, warnings: list[str]) -> None:
        spec = policy.get("spec") or {}
        bspec = binding.get("spec") or {}
        pname, bname = policy["metadata"]["name"], binding["metadata"]["name"]
        actions = bspec.get("validationActions") or []
        try:
            params_list = self.source.params(spec.get("paramKind"), bspec.get("paramRef"), a)
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

    def _act_on(
        self, pname: str, bname: str, actions: list[str], d: Decision, a: Attributes, warnings: list[str]
    ) -> None:
        if "Warn" in actions:
            w = f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding '{bname}': {d.message}"
            if w not in warnings:
                warnings.append(w)
        if "Audit" in actions:
            log.info(
                "validation.policy.admission.k8s.io/validation_failure: policy=%s binding=%s message=%s",
                pname,
                bname,
                d.message,
            )
        if "Deny" in actions:
            raise deny_error(
                a, f"ValidatingAdmissionPolicy '{pname}' with binding '{bname}' denied request: {d.message}", d.reason
            )


def deny_error(a: Attributes, message: str, reason: str = "") -> errors.APIError:
    """admission.NewForbidden with the validation's reason and code (upstream dispatcher)."""
    name = a.name or ((a.obj or a.old or {}).get("metadata") or {}).get("name") or "Unknown"
    err = errors.forbidden(a.resource, a.group, name, message)
    reason = reason or "Invalid"
    err.reason = reason
    err.code = _REASON_CODES.get(reason, 422)
    err.details = dict(err.details or {}, causes=[{"message": message}])
    return err
