"""The core/v1 Pod validation rules clients most often hit (pkg/apis/core/validation):
containers present, named, unique and with an image; restartPolicy values; and the
spec fields an update may change."""

from __future__ import annotations

import copy

from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names

_RESTART = ["Always", "OnFailure", "Never"]
_UPDATABLE = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)


def _containers(spec: dict, key: str, path: fe.Path, seen: set[str], required: bool) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    items = spec.get(key)
    if not items:
        if required:
            errs.append(fe.required(str(path.child(key))))
        return errs
    for i, c in enumerate(items):
        p = path.child(key).index(i)
        if not isinstance(c, dict):
            continue
        name = c.get("name")
        if not name:
            errs.append(fe.required(str(p.child("name"))))
        else:
            for msg in names.dns1123_label(name):
                errs.append(fe.invalid(str(p.child("name")), name, msg))
            if name in seen:
                errs.append(fe.duplicate(str(p.child("name")), name))
            seen.add(name)
        if not c.get("image") and key != "ephemeralContainers":
            errs.append(fe.required(str(p.child("image"))))
    return errs


def validate_pod(pod: dict) -> list[fe.FieldError]:
    spec = pod.get("spec")
    path = fe.Path("spec")
    if not isinstance(spec, dict):
        return [fe.required("spec")]
    seen: set[str] = set()
    errs = _containers(spec, "containers", path, seen, required=True)
    errs += _containers(spec, "initContainers", path, seen, required=False)
    rp = spec.get("restartPolicy")
    if rp is not None and rp not in _RESTART:
        errs.append(fe.not_supported("spec.restartPolicy", rp, _RESTART))
    group = spec.get("schedulingGroup")
    if isinstance(group, dict):  # GenericWorkload: exactly one member, podGroupName a DNS subdomain
        name = group.get("podGroupName")
        if name is None:
            errs.append(fe.invalid("spec.schedulingGroup", "", "must specify one of: `podGroupName`"))
        else:
            errs += [fe.invalid("spec.schedulingGroup.podGroupName", name, m) for m in names.dns1123_subdomain(name)]
    return errs


def _mutable_view(spec: dict) -> dict:
    """The spec with the fields an update may change blanked out."""
    s = copy.deepcopy(spec)
    for key in ("containers", "initContainers"):
        for c in s.get(key) or []:
            if isinstance(c, dict):
                c.pop("image", None)
    for key in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations", "schedulingGates"):
        s.pop(key, None)
    return s


def validate_pod_update(new: dict, old: dict) -> list[fe.FieldError]:
    errs = validate_pod(new)
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    if _mutable_view(ns) != _mutable_view(os_):
        errs.append(fe.forbidden("spec", f"pod updates may not change fields other than {_UPDATABLE}"))

    def key(t: dict) -> dict:
        return {k: v for k, v in t.items() if k != "tolerationSeconds"} if isinstance(t, dict) else t

    new_tols = [key(t) for t in ns.get("tolerations") or []]
    if any(key(t) not in new_tols for t in os_.get("tolerations") or []):
        errs.append(
            fe.forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")
        )
    return errs


def validate_resource_quota(obj: dict) -> list[fe.FieldError]:
    """ValidateResourceQuota (the parts a user meets): every spec.hard amount is a
    quantity of at least 0 and every resource name a qualified name."""
    from mockkube.machinery.quantity import parse_quantity

    errs: list[fe.FieldError] = []
    hard = (obj.get("spec") or {}).get("hard") or {}
    for name, value in sorted(hard.items()):
        path = f"spec.hard[{name}]"
        for msg in names.qualified_name(name):
            errs.append(fe.invalid(path, name, msg))
        try:
            negative = parse_quantity(value).sign() < 0
        except Exception:
            continue  # the decoder already refused it
        if negative:
            errs.append(fe.invalid(path, str(value), "must be greater than or equal to 0"))
    return errs
