"""autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler conversion, as
``pkg/apis/autoscaling/v1/conversion.go`` does it through the internal version.

autoscaling/v2 is the storage version. autoscaling/v1 only has a CPU utilization target; what
it cannot hold travels in annotations, so a v2 object read as v1 and written back is
unchanged:

* ``autoscaling.alpha.kubernetes.io/metrics``: the metrics other than a CPU utilization
  target, in autoscaling/v1's (v2beta1-shaped) ``MetricSpec`` form;
* ``autoscaling.alpha.kubernetes.io/current-metrics``: ``status.currentMetrics``, likewise;
* ``autoscaling.alpha.kubernetes.io/conditions``: ``status.conditions``;
* ``autoscaling.alpha.kubernetes.io/behavior``: ``spec.behavior`` as upstream marshals its
  internal type (Go field names, null pointers kept).

Reading through v2 drops these annotations (``DropRoundTripHorizontalPodAutoscalerAnnotations``).
"""

from __future__ import annotations

import json
from typing import Any

from mockkube.machinery.meta import clone

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)
DEFAULT_CPU_UTILIZATION = 80

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"


def _json(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


def drop_round_trip(meta: dict) -> None:
    ann = meta.get("annotations")
    if isinstance(ann, dict) and any(k in ann for k in ROUND_TRIP):
        rest = {k: v for k, v in ann.items() if k not in ROUND_TRIP}
        if rest:
            meta["annotations"] = rest
        else:
            meta.pop("annotations", None)


def _set(d: dict, key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


# -- metric specs: v2 <-> v1 (v2beta1 shape) -----------------------------------------------


def _spec_to_v1(m: dict) -> dict:
    out: dict = {"type": m.get("type", "")}
    if (o := m.get("object")) is not None:
        t, mi = o.get("target") or {}, o.get("metric") or {}
        v1o: dict = {"target": dict(o.get("describedObject") or {}), "metricName": mi.get("name", "")}
        v1o["targetValue"] = t.get("value") if t.get("value") is not None else "0"
        _set(v1o, "selector", mi.get("selector"))
        _set(v1o, "averageValue", t.get("averageValue"))
        out["object"] = v1o
    if (p := m.get("pods")) is not None:
        t, mi = p.get("target") or {}, p.get("metric") or {}
        v1p: dict = {"metricName": mi.get("name", "")}
        v1p["targetAverageValue"] = t.get("averageValue") if t.get("averageValue") is not None else "0"
        _set(v1p, "selector", mi.get("selector"))
        out["pods"] = v1p
    for key in ("resource", "containerResource"):
        if (r := m.get(key)) is not None:
            t = r.get("target") or {}
            v1r: dict = {"name": r.get("name", "")}
            _set(v1r, "targetAverageUtilization", t.get("averageUtilization"))
            _set(v1r, "targetAverageValue", t.get("averageValue"))
            if key == "containerResource":
                v1r["container"] = r.get("container", "")
            out[key] = v1r
    if (e := m.get("external")) is not None:
        t, mi = e.get("target") or {}, e.get("metric") or {}
        v1e: dict = {"metricName": mi.get("name", "")}
        _set(v1e, "metricSelector", mi.get("selector"))
        _set(v1e, "targetValue", t.get("value"))
        _set(v1e, "targetAverageValue", t.get("averageValue"))
        out["external"] = v1e
    return out


def _spec_from_v1(m: dict) -> dict:
    out: dict = {"type": m.get("type", "")}
    if (o := m.get("object")) is not None:
        target: dict = {"type": "Value" if o.get("averageValue") is None else "AverageValue"}
        target["value"] = o.get("targetValue", "0")
        _set(target, "averageValue", o.get("averageValue"))
        mi: dict = {"name": o.get("metricName", "")}
        _set(mi, "selector", o.get("selector"))
        out["object"] = {"describedObject": dict(o.get("target") or {}), "target": target, "metric": mi}
    if (p := m.get("pods")) is not None:
        mi = {"name": p.get("metricName", "")}
        _set(mi, "selector", p.get("selector"))
        out["pods"] = {
            "metric": mi,
            "target": {"type": "AverageValue", "averageValue": p.get("targetAverageValue", "0")},
        }
    for key in ("resource", "containerResource"):
        if (r := m.get(key)) is not None:
            util = r.get("targetAverageUtilization")
            target = {"type": "AverageValue" if util is None else "Utilization"}
            _set(target, "averageUtilization", util)
            _set(target, "averageValue", r.get("targetAverageValue"))
            v2r: dict = {"name": r.get("name", ""), "target": target}
            if key == "containerResource":
                v2r["container"] = r.get("container", "")
            out[key] = v2r
    if (e := m.get("external")) is not None:
        target = {"type": "AverageValue" if e.get("targetValue") is None else "Value"}
        _set(target, "value", e.get("targetValue"))
        _set(target, "averageValue", e.get("targetAverageValue"))
        mi = {"name": e.get("metricName", "")}
        _set(mi, "selector", e.get("metricSelector"))
        out["external"] = {"metric": mi, "target": target}
    return out


def _status_to_v1(m: dict) -> dict:
    out: dict = {"type": m.get("type", "")}
    if (o := m.get("object")) is not None:
        c, mi = o.get("current") or {}, o.get("metric") or {}
        v1o: dict = {"target": dict(o.get("describedObject") or {}), "metricName": mi.get("name", "")}
        v1o["currentValue"] = c.get("value") if c.get("value") is not None else "0"
        _set(v1o, "selector", mi.get("selector"))
        _set(v1o, "averageValue", c.get("averageValue"))
        out["object"] = v1o
    if (p := m.get("pods")) is not None:
        c, mi = p.get("current") or {}, p.get("metric") or {}
        v1p: dict = {"metricName": mi.get("name", "")}
        v1p["currentAverageValue"] = c.get("averageValue") if c.get("averageValue") is not None else "0"
        _set(v1p, "selector", mi.get("selector"))
        out["pods"] = v1p
    for key in ("resource", "containerResource"):
        if (r := m.get(key)) is not None:
            c = r.get("current") or {}
            v1r: dict = {"name": r.get("name", "")}
            _set(v1r, "currentAverageUtilization", c.get("averageUtilization"))
            v1r["currentAverageValue"] = c.get("averageValue") if c.get("averageValue") is not None else "0"
            if key == "containerResource":
                v1r["container"] = r.get("container", "")
            out[key] = v1r
    if (e := m.get("external")) is not None:
        c, mi = e.get("current") or {}, e.get("metric") or {}
        v1e: dict = {"metricName": mi.get("name", "")}
        _set(v1e, "metricSelector", mi.get("selector"))
        v1e["currentValue"] = c.get("value") if c.get("value") is not None else "0"
        _set(v1e, "currentAverageValue", c.get("averageValue"))
        out["external"] = v1e
    return out


def _status_from_v1(m: dict) -> dict:
    out: dict = {"type": m.get("type", "")}
    if (o := m.get("object")) is not None:
        cur: dict = {"value": o.get("currentValue", "0")}
        _set(cur, "averageValue", o.get("averageValue"))
        mi: dict = {"name": o.get("metricName", "")}
        _set(mi, "selector", o.get("selector"))
        out["object"] = {"describedObject": dict(o.get("target") or {}), "current": cur, "metric": mi}
    if (p := m.get("pods")) is not None:
        mi = {"name": p.get("metricName", "")}
        _set(mi, "selector", p.get("selector"))
        out["pods"] = {"metric": mi, "current": {"averageValue": p.get("currentAverageValue", "0")}}
    for key in ("resource", "containerResource"):
        if (r := m.get(key)) is not None:
            cur = {"averageValue": r.get("currentAverageValue", "0")}
            _set(cur, "averageUtilization", r.get("currentAverageUtilization"))
            v2r: dict = {"name": r.get("name", ""), "current": cur}
            if key == "containerResource":
                v2r["container"] = r.get("container", "")
            out[key] = v2r
    if (e := m.get("external")) is not None:
        cur = {"value": e.get("currentValue", "0")}
        _set(cur, "averageValue", e.get("currentAverageValue"))
        mi = {"name": e.get("metricName", "")}
        _set(mi, "selector", e.get("metricSelector"))
        out["external"] = {"metric": mi, "current": cur}
    return out


# -- behavior: the internal type's JSON (Go field names) ------------------------------------

_RULE_FIELDS = (
    ("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
    ("selectPolicy", "SelectPolicy"),
    ("policies", "Policies"),
    ("tolerance", "Tolerance"),
)
_POLICY_FIELDS = (("type", "Type"), ("value", "Value"), ("periodSeconds", "PeriodSeconds"))


def _behavior_to_internal(b: dict) -> dict:
    def rules(r: dict | None) -> dict | None:
        if r is None:
            return None
        out: dict = {}
        for k, gk in _RULE_FIELDS:
            v = r.get(k)
            if k == "policies":
                v = None if v is None else [{gk2: p.get(k2) for k2, gk2 in _POLICY_FIELDS} for p in v]
            out[gk] = v
        return out

    return {"ScaleUp": rules(b.get("scaleUp")), "ScaleDown": rules(b.get("scaleDown"))}


def _behavior_from_internal(b: Any) -> dict | None:
    if not isinstance(b, dict):
        return None

    def rules(r: Any) -> dict | None:
        if not isinstance(r, dict):
            return None
        out: dict = {}
        for k, gk in _RULE_FIELDS:
            v = r.get(gk)
            if v is None:
                continue
            if k == "policies":
                v = [{k2: p.get(gk2) for k2, gk2 in _POLICY_FIELDS if p.get(gk2) is not None} for p in v or ()]
            out[k] = v
        return out

    out = {}
    for k, gk in (("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")):
        r = rules(b.get(gk))
        if r is not None:
            out[k] = r
    return out or None


# -- the objects ---------------------------------------------------------------------------


def _is_cpu_utilization(m: dict) -> bool:
    r = m.get("resource")
    return (
        m.get("type") == "Resource"
        and isinstance(r, dict)
        and r.get("name") == "cpu"
        and (r.get("target") or {}).get("averageUtilization") is not None
    )


def to_v1(obj: dict) -> dict:
    """A stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1."""
    spec, status = obj.get("spec") or {}, obj.get("status")
    meta = clone(obj.get("metadata") or {})
    drop_round_trip(meta)
    ann: dict = {}
    out: dict = {"kind": "HorizontalPodAutoscaler", "apiVersion": V1, "metadata": meta}
    v1spec: dict = {}
    _set(v1spec, "scaleTargetRef", clone(spec.get("scaleTargetRef")) if "scaleTargetRef" in spec else None)
    _set(v1spec, "minReplicas", spec.get("minReplicas"))
    _set(v1spec, "maxReplicas", spec.get("maxReplicas"))
    metrics = spec.get("metrics") or []
    for m in metrics:
        if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu":
            util = ((m.get("resource") or {}).get("target") or {}).get("averageUtilization")
            _set(v1spec, "targetCPUUtilizationPercentage", util)
            break
    others = [_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        ann[METRICS] = _json(others)
    if spec.get("behavior") is not None:
        ann[BEHAVIOR] = _json(_behavior_to_internal(spec["behavior"]))
    out["spec"] = v1spec
    if status is not None:
        v1st: dict = {}
        for k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"):
            _set(v1st, k, status.get(k))
        v1st.setdefault("desiredReplicas", 0)
        current = status.get("currentMetrics") or []
        for m in current:
            r = m.get("resource") or {}
            if m.get("type") == "Resource" and r.get("name") == "cpu":
                _set(v1st, "currentCPUUtilizationPercentage", (r.get("current") or {}).get("averageUtilization"))
        if current:
            ann[CURRENT_METRICS] = _json([_status_to_v1(m) for m in current])
        if status.get("conditions"):
            ann[CONDITIONS] = _json(status["conditions"])
        out["status"] = v1st
    if ann:
        meta["annotations"] = {**(meta.get("annotations") or {}), **ann}
    return out


def to_v2(obj: dict) -> dict:
    """An autoscaling/v1 HorizontalPodAutoscaler as autoscaling/v2 (the stored form)."""
    spec, status = obj.get("spec") or {}, obj.get("status")
    meta = clone(obj.get("metadata") or {})
    ann = dict(meta.get("annotations") or {})
    out: dict = {"kind": "HorizontalPodAutoscaler", "apiVersion": V2, "metadata": meta}
    v2spec: dict = {}
    _set(v2spec, "scaleTargetRef", clone(spec.get("scaleTargetRef")) if "scaleTargetRef" in spec else None)
    _set(v2spec, "minReplicas", spec.get("minReplicas"))
    _set(v2spec, "maxReplicas", spec.get("maxReplicas"))
    metrics: list = []
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]},
                },
            }
        ]
    if METRICS in ann:
        try:
            others = [_spec_from_v1(m) for m in json.loads(ann[METRICS]) or ()]
        except (ValueError, TypeError, AttributeError):
            others = None
        if others is not None:
            metrics = others + metrics
    if not metrics:
        metrics = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION},
                },
            }
        ]
    v2spec["metrics"] = metrics
    if BEHAVIOR in ann:
        try:
            behavior = _behavior_from_internal(json.loads(ann[BEHAVIOR]))
        except ValueError:
            behavior = None
        if behavior:
            v2spec["behavior"] = behavior
    out["spec"] = v2spec
    if status is not None:
        v2st: dict = {}
        for k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"):
            _set(v2st, k, status.get(k))
        if status.get("currentCPUUtilizationPercentage") is not None:
            v2st["currentMetrics"] = [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]},
                    },
                }
            ]
        if CURRENT_METRICS in ann:
            try:
                v2st["currentMetrics"] = [_status_from_v1(m) for m in json.loads(ann[CURRENT_METRICS]) or ()]
            except (ValueError, TypeError, AttributeError):
                pass
        if CONDITIONS in ann:
            try:
                conds = json.loads(ann[CONDITIONS])
                if isinstance(conds, list):
                    v2st["conditions"] = conds
            except ValueError:
                pass
        out["status"] = v2st
    drop_round_trip(meta)
    return out


class HPAConverter:
    """The converter the generic read paths call (``convert(objs, api_version)``)."""

    def convert(self, objs: list[dict], api_version: str) -> list[dict]:
        out = []
        for o in objs:
            if o.get("apiVersion") == api_version:
                out.append(o)
            elif api_version == V1:
                out.append(to_v1(o))
            else:
                out.append(to_v2(o))
        return out
