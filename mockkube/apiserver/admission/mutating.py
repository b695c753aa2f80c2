"""MutatingAdmissionPolicy evaluation (upstream ``admission/plugin/policy/mutating``).

`mutate` is pure: one policy, one request, one params object -> the mutated object (or a
`MutationError`). `MutatingPolicies.admit` finds the policies, bindings and params in the
store, runs every invocation in order (policies, then bindings, by name), reinvokes the
``IfNeeded`` ones once when a later one changed the object, and applies failurePolicy.

A mutation is either an ``ApplyConfiguration`` (a CEL ``Object{...}`` merged into the object
with structured-merge-diff semantics, atomic lists and maps refused) or a ``JSONPatch`` (a
CEL list of ``JSONPatch{op, path, value}``); a failed ``test`` operation leaves the object
unchanged, as upstream.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockkube.apiserver.admission.matching import Attributes
from mockkube.apiserver.admission.policy import (
    ParamsError,
    PolicySource,
    activation,
    compile_program,
    match_conditions_pass,
    run,
)
from mockkube.cel import CELError
from mockkube.cel.engine import CelObject, type_name
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.apiserver.rest import Resources
    from mockkube.machinery.schema import Node

PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"]


class _MessageTypes:
    """The message types a mutation may build: ``Object``, ``Object.<field>...``, ``JSONPatch``
    (upstream HasPatchTypes)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in ("Object", "JSONPatch") or name.startswith("Object."))


TYPES: tuple[tuple[str, Any], ...] = (("__messages__", _MessageTypes()),)
_JSONPATCH_FIELDS = {"op", "path", "from", "value"}


def check_patch_expression(patch_type: str, expression: str) -> str:
    """The compile error of a mutation's expression ('' when it compiles to the right type)."""
    try:
        compiled = compile_program(expression, TYPES)
    except CELError as exc:
        return exc.message
    out = compiled.output_type
    if patch_type == "ApplyConfiguration" and out not in ("Object", "dyn"):
        return f"must evaluate to Object but got {type_name(out)}"
    if patch_type == "JSONPatch" and out not in ("dyn", ("list", "JSONPatch"), ("list", "dyn")):
        return f"must evaluate to list(JSONPatch) but got {type_name(out)}"
    return ""


class MutationError(Exception):
    """One mutation failed; ``str()`` is upstream's message (after ``denied request: ``)."""

    def __init__(self, message: str, reason: str = "Invalid") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


def _plain(v: Any, path: str, where: str) -> Any:
    """A CEL value as JSON data; nested ``Object.a.b{}`` must name the field it sits in
    (upstream CheckTypeNamesMatchFieldPathNames)."""
    if isinstance(v, CelObject):
        if v.type_name != where:
            raise MutationError(f"type mismatch: type name {v.type_name} does not match field path {where}")
        return {k: _plain(x, f"{path}.{k}", f"{where}.{k}") for k, x in v.items()}
    if isinstance(v, dict):
        return {k: _plain(x, f"{path}.{k}", f"{where}.{k}") for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x, path, where) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)  # quantities, durations and other CEL values serialize as their string form


def _atomics(value: Any, node: "Node | None", path: str) -> list[str]:
    """Paths of atomic lists and maps an apply configuration sets (upstream findAtomics)."""
    from mockkube.machinery.fieldset import field_schema, item_schema, list_shape, map_is_atomic

    if node is None or getattr(node, "raw", None) is None:
        return []
    out: list[str] = []
    if isinstance(value, dict) and node.type in ("object", ""):
        if map_is_atomic(node):
            out.append(path)
        for k, v in value.items():
            sub = field_schema(node, k)
            if sub is not None and getattr(sub, "raw", None) is not None and (k in node.properties):
                out += _atomics(v, sub, f"{path}.{k}")
    elif isinstance(value, list) and node.type == "array":
        assoc, _ = list_shape(node)
        if not assoc:
            out.append(path)
        for i, v in enumerate(value):
            out += _atomics(v, item_schema(node), f"{path}[{i}]")
    return out


