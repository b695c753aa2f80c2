"""apps/v1 (and core/v1 ReplicationController, batch/v1) workload validation that clients
hit first (pkg/apis/apps/validation, pkg/apis/batch/validation): a required selector that
matches the template's labels, non-negative counts, update strategies, immutable fields."""

from __future__ import annotations

from typing import Any

from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.selectors import label_selector_from_object


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def non_negative(errs: list[fe.FieldError], spec: dict, field: str, path: str) -> None:
    """ValidateNonnegativeField on ``spec[field]``."""
    v = spec.get(field)
    if _is_int(v) and v < 0:
        errs.append(fe.invalid(f"{path}.{field}", v, "must be greater than or equal to 0"))


def validate_selector(spec: dict, kind: str, path: str = "spec") -> list[fe.FieldError]:
    """A required, non-empty selector that matches ``template.metadata.labels``."""
    sel = spec.get("selector")
    if not sel:
        return [fe.required(f"{path}.selector")]
    try:
        selector = label_selector_from_object(sel)
    except errors.APIError as e:
        return [fe.invalid(f"{path}.selector", sel, e.message)]
    errs: list[fe.FieldError] = []
    if selector.empty:
        errs.append(fe.invalid(f"{path}.selector", sel, f"empty selector is invalid for {kind}"))
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector.empty and not selector.matches(labels):
        errs.append(
            fe.invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")
        )
    return errs


def validate_always_template(spec: dict, kind: str) -> list[fe.FieldError]:
    """Pod templates of long-running workloads: restartPolicy Always, no activeDeadlineSeconds."""
    errs: list[fe.FieldError] = []
    pspec = (spec.get("template") or {}).get("spec") or {}
    rp = pspec.get("restartPolicy")
    if rp is not None and rp != "Always":
        errs.append(fe.not_supported("spec.template.spec.restartPolicy", rp, ["Always"]))
    if pspec.get("activeDeadlineSeconds") is not None:
        errs.append(
            fe.forbidden(
                "spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"
            )
        )
    return errs


def validate_workload(obj: dict, kind: str = "deployment") -> list[fe.FieldError]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [fe.required("spec")]
    errs: list[fe.FieldError] = []
    non_negative(errs, spec, "replicas", "spec")
    non_negative(errs, spec, "minReadySeconds", "spec")
    non_negative(errs, spec, "revisionHistoryLimit", "spec")
    return errs + validate_selector(spec, kind)


def validate_workload_update(new: dict, old: dict, kind: str = "deployment") -> list[fe.FieldError]:
    errs = validate_workload(new, kind)
    if (new.get("spec") or {}).get("selector") != (old.get("spec") or {}).get("selector"):
        errs.append(fe.invalid("spec.selector", (new.get("spec") or {}).get("selector"), "field is immutable"))
    return errs


def _int_or_percent(v: Any) -> tuple[bool, int | None]:
    """(valid, integer value or None for a percentage)."""
    if _is_int(v):
        return v >= 0, v
    if isinstance(v, str) and v.endswith("%") and v[:-1].isdigit():
        return True, None if int(v[:-1]) else 0
    return False, None


def validate_daemonset(obj: dict) -> list[fe.FieldError]:
    errs = validate_workload(obj, "daemonset")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return errs
    errs += validate_always_template(spec, "DaemonSet")
    us = spec.get("updateStrategy") or {}
    typ = us.get("type")
    if typ not in ("OnDelete", "RollingUpdate"):
        errs.append(fe.not_supported("spec.updateStrategy.type", typ, ["OnDelete", "RollingUpdate"]))
    if typ == "RollingUpdate":
        ru = us.get("rollingUpdate") or {}
        vals = {}
        for k in ("maxUnavailable", "maxSurge"):
            ok, val = _int_or_percent(ru.get(k, 0))
            if not ok:
                errs.append(
                    fe.invalid(
                        f"spec.updateStrategy.rollingUpdate.{k}",
                        ru.get(k),
                        "a valid percent string must be a numeric string followed by an ending '%' "
                        "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                        if isinstance(ru.get(k), str)
                        else "must be greater than or equal to 0",
                    )
                )
            vals[k] = val
        if vals.get("maxUnavailable") == 0 and vals.get("maxSurge") == 0:
            errs.append(
                fe.invalid(
                    "spec.updateStrategy.rollingUpdate.maxUnavailable",
                    ru.get("maxUnavailable"),
                    "may not be 0 when `maxSurge` is 0",
                )
            )
    return errs


