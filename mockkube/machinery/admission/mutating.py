"""MutatingAdmissionPolicy and its Binding (admissionregistration.k8s.io/v1, GA in v1.36):
CEL mutations applied before validation, as upstream's ``policy/mutating`` plugin does.

A mutation is an ``ApplyConfiguration`` (``Object{spec: Object.spec{...}}``, merged into the
object: maps merge key by key, lists and scalars are replaced) or a ``JSONPatch`` (a list
of ``JSONPatch{op, path, value}``). Matching, params, variables and match conditions are the
validating policies' (``validating.py``). A policy with ``reinvocationPolicy: IfNeeded`` runs
once more when a later policy changed the object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockkube.machinery import errors
from mockkube.machinery.admission.matching import Attributes, resources_match
from mockkube.machinery.admission.validating import (
    VARIABLES, ParamsError, ValidatingPolicies, activation, deny_error, match_conditions_pass)
from mockkube.machinery.cel import CELError
from mockkube.machinery.cel.engine import compile_with
from mockkube.machinery.meta import clone

if TYPE_CHECKING:
    from mockkube.machinery.rest import Resources

GROUP = "admissionregistration.k8s.io"


class _MessageTypes:
    """The message types a mutation may build: ``Object``, ``Object.<field>...``, ``JSONPatch``."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in ("Object", "JSONPatch") or name.startswith("Object."))


_SCOPE = tuple((v, "dyn") for v in VARIABLES) + (("__messages__", _MessageTypes()),)
_compiled: dict[str, Any] = {}


def compile_mutation(expression: str):
    """A mutation's expression (CELError if it does not compile)."""
    c = _compiled.get(expression)
    if c is None:
        c = _compiled[expression] = compile_with(expression, _SCOPE)
    return c


def merge_apply(obj: Any, patch: Any) -> Any:
    """An apply configuration over ``obj``: maps merge, anything else is replaced; a null
    value removes the field."""
    if not isinstance(obj, dict) or not isinstance(patch, dict):
        return clone(patch)
    out = dict(obj)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_apply(obj.get(k), v)
    return out


def apply_mutation(obj: dict, mutation: dict, act: dict) -> dict:
    """``obj`` after one mutation (CELError / APIError when it cannot be applied)."""
    ptype = mutation.get("patchType")
    if ptype == "ApplyConfiguration":
        value = compile_mutation((mutation.get("applyConfiguration") or {}).get("expression", "")).evaluate(act)
        if not isinstance(value, dict):
            raise CELError("apply configuration must evaluate to an Object")
        return merge_apply(obj, value)
    if ptype == "JSONPatch":
        ops = compile_mutation((mutation.get("jsonPatch") or {}).get("expression", "")).evaluate(act)
        if not isinstance(ops, list):
            raise CELError("JSONPatch expression must evaluate to a list of JSONPatch")
        from mockkube.machinery.patch import apply_json_patch

        return apply_json_patch(clone(obj), [dict(op) for op in ops])
    raise CELError(f"unsupported patch type {ptype!r}")


class MutatingPolicies(ValidatingPolicies):
    """The mutating policies of one server (params lookup shared with the validating ones)."""

    def __init__(self, resources: "Resources") -> None:
        super().__init__(resources)
        reg = resources.registry
        self._prt = reg.get(GROUP, "v1", "mutatingadmissionpolicies")
        self._brt = reg.get(GROUP, "v1", "mutatingadmissionpolicybindings")

    def active(self) -> bool:
        return bool(len(self.res.store.cache(self._prt)) and len(self.res.store.cache(self._brt)))

    def mutate(self, a: Attributes, warnings: list[str]) -> dict | None:
        if a.obj is None or a.operation not in ("CREATE", "UPDATE", "CONNECT") or (
                a.group == GROUP and "admissionpolic" in a.resource):
            return None
        pairs = self._pairs(a)
        if not pairs:
            return None
        start = a.obj
        changed_by: list[int] = []
        for i, (policy, binding) in enumerate(pairs):
            if self._apply(policy, binding, a):
                changed_by.append(i)
        if changed_by:  # IfNeeded policies run again when a later one changed the object
            last = changed_by[-1]
            for i, (policy, binding) in enumerate(pairs):
                if i < last and (policy.get("spec") or {}).get("reinvocationPolicy") == "IfNeeded":
                    self._apply(policy, binding, a)
        return a.obj if a.obj is not start else None

    def _pairs(self, a: Attributes) -> list[tuple[dict, dict]]:
        policies = {e.obj["metadata"]["name"]: e.obj for e in list(self.res.store.cache(self._prt).entries.values())}
        out = []
        for b in sorted((e.obj for e in list(self.res.store.cache(self._brt).entries.values())),
                        key=lambda o: o["metadata"]["name"]):
            policy = policies.get((b.get("spec") or {}).get("policyName", ""))
            if policy is None:
                continue
            if not resources_match((policy.get("spec") or {}).get("matchConstraints"), a, rules_required=True):
                continue
            mr = (b.get("spec") or {}).get("matchResources")
            if mr and not resources_match(mr, a, rules_required=False):
                continue
            out.append((policy, b))
        return sorted(out, key=lambda pb: (pb[0]["metadata"]["name"], pb[1]["metadata"]["name"]))

    def _apply(self, policy: dict, binding: dict, a: Attributes) -> bool:
        spec = policy.get("spec") or {}
        fail = spec.get("failurePolicy", "Fail") == "Fail"
        pname, bname = policy["metadata"]["name"], binding["metadata"]["name"]
        try:
            params_list = self._params(spec.get("paramKind"), (binding.get("spec") or {}).get("paramRef"), a)
        except ParamsError as exc:
            if fail:
                raise self._denied(a, pname, bname, f"failed to configure binding: {exc}") from None
            return False
        changed = False
        for params in params_list:
            act = activation(a, params, spec)
            applies, err = match_conditions_pass(spec.get("matchConditions"), act)
            if err:
                if fail:
                    raise self._denied(a, pname, bname, err)
                continue
            if not applies:
                continue
            obj = a.obj
            try:
                for mutation in spec.get("mutations") or []:
                    act["object"] = obj
                    obj = apply_mutation(obj, mutation, act)
            except (CELError, errors.APIError) as exc:
                if fail:
                    raise self._denied(a, pname, bname, getattr(exc, "message", str(exc))) from None
                continue
            if obj != a.obj:
                a.obj = obj
                changed = True
        return changed

    @staticmethod
    def _denied(a: Attributes, pname: str, bname: str, message: str) -> errors.APIError:
        return deny_error(a, f"MutatingAdmissionPolicy '{pname}' with binding '{bname}' denied request: {message}")