def apply_configuration(obj: dict, patch: Any, schema: "Node | None") -> dict:
    """Merge an ``Object{}`` into ``obj`` (structured-merge-diff ``Merge``)."""
    from mockkube.machinery import apply

    if not isinstance(patch, CelObject) or patch.type_name != "Object":
        raise MutationError(
            f"unsupported return type from ApplyConfiguration expression: "
            f"{getattr(patch, 'type_name', type(patch).__name__)}"
        )
    plain = _plain(patch, "", "Object")
    plain.setdefault("apiVersion", obj.get("apiVersion"))
    plain.setdefault("kind", obj.get("kind"))
    if schema is not None:
        from mockkube.machinery import validation

        res = validation.check_structure(copy.deepcopy(plain), schema)
        if res.unknown_fields:
            field = res.unknown_fields[0].removeprefix('unknown field "').rstrip('"')
            raise MutationError(
                f"error applying patch: failed to convert patch object to typed object: "
                f".{field}: field not declared in schema"
            )
        if res.type_errors:
            raise MutationError(
                f"error applying patch: failed to convert patch object to typed object: {res.type_errors[0]}"
            )
    atomics = _atomics(plain, schema, "")
    if atomics:
        raise MutationError(
            f"error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
            f"maps or structs: {', '.join(atomics)}"
        )
    merged = apply.merge(obj, plain, schema)
    return merged if isinstance(merged, dict) else obj


def json_patch(obj: dict, ops: Any) -> dict:
    """Apply a list of ``JSONPatch{}`` to ``obj``; a failed ``test`` leaves it unchanged."""
    from mockkube.machinery.patch import JSONPatchError, JSONPatchTestFailed, apply_ops

    if not isinstance(ops, list):
        raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array")
    decoded = []
    for op in ops:
        if not isinstance(op, CelObject) or op.type_name != "JSONPatch" or set(op) - _JSONPATCH_FIELDS:
            raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch")
        d = {"op": op.get("op", ""), "path": op.get("path", "")}
        if op.get("from"):
            d["from"] = op["from"]
        if "value" in op:
            d["value"] = (
                _plain(op["value"], "", op["value"].type_name)
                if isinstance(op["value"], CelObject)
                else _plain(op["value"], "", "")
            )
        decoded.append(d)
    try:
        out = apply_ops(obj, decoded)
    except JSONPatchTestFailed:
        return obj
    except JSONPatchError as exc:
        raise MutationError(f"JSONPath: {exc}") from None
    if not isinstance(out, dict):
        raise MutationError("JSONPath: the patched document is not an object")
    return out


def mutate(policy: dict, a: Attributes, params: Any, schema: "Node | None") -> dict | None:
    """Run one invocation's mutations in order on ``a.obj``: the new object, or None when the
    policy's matchConditions do not select the request. Raises MutationError."""
    spec = policy.get("spec") or {}
    obj = a.obj
    act = activation(a, params, spec, TYPES)
    applies, err = match_conditions_pass(spec.get("matchConditions"), act)
    if err:
        raise MutationError(err)
    if not applies:
        return None
    for m in spec.get("mutations") or []:
        if obj is None:
            break
        kind = m.get("patchType")
        body = m.get("applyConfiguration" if kind == "ApplyConfiguration" else "jsonPatch") or {}
        expr = (body.get("expression") or "").strip()
        try:
            value = run(expr, act, TYPES)
        except CELError as exc:
            raise MutationError(f"expression '{expr}' resulted in error: {exc.message}") from None
        obj = apply_configuration(obj, value, schema) if kind == "ApplyConfiguration" else json_patch(obj, value)
        a = _with_object(a, obj)
        act = activation(a, params, spec, TYPES)
    return obj