def validate_daemonset_update(new: dict, old: dict) -> list[fe.FieldError]:
    errs = validate_daemonset(new)
    if (new.get("spec") or {}).get("selector") != (old.get("spec") or {}).get("selector"):
        errs.append(fe.invalid("spec.selector", (new.get("spec") or {}).get("selector"), "field is immutable"))
    return errs


_STS_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def validate_statefulset(obj: dict) -> list[fe.FieldError]:
    errs = validate_workload(obj, "statefulset")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return errs
    errs += validate_always_template(spec, "StatefulSet")
    pmp = spec.get("podManagementPolicy")
    if pmp not in ("OrderedReady", "Parallel"):
        errs.append(fe.not_supported("spec.podManagementPolicy", pmp, ["OrderedReady", "Parallel"]))
    us = spec.get("updateStrategy") or {}
    typ = us.get("type")
    if typ not in ("OnDelete", "RollingUpdate"):
        errs.append(fe.not_supported("spec.updateStrategy.type", typ, ["OnDelete", "RollingUpdate"]))
    elif typ == "OnDelete" and us.get("rollingUpdate") is not None:
        errs.append(
            fe.invalid(
                "spec.updateStrategy.rollingUpdate",
                us["rollingUpdate"],
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    ru = us.get("rollingUpdate") or {}
    non_negative(errs, ru, "partition", "spec.updateStrategy.rollingUpdate")
    if "maxUnavailable" in ru:
        ok, val = _int_or_percent(ru["maxUnavailable"])
        if not ok or val == 0:
            errs.append(
                fe.invalid(
                    "spec.updateStrategy.rollingUpdate.maxUnavailable", ru["maxUnavailable"], "must be greater than 0"
                )
            )
    pol = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    for k in ("whenDeleted", "whenScaled"):
        if k in pol and pol[k] not in ("Retain", "Delete"):
            errs.append(
                fe.not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{k}", pol[k], ["Retain", "Delete"])
            )
    ords = spec.get("ordinals") or {}
    non_negative(errs, ords, "start", "spec.ordinals")
    for i, t in enumerate(spec.get("volumeClaimTemplates") or ()):
        if not ((t or {}).get("metadata") or {}).get("name"):
            errs.append(
                fe.required(f"spec.volumeClaimTemplates[{i}].metadata.name", "name or generateName is required")
            )
    return errs


def validate_statefulset_update(new: dict, old: dict) -> list[fe.FieldError]:
    errs = validate_statefulset(new)
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    rest_new = {k: v for k, v in ns.items() if k not in _STS_MUTABLE}
    rest_old = {k: v for k, v in os_.items() if k not in _STS_MUTABLE}
    if rest_new != rest_old:
        errs.append(
            fe.forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'revisionHistoryLimit', "
                "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            )
        )
    return errs


def validate_replication_controller(obj: dict) -> list[fe.FieldError]:
    """ValidateReplicationControllerSpec: a map selector, required and matching the template."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [fe.required("spec")]
    errs: list[fe.FieldError] = []
    non_negative(errs, spec, "replicas", "spec")
    non_negative(errs, spec, "minReadySeconds", "spec")
    sel = spec.get("selector") or {}
    if not sel:
        errs.append(fe.required("spec.selector"))
    tpl = spec.get("template")
    if tpl is None:
        errs.append(fe.required("spec.template"))
    else:
        labels = ((tpl or {}).get("metadata") or {}).get("labels") or {}
        if sel and any(labels.get(k) != v for k, v in sel.items()):
            errs.append(
                fe.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
            )
        errs += validate_always_template(spec, "ReplicationController")
    return errs
