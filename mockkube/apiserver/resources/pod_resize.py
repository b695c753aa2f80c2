"""The pods/resize subresource (in-place pod resize, GA in v1.35): the strategy keeps
everything of the stored pod but container cpu/memory resources, resize policies and
pod-level resources, and ``ValidatePodResize`` refuses what may not change in place.

KEP-5517 alpha: a pod whose ``status.nodeAllocatableResourceClaimStatuses`` is set
cannot be resized (the kubelet does not yet fold DRA quantities into its cgroups).
"""

from __future__ import annotations

import copy
from typing import Any

from mockkube.apiserver.resources.pod_defaults import qos_class
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.quantity import parse_quantity

ERR_DRA = "pods with node allocatable resource claims cannot be resized"
ERR_ONLY_CPU_MEMORY = "only cpu and memory resources are mutable"
CPU_MEMORY = ("cpu", "memory")


def prepare(new: dict, old: dict) -> None:
    """dropNonResizeUpdates: ``new`` becomes the stored pod with only the resize fields
    taken from the request (container resources and resizePolicy, pod-level resources)."""
    want = copy.deepcopy(new)
    keep_meta = {k: want.get("metadata", {}).get(k) for k in ("resourceVersion", "managedFields")}
    new.clear()
    new.update(copy.deepcopy(old))
    for k, v in keep_meta.items():
        if v is not None:
            new.setdefault("metadata", {})[k] = v
    spec, wspec = new.setdefault("spec", {}), want.get("spec") or {}
    for field in ("containers", "initContainers"):
        mine, theirs = spec.get(field) or [], wspec.get(field) or []
        if len(mine) != len(theirs):
            spec[field] = copy.deepcopy(theirs)  # validation refuses adding or removing
            continue
        for c, w in zip(mine, theirs):
            if not isinstance(c, dict) or not isinstance(w, dict):
                continue
            c["name"] = w.get("name", c.get("name"))
            for key in ("resources", "resizePolicy"):
                if key in w:
                    c[key] = copy.deepcopy(w[key])
                else:
                    c.pop(key, None)
    if "resources" in wspec:
        spec["resources"] = copy.deepcopy(wspec["resources"])
    else:
        spec.pop("resources", None)


def _semantic(v: Any) -> Any:
    if isinstance(v, dict):
        out = {k: _semantic(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, {}, [])}
    if isinstance(v, list):
        return [_semantic(x) for x in v]
    if isinstance(v, str) and v[:1].isdigit():
        try:
            q = parse_quantity(v)
            return ("q", q.milli_value())
        except Exception:
            return v
    return v


def _without_cpu_memory(container: dict, old: dict) -> dict:
    """The container with its cpu/memory requests and limits put back to the old ones."""
    out = copy.deepcopy(container)
    res, old_res = container.get("resources") or {}, old.get("resources") or {}
    dropped: dict = {}
    for kind in ("requests", "limits"):
        cur, prev = res.get(kind), old_res.get(kind)
        if cur is None and prev is None:
            continue
        merged = {k: v for k, v in (cur or {}).items() if k not in CPU_MEMORY}
        merged.update({k: v for k, v in (prev or {}).items() if k in CPU_MEMORY})
        dropped[kind] = merged
    for k, v in res.items():
        if k not in ("requests", "limits"):
            dropped[k] = v
    out["resources"] = dropped
    return out


def validate(new: dict, old: dict) -> list[fe.FieldError]:
    """ValidatePodResize, the parts a resize through mockkube can hit."""
    errs: list[fe.FieldError] = []
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    old_qos = (old.get("status") or {}).get("qosClass") or qos_class(old_spec)
    if qos_class(spec) != old_qos:
        errs.append(
            fe.invalid(
                "spec",
                (new.get("status") or {}).get("qosClass", ""),
                "Pod QOS Class may not change as a result of resizing",
            )
        )
    if (old.get("status") or {}).get("nodeAllocatableResourceClaimStatuses"):
        errs.append(fe.forbidden("spec", ERR_DRA))
    for field in ("containers", "initContainers"):
        mine, theirs = old_spec.get(field) or [], spec.get(field) or []
        if len(mine) != len(theirs):
            errs.append(fe.forbidden(f"spec.{field}", f"{field} may not be added or removed on resize"))
            return errs
        for i, (o, n) in enumerate(zip(mine, theirs)):
            if o.get("name") != n.get("name"):
                errs.append(
                    fe.forbidden(f"spec.{field}[{i}].name", f"{field} may not be renamed or reordered on resize")
                )
                return errs
            for kind in ("requests", "limits"):
                before = ((o.get("resources") or {}).get(kind)) or {}
                after = ((n.get("resources") or {}).get(kind)) or {}
                if any(k not in after for k in before):
                    errs.append(
                        fe.forbidden(f"spec.{field}[{i}].resources.{kind}", f"resource {kind} cannot be removed")
                    )
            if _semantic(_without_cpu_memory(n, o)) != _semantic(o):
                errs.append(fe.forbidden("spec", ERR_ONLY_CPU_MEMORY))
    return errs