def _with_object(a: Attributes, obj: dict) -> Attributes:
    b = copy.copy(a)
    b.obj = obj
    return b


@dataclass
class _Invocation:
    policy: dict
    binding: dict
    params: Any


def denied(a: Attributes, policy: dict, binding: dict | None, message: str, reason: str = "") -> errors.APIError:
    """upstream policy dispatcher: admission.NewForbidden (403) whose message is the policy
    error, reason Invalid for evaluation errors, Forbidden for configuration errors."""
    name = a.name or ((a.obj or a.old or {}).get("metadata") or {}).get("name") or "Unknown"
    err = errors.forbidden(a.resource, a.group, name, "admission request denied by policy")
    pname = policy["metadata"]["name"]
    msg = (
        f"policy '{pname}' with binding '{binding['metadata']['name']}' denied request: {message}"
        if binding
        else f"policy {pname!r} denied request: {message}"
    )
    err.message = msg
    if reason:
        err.reason = reason
    err.details = dict(err.details or {}, causes=[{"message": msg}])
    return err


class MutatingPolicies:
    """The MutatingAdmissionPolicy admission step over the store's policies (a step of
    ``Resources.mutating``: ``active()`` and ``mutate(attributes, warnings)``)."""

    def __init__(self, resources: "Resources") -> None:
        self.source = PolicySource(resources, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
        self.res = resources

    def active(self) -> bool:
        """Anything configured? (a write skips building attributes when nothing is)"""
        store = self.res.store
        return bool(len(store.cache(self.source.policy_rt)) and len(store.cache(self.source.binding_rt)))

    def _schema(self, a: Attributes) -> "Node | None":
        from mockkube.machinery.schema import for_type

        rt = self.res.registry.get(a.group, a.version, a.resource)
        return for_type(rt) if rt is not None else None

    def mutate(self, a: Attributes, warnings: list[str] | None = None) -> dict | None:
        """The object after every matching policy (None when nothing changed it); raises the
        first failure of a policy whose failurePolicy is Fail."""
        if a.obj is None or a.operation not in ("CREATE", "UPDATE", "CONNECT"):
            return None
        invocations: list[_Invocation] = []
        for policy, binding in self.source.matching(a):
            spec = policy.get("spec") or {}
            try:
                for params in self.source.params(spec.get("paramKind"), (binding.get("spec") or {}).get("paramRef"), a):
                    invocations.append(_Invocation(policy, binding, params))
            except ParamsError as exc:
                self._fail(a, policy, binding, f"failed to configure binding: {exc}", "")
        if not invocations:
            return None
        schema = self._schema(a)
        original = a.obj
        obj, changed_by = self._run(a, original, invocations, schema)
        if changed_by is not None:
            # upstream reinvocation: IfNeeded policies invoked before the last change run once more
            again = [
                inv
                for i, inv in enumerate(invocations)
                if i < changed_by and (inv.policy.get("spec") or {}).get("reinvocationPolicy") == "IfNeeded"
            ]
            if again:
                obj, _ = self._run(a, obj, again, schema)
        return obj if obj != original else None

    def _run(
        self, a: Attributes, obj: dict, invocations: list[_Invocation], schema: "Node | None"
    ) -> tuple[dict, int | None]:
        """One pass over the invocations: the object after it, and the index of the last
        invocation that changed it."""
        last_change = None
        for i, inv in enumerate(invocations):
            try:
                new = mutate(inv.policy, _with_object(a, obj), inv.params, schema)
            except MutationError as exc:
                self._fail(a, inv.policy, inv.binding, exc.message, exc.reason)
                continue
            if new is not None and new != obj:
                obj = new
                last_change = i
        return obj, last_change

    @staticmethod
    def _fail(a: Attributes, policy: dict, binding: dict, message: str, reason: str) -> None:
        if (policy.get("spec") or {}).get("failurePolicy", "Fail") == "Ignore":
            return
        raise denied(a, policy, binding, message, reason)
