"""Admission plugins of a default kube-apiserver that act on Pods by reading other objects:
Priority (``plugin/pkg/admission/priority``) and LimitRanger
(``plugin/pkg/admission/limitranger``), with upstream's messages."""

from __future__ import annotations

from typing import Any

from mockkube.machinery import errors
from mockkube.machinery.quantity import parse_quantity


def admit_pod(pod: dict, old: dict | None, res: Any) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    if old is not None:
        # Priority sets spec.priority on create; an update that leaves it out keeps it
        ospec = old.get("spec") or {}
        for k in ("priority", "preemptionPolicy"):
            if spec.get(k) is None and ospec.get(k) is not None:
                spec[k] = ospec[k]
        return
    admit_priority(pod, res)
    admit_limit_ranges(pod, res)


def _forbidden(pod: dict, why: str) -> errors.APIError:
    return errors.forbidden("pods", "", (pod.get("metadata") or {}).get("name", ""), why)


def _priority_classes(res: Any) -> list[dict]:
    # from the cache, as upstream's admission plugins read their informers' listers: a list
    # (a quorum read) caught up with the shared log first, one round trip to PostgreSQL per
    # pod create and list, under the store's lock, in the multi-process set
    rt = res.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
    return res.store.objects(rt)


def admit_priority(pod: dict, res: Any) -> None:
    """priorityClassName -> spec.priority (and the class's preemptionPolicy); no name: the
    global default class if there is one, else priority 0."""
    spec = pod["spec"]
    name = spec.get("priorityClassName") or ""
    policy: str | None = None
    if not name:
        priority = 0
        for pc in _priority_classes(res):
            if pc.get("globalDefault"):
                name, priority, policy = pc["metadata"]["name"], int(pc.get("value", 0)), pc.get("preemptionPolicy")
                spec["priorityClassName"] = name
                break
    else:
        rt = res.registry.get("scheduling.k8s.io", "v1", "priorityclasses")
        entry = res.store.get(rt, "", name)
        if entry is None:
            raise _forbidden(pod, f"no PriorityClass with name {name} was found")
        priority, policy = int(entry.obj.get("value", 0)), entry.obj.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden(
            pod,
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name",
        )
    spec["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise _forbidden(
                pod,
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
                f"pod spec; priority admission controller computed {policy} from the given "
                f"PriorityClass name",
            )
        spec["preemptionPolicy"] = policy
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


# -- LimitRanger ------------------------------------------------------------------------------


def _q(v: Any):
    try:
        return parse_quantity(v)
    except Exception:
        return None


def _limit_ranges(ns: str, res: Any) -> list[dict]:
    rt = res.registry.get("", "v1", "limitranges")
    return res.store.objects(rt, ns)  # from the cache, as _priority_classes


def admit_limit_ranges(pod: dict, res: Any) -> None:
    """Defaults then min/max/maxLimitRequestRatio of every Container-type item."""
    ns = (pod.get("metadata") or {}).get("namespace", "")
    ranges = _limit_ranges(ns, res)
    if not ranges:
        return
    spec = pod["spec"]
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or [] if isinstance(c, dict)]
    notes: list[str] = []
    problems: list[str] = []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if item.get("type") != "Container":
                continue
            for c in containers:
                r = c.setdefault("resources", {})
                lim = r.setdefault("limits", {}) if item.get("default") else r.get("limits") or {}
                for k, v in (item.get("default") or {}).items():
                    if k not in lim:
                        lim[k] = v
                        notes.append(f"{k} limit for container {c.get('name', '')}")
                dreq = item.get("defaultRequest") or {}
                if dreq or lim:
                    req = r.setdefault("requests", {})
                    for k, v in dreq.items():
                        if k not in req:
                            req[k] = v
                            notes.append(f"{k} request for container {c.get('name', '')}")
                    for k, v in lim.items():  # requests default to limits (v1 defaulting)
                        req.setdefault(k, v)
                    if not req:
                        r.pop("requests")
                if not r.get("limits"):
                    r.pop("limits", None)
                problems += _check(item, r.get("requests") or {}, r.get("limits") or {})
    if notes:
        ann = pod["metadata"].setdefault("annotations", {})
        ann["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + "; ".join(notes)
    if problems:
        raise _forbidden(pod, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


def _check(item: dict, req: dict, lim: dict, kind: str = "Container") -> list[str]:
    out: list[str] = []
    for k, v in (item.get("min") or {}).items():
        enforced = _q(v)
        r, li = _q(req[k]) if k in req else None, _q(lim[k]) if k in lim else None
        if k not in req:
            out.append(f"minimum {k} usage per {kind} is {v}.  No request is specified")
        elif r is not None and enforced is not None and r < enforced:
            out.append(f"minimum {k} usage per {kind} is {v}, but request is {req[k]}")
        elif li is not None and enforced is not None and li < enforced:
            out.append(f"minimum {k} usage per {kind} is {v}, but limit is {lim[k]}")
    for k, v in (item.get("max") or {}).items():
        enforced = _q(v)
        r, li = _q(req[k]) if k in req else None, _q(lim[k]) if k in lim else None
        if k not in lim:
            out.append(f"maximum {k} usage per {kind} is {v}.  No limit is specified")
        elif li is not None and enforced is not None and li > enforced:
            out.append(f"maximum {k} usage per {kind} is {v}, but limit is {lim[k]}")
        elif r is not None and enforced is not None and r > enforced:
            out.append(f"maximum {k} usage per {kind} is {v}, but request is {req[k]}")
    for k, v in (item.get("maxLimitRequestRatio") or {}).items():
        r, li, ratio = _q(req.get(k, 0)), _q(lim.get(k, 0)), _q(v)
        if k not in lim:
            out.append(f"{k} max limit to request ratio per {kind} is {v}, but no limit is specified")
        elif r is not None and li is not None and ratio is not None and float(r) > 0:
            actual = float(li) / float(r)
            if actual > float(ratio):
                out.append(f"{k} max limit to request ratio per {kind} is {v}, but provided ratio is {actual:f}")
    return out
