"""admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its Binding.

Defaults and validation as upstream ``pkg/apis/admissionregistration`` (v1 defaults,
``ValidateValidatingAdmissionPolicy``/``...Binding``); enforcement lives in
``mockkube.apiserver.admission``. The policy's status (observedGeneration, typeChecking)
is written with the spec, where upstream's type-checking controller writes it shortly after.
"""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.admission.policy import compile_program
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.cel import CELError
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import meta
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

GROUP = "admissionregistration.k8s.io"
_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Equivalent", "Exact"]
_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_MUTATING_OPERATIONS = ["*", "CONNECT", "CREATE", "UPDATE"]  # upstream supportedMutatingOperations
_ACTIONS = ["Audit", "Deny", "Warn"]
_SCOPES = ["*", "Cluster", "Namespaced"]
POLICY_VARIABLES = ()  # every admission expression sees the same variables (validating.VARIABLES)


def _default_rules(rules: Any) -> None:
    for r in rules or []:
        if isinstance(r, dict):
            r.setdefault("scope", "*")


def default_match_resources(mc: dict) -> None:
    """SetDefaults_MatchResources: matchPolicy Equivalent, empty selectors match all."""
    mc.setdefault("matchPolicy", "Equivalent")
    mc.setdefault("namespaceSelector", {})
    mc.setdefault("objectSelector", {})
    _default_rules(mc.get("resourceRules"))
    _default_rules(mc.get("excludeResourceRules"))


def _compile_errors(path: fe.Path, expr: Any, names: tuple[str, ...]) -> list[fe.FieldError]:
    if not isinstance(expr, str) or not expr.strip():
        return [fe.required(str(path), "")]
    try:
        compile_program(expr)
    except CELError as exc:
        return [fe.invalid(str(path), expr, exc.message)]
    return []


def _rule_errors(rules: Any, path: fe.Path, required: bool, operations: list[str] = _OPERATIONS) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    if not rules:
        if required:
            errs.append(fe.required(str(path), ""))
        return errs
    for i, r in enumerate(rules):
        p = path.index(i)
        for f in ("apiGroups", "apiVersions", "resources"):
            if not r.get(f):
                errs.append(fe.required(str(p.child(f)), ""))
        if not r.get("operations"):
            errs.append(fe.required(str(p.child("operations")), ""))
        for j, op in enumerate(r.get("operations") or []):
            if op not in operations:
                errs.append(fe.not_supported(str(p.child("operations").index(j)), op, operations))
        if r.get("scope") not in _SCOPES:
            errs.append(fe.not_supported(str(p.child("scope")), r.get("scope"), _SCOPES))
    return errs


def _match_condition_errors(conds: Any, path: fe.Path, names: tuple[str, ...]) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conds or []):
        p = path.index(i)
        name = c.get("name") or ""
        if not name:
            errs.append(fe.required(str(p.child("name")), ""))
        elif name in seen:
            errs.append(fe.duplicate(str(p.child("name")), name))
        seen.add(name)
        errs += _compile_errors(p.child("expression"), c.get("expression"), names)
    return errs


def _constraint_errors(spec: dict, operations: list[str] = _OPERATIONS) -> list[fe.FieldError]:
    """failurePolicy and matchConstraints, as every admission policy kind checks them."""
    p = fe.Path("spec")
    errs: list[fe.FieldError] = []
    if spec.get("failurePolicy") not in _FAILURE_POLICIES:
        errs.append(fe.not_supported("spec.failurePolicy", spec.get("failurePolicy"), _FAILURE_POLICIES))
    mc = spec.get("matchConstraints")
    if not mc:
        return errs + [fe.required("spec.matchConstraints", "")]
    if mc.get("matchPolicy") not in _MATCH_POLICIES:
        errs.append(fe.not_supported("spec.matchConstraints.matchPolicy", mc.get("matchPolicy"), _MATCH_POLICIES))
    errs += _rule_errors(mc.get("resourceRules"), p.child("matchConstraints").child("resourceRules"), True, operations)
    errs += _rule_errors(
        mc.get("excludeResourceRules"), p.child("matchConstraints").child("excludeResourceRules"), False, operations
    )
    return errs


