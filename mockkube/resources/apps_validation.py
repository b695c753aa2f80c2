"""apps/v1 validation clients hit first (pkg/apis/apps/validation): a required selector
that matches the template's labels, non-negative replicas, and an immutable selector."""

from __future__ import annotations

from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.selectors import label_selector_from_object


def validate_workload(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [fe.required("spec")]
    errs: list[fe.FieldError] = []
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
        errs.append(fe.invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
    sel = spec.get("selector")
    if not sel:
        errs.append(fe.required("spec.selector"))
        return errs
    try:
        selector = label_selector_from_object(sel)
    except errors.APIError as e:
        return errs + [fe.invalid("spec.selector", sel, e.message)]
    if selector.empty:
        errs.append(fe.invalid("spec.selector", sel, "empty selector is invalid for deployment"))
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector.empty and not selector.matches(labels):
        errs.append(fe.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    return errs


def validate_workload_update(new: dict, old: dict) -> list[fe.FieldError]:
    errs = validate_workload(new)
    if (new.get("spec") or {}).get("selector") != (old.get("spec") or {}).get("selector"):
        errs.append(fe.invalid("spec.selector", (new.get("spec") or {}).get("selector"), "field is immutable"))
    return errs