def _binding_errors(spec: dict, operations: list[str] = _OPERATIONS) -> list[fe.FieldError]:
    """paramRef and matchResources, as every admission policy binding kind checks them."""
    errs: list[fe.FieldError] = []
    pr = spec.get("paramRef")
    if pr is not None:
        if pr.get("name") and pr.get("selector") is not None:
            errs.append(fe.forbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
        if not pr.get("name") and pr.get("selector") is None:
            errs.append(fe.required("spec.paramRef", "one of name or selector must be specified"))
        action = pr.get("parameterNotFoundAction")
        if action is None:
            errs.append(fe.required("spec.paramRef.parameterNotFoundAction", ""))
        elif action not in ("Allow", "Deny"):
            errs.append(fe.not_supported("spec.paramRef.parameterNotFoundAction", action, ["Allow", "Deny"]))
    mr = spec.get("matchResources")
    if mr:
        p = fe.Path("spec").child("matchResources")
        errs += _rule_errors(mr.get("resourceRules"), p.child("resourceRules"), False, operations)
        errs += _rule_errors(mr.get("excludeResourceRules"), p.child("excludeResourceRules"), False, operations)
    return errs


class PolicyStrategy(SpecStatusStrategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("failurePolicy", "Fail")
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def prepare_create(self, obj: dict) -> None:
        obj["status"] = _policy_status(obj)

    def prepare_update(self, new: dict, old: dict) -> None:
        if meta.spec_changed(new, old):
            gen = old.get("metadata", {}).get("generation", 0) + 1
            new["status"] = dict(_policy_status(new), observedGeneration=gen)
        else:
            new["status"] = meta.clone(old.get("status") or {})

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        p = fe.Path("spec")
        errs = _constraint_errors(spec)
        pk = spec.get("paramKind")
        if pk is not None:
            if not pk.get("apiVersion"):
                errs.append(fe.required("spec.paramKind.apiVersion", ""))
            if not pk.get("kind"):
                errs.append(fe.required("spec.paramKind.kind", ""))
        if not spec.get("validations") and not spec.get("auditAnnotations"):
            errs.append(
                fe.required("spec.validations", "validations or auditAnnotations must contain at least one item")
            )
        errs += _match_condition_errors(spec.get("matchConditions"), p.child("matchConditions"), POLICY_VARIABLES)
        seen: set[str] = set()
        for i, v in enumerate(spec.get("variables") or []):
            vp = p.child("variables").index(i)
            name = v.get("name") or ""
            if not name:
                errs.append(fe.required(str(vp.child("name")), ""))
            elif name in seen:
                errs.append(fe.duplicate(str(vp.child("name")), name))
            seen.add(name)
            errs += _compile_errors(vp.child("expression"), v.get("expression"), POLICY_VARIABLES)
        for i, v in enumerate(spec.get("validations") or []):
            vp = p.child("validations").index(i)
            errs += _compile_errors(vp.child("expression"), v.get("expression"), POLICY_VARIABLES)
            if v.get("messageExpression"):
                errs += _compile_errors(vp.child("messageExpression"), v["messageExpression"], POLICY_VARIABLES)
            msg = v.get("message")
            if msg is not None and (not msg.strip() or "\n" in msg):
                errs.append(
                    fe.invalid(
                        str(vp.child("message")),
                        msg,
                        "message must be non-empty and not contain line breaks"
                        if "\n" in msg
                        else "message must be non-empty if specified",
                    )
                )
        seen = set()
        for i, a in enumerate(spec.get("auditAnnotations") or []):
            ap = p.child("auditAnnotations").index(i)
            key = a.get("key") or ""
            if not key:
                errs.append(fe.required(str(ap.child("key")), ""))
            elif key in seen:
                errs.append(fe.duplicate(str(ap.child("key")), key))
            seen.add(key)
            errs += _compile_errors(ap.child("valueExpression"), a.get("valueExpression"), POLICY_VARIABLES)
        return errs

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return []


def _policy_status(obj: dict) -> dict:
    """What upstream's type-checking controller reports (written with the spec here): the
    expressions checked against the matched kinds' schemas (admission/typecheck.py)."""
    from mockkube.apiserver.admission.typecheck import expression_warnings
    from mockkube.apiserver.resources import registry

    warnings = expression_warnings(obj, registry())
    return {
        "observedGeneration": obj.get("metadata", {}).get("generation", 1),
        "typeChecking": {"expressionWarnings": warnings} if warnings else {},
    }


class BindingStrategy(SpecStatusStrategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict) and isinstance(spec.get("matchResources"), dict):
            default_match_resources(spec["matchResources"])

    def prepare_create(self, obj: dict) -> None:
        obj.pop("status", None)

    def prepare_update(self, new: dict, old: dict) -> None:
        new.pop("status", None)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        errs: list[fe.FieldError] = []
        if not spec.get("policyName"):
            errs.append(fe.required("spec.policyName", ""))
        actions = spec.get("validationActions") or []
        if not actions:
            errs.append(fe.required("spec.validationActions", "at least one validation action is required"))
        seen: set[str] = set()
        for i, a in enumerate(actions):
            path = f"spec.validationActions[{i}]"
            if a not in _ACTIONS:
                errs.append(fe.not_supported(path, a, _ACTIONS))
            elif a in seen:
                errs.append(fe.duplicate(path, a))
            seen.add(a)
        if "Deny" in seen and "Warn" in seen:
            errs.append(
                fe.invalid(
                    "spec.validationActions",
                    actions,
                    "must not contain both Deny and Warn (repeating the same validation failure "
                    "information in the API response and headers serves no purpose)",
                )
            )
        return errs + _binding_errors(spec)


validating_admission_policies = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        namespaced=False,
        categories=("api-extensions",),
        subresources=(Subresource("status", "ValidatingAdmissionPolicy"),),
        strategy=PolicyStrategy(),
    )
)
validating_admission_policy_bindings = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        namespaced=False,
        categories=("api-extensions",),
        strategy=BindingStrategy(),
    )
)


_PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"]
_REINVOCATION = ["Never", "IfNeeded"]


class MutatingPolicyStrategy(Strategy):
    """MutatingAdmissionPolicy: defaults and validation (upstream ValidateMutatingAdmissionPolicy)."""

    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("failurePolicy", "Fail")  # reinvocationPolicy has no default: it is required
        if isinstance(spec.get("matchConstraints"), dict):
            default_match_resources(spec["matchConstraints"])

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        p = fe.Path("spec")
        errs = _constraint_errors(spec, _MUTATING_OPERATIONS)
        rp = spec.get("reinvocationPolicy")
        if not rp:
            errs.append(fe.required("spec.reinvocationPolicy", ""))
        elif rp not in _REINVOCATION:
            errs.append(fe.not_supported("spec.reinvocationPolicy", rp, _REINVOCATION))
        pk = spec.get("paramKind")
        if pk is not None:
            if not pk.get("apiVersion"):
                errs.append(fe.required("spec.paramKind.apiVersion", ""))
            if not pk.get("kind"):
                errs.append(fe.required("spec.paramKind.kind", ""))
        mutations = spec.get("mutations") or []
        if not mutations:
            errs.append(fe.required("spec.mutations", "mutations must contain at least one item"))
        for i, m in enumerate(mutations):
            errs += _mutation_errors(m if isinstance(m, dict) else {}, p.child("mutations").index(i))
        errs += _match_condition_errors(spec.get("matchConditions"), p.child("matchConditions"), POLICY_VARIABLES)
        for i, v in enumerate(spec.get("variables") or []):
            errs += _compile_errors(
                p.child("variables").index(i).child("expression"), v.get("expression"), POLICY_VARIABLES
            )
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self.validate(new)


def _mutation_errors(m: dict, path: fe.Path) -> list[fe.FieldError]:
    """One mutation: patchType and its matching body (upstream validateMutation)."""
    from mockkube.apiserver.admission.mutating import check_patch_expression

    kind = m.get("patchType")
    if not kind:
        return [fe.required(str(path.child("patchType")), "")]
    if kind not in _PATCH_TYPES:
        return [fe.not_supported(str(path.child("patchType")), kind, _PATCH_TYPES)]
    mine, other = ("jsonPatch", "applyConfiguration") if kind == "JSONPatch" else ("applyConfiguration", "jsonPatch")
    errs: list[fe.FieldError] = []
    body = m.get(mine)
    if body is None:
        errs.append(fe.required(str(path.child(mine)), f"must be specified when patchType is {kind}"))
    else:
        ep = path.child(mine).child("expression")
        expr = (body.get("expression") or "").strip() if isinstance(body.get("expression"), str) else ""
        if not expr:
            errs.append(fe.required(str(ep), ""))
        else:
            msg = check_patch_expression(kind, expr)
            if msg:
                errs.append(fe.invalid(str(ep), expr, msg))
    if m.get(other) is not None:
        errs.append(
            fe.invalid(str(path.child(other)), "{" + other + "}", f"must not be specified when patchType is {kind}")
        )
    return errs


class MutatingBindingStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict) and isinstance(spec.get("matchResources"), dict):
            default_match_resources(spec["matchResources"])

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        errs: list[fe.FieldError] = []
        if not spec.get("policyName"):
            errs.append(fe.required("spec.policyName", ""))
        return errs + _binding_errors(spec, _MUTATING_OPERATIONS)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self.validate(new)


mutating_admission_policies = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "MutatingAdmissionPolicy",
        "mutatingadmissionpolicies",
        namespaced=False,
        categories=("api-extensions",),
        strategy=MutatingPolicyStrategy(),
    )
)
mutating_admission_policy_bindings = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "MutatingAdmissionPolicyBinding",
        "mutatingadmissionpolicybindings",
        namespaced=False,
        categories=("api-extensions",),
        strategy=MutatingBindingStrategy(),
    )
)
