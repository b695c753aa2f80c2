"""autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscalers, with status subresources.

Stored at autoscaling/v2 (upstream's storage version); autoscaling/v1 is served by
conversion (``autoscaling_conversion``), written and read through the same objects.
Validation is ``pkg/apis/autoscaling/validation`` on the v2 (internal) form, the strategy
``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`` (status is the
subresource's; no generation), defaults those of ``pkg/apis/autoscaling/v{1,2}/defaults.go``.
"""

from __future__ import annotations

from mockkube.apiserver.resources import autoscaling_conversion as conv
from mockkube.apiserver.resources.strategies import ConvertingStrategy, SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.meta import clone
from mockkube.machinery.quantity import parse_quantity
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource

MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
_METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_SELECT_POLICIES = ["Disabled", "Max", "Min"]
_POLICY_TYPES = ["Percent", "Pods"]
_FIELD_OF = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}

_SCALE_UP = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def default_v2(obj: dict) -> None:
    """SetDefaults_HorizontalPodAutoscaler (autoscaling/v2)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": conv.DEFAULT_CPU_UTILIZATION},
                },
            }
        ]
    b = spec.get("behavior")
    if isinstance(b, dict):
        for key, dflt in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            rules = clone(dflt)
            given = b.get(key)
            if isinstance(given, dict):
                rules.update({k: v for k, v in given.items() if v is not None})
            b[key] = rules


# -- validation (ValidateHorizontalPodAutoscaler) -------------------------------------------


def _path_segment(value: str, path: str) -> list[fe.FieldError]:
    return [fe.invalid(path, value, msg) for msg in names.name_is_path_segment(value)]


def validate_cross_version_ref(ref: dict, path: str) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    for k in ("kind", "name"):
        v = ref.get(k) or ""
        errs += [fe.required(f"{path}.{k}", "")] if not v else _path_segment(v, f"{path}.{k}")
    return errs


def _sign(q) -> int | None:
    try:
        return parse_quantity(q).sign()
    except (ValueError, TypeError):
        return None


def _metric_target(t: dict, path: str) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    typ = t.get("type") or ""
    if not typ:
        errs.append(fe.required(f"{path}.type", "must specify a metric target type"))
    if typ not in ("Utilization", "Value", "AverageValue"):
        errs.append(fe.invalid(f"{path}.type", typ, "must be either Utilization, Value, or AverageValue"))
    for k in ("value", "averageValue"):
        if t.get(k) is not None and _sign(t[k]) != 1:
            errs.append(fe.invalid(f"{path}.{k}", t[k], "must be positive"))
    if t.get("averageUtilization") is not None and t["averageUtilization"] < 1:
        errs.append(fe.invalid(f"{path}.averageUtilization", t["averageUtilization"], "must be greater than 0"))
    return errs


def _metric_identifier(mi: dict, path: str) -> list[fe.FieldError]:
    name = mi.get("name") or ""
    if not name:
        return [fe.required(f"{path}.name", "must specify a metric name")]
    return _path_segment(name, f"{path}.name")


def _source_errors(kind: str, src: dict, path: str) -> list[fe.FieldError]:
    t = src.get("target") or {}
    tp = f"{path}.target"
    errs: list[fe.FieldError] = []
    if kind == "object":
        errs += validate_cross_version_ref(src.get("describedObject") or {}, f"{path}.describedObject")
        errs += _metric_identifier(src.get("metric") or {}, f"{path}.metric")
        errs += _metric_target(t, tp)
        if t.get("value") is None and t.get("averageValue") is None:
            errs.append(fe.required(f"{tp}.averageValue", "must set either a target value or averageValue"))
    elif kind == "external":
        errs += _metric_identifier(src.get("metric") or {}, f"{path}.metric")
        errs += _metric_target(t, tp)
        if t.get("value") is None and t.get("averageValue") is None:
            errs.append(
                fe.required(f"{tp}.averageValue", "must set either a target value for metric or a per-pod target")
            )
        if t.get("value") is not None and t.get("averageValue") is not None:
            errs.append(fe.forbidden(f"{tp}.value", "may not set both a target value for metric and a per-pod target"))
    elif kind == "pods":
        errs += _metric_identifier(src.get("metric") or {}, f"{path}.metric")
        errs += _metric_target(t, tp)
        if t.get("averageValue") is None:
            errs.append(fe.required(f"{tp}.averageValue", "must specify a positive target averageValue"))
    else:  # resource, containerResource
        name = src.get("name") or ""
        if not name:
            errs.append(fe.required(f"{path}.name", "must specify a resource name"))
        if kind == "containerResource":
            c = src.get("container") or ""
            if not c:
                errs.append(fe.required(f"{path}.container", "must specify a container"))
            else:
                errs += [fe.invalid(f"{path}.container", c, m) for m in names.dns1123_label(c)]
        errs += _metric_target(t, tp)
        if t.get("averageUtilization") is None and t.get("averageValue") is None:
            errs.append(
                fe.required(f"{tp}.averageUtilization", "must set either a target raw value or a target utilization")
            )
        if t.get("averageUtilization") is not None and t.get("averageValue") is not None:
            errs.append(
                fe.forbidden(f"{tp}.averageValue", "may not set both a target raw value and a target utilization")
            )
    return errs


def _metric_spec(m: dict, path: str) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    typ = m.get("type") or ""
    if not typ:
        errs.append(fe.required(f"{path}.type", "must specify a metric source type"))
    if typ not in _METRIC_TYPES:
        errs.append(fe.not_supported(f"{path}.type", typ, _METRIC_TYPES))
    present: list[str] = []
    for key in ("object", "external", "pods", "resource", "containerResource"):
        if m.get(key) is not None:
            present.append(key)
            if len(present) == 1:
                errs += _source_errors(key, m[key], f"{path}.{key}")
    expected = _FIELD_OF.get(typ, "")
    if expected:
        if m.get(expected) is None:
            errs.append(fe.required(f"{path}.{expected}", "must populate information for the given metric source"))
    else:
        errs.append(fe.not_supported(f"{path}.type", typ, _METRIC_TYPES))
    if len(present) != 1:
        for key in sorted(set(present) - {expected}):
            errs.append(fe.forbidden(f"{path}.{key}", "must populate the given metric source only"))
    return errs


def _scaling_rules(r: dict | None, path: str) -> list[fe.FieldError]:
    if r is None:
        return []
    errs: list[fe.FieldError] = []
    sw = r.get("stabilizationWindowSeconds")
    if sw is not None and sw < 0:
        errs.append(fe.invalid(f"{path}.stabilizationWindowSeconds", sw, "must be greater than or equal to zero"))
    if sw is not None and sw > MAX_STABILIZATION_WINDOW_SECONDS:
        errs.append(
            fe.invalid(
                f"{path}.stabilizationWindowSeconds",
                sw,
                f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}",
            )
        )
    sp = r.get("selectPolicy")
    if sp is not None and sp not in _SELECT_POLICIES:
        errs.append(fe.not_supported(f"{path}.selectPolicy", sp, _SELECT_POLICIES))
    tol = r.get("tolerance")
    if tol is not None and (_sign(tol) or 0) < 0:
        errs.append(fe.invalid(f"{path}.tolerance", tol, "must be greater than or equal to zero"))
    policies = r.get("policies") or []
    if not policies:
        errs.append(fe.required(f"{path}.policies", "must specify at least one Policy"))
    for i, p in enumerate(policies):
        pp = f"{path}.policies[{i}]"
        if p.get("type") not in _POLICY_TYPES:
            errs.append(fe.not_supported(f"{pp}.type", p.get("type", ""), _POLICY_TYPES))
        v, per = p.get("value", 0), p.get("periodSeconds", 0)
        if v <= 0:
            errs.append(fe.invalid(f"{pp}.value", v, "must be greater than zero"))
        if per <= 0:
            errs.append(fe.invalid(f"{pp}.periodSeconds", per, "must be greater than zero"))
        if per > MAX_PERIOD_SECONDS:
            errs.append(fe.invalid(f"{pp}.periodSeconds", per, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def validate_spec(spec: dict, min_lower_bound: int = 1) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    mn, mx = spec.get("minReplicas"), spec.get("maxReplicas", 0) or 0
    if mn is not None and mn < min_lower_bound:
        errs.append(fe.invalid("spec.minReplicas", mn, f"must be greater than or equal to {min_lower_bound}"))
    if mx < 1:
        errs.append(fe.invalid("spec.maxReplicas", mx, "must be greater than 0"))
    if mn is not None and mx < mn:
        errs.append(fe.invalid("spec.maxReplicas", mx, "must be greater than or equal to `minReplicas`"))
    errs += validate_cross_version_ref(spec.get("scaleTargetRef") or {}, "spec.scaleTargetRef")
    metrics = spec.get("metrics") or []
    for i, m in enumerate(metrics):
        errs += _metric_spec(m, f"spec.metrics[{i}]")
    if mn == 0 and not any(m.get("type") in ("Object", "External") for m in metrics):
        errs.append(
            fe.forbidden(
                "spec.metrics",
                "must specify at least one Object or External metric to support scaling to zero replicas",
            )
        )
    b = spec.get("behavior")
    if isinstance(b, dict):
        errs += _scaling_rules(b.get("scaleUp"), "spec.behavior.scaleUp")
        errs += _scaling_rules(b.get("scaleDown"), "spec.behavior.scaleDown")
    return errs


def _nonnegative(v, path: str) -> list[fe.FieldError]:
    return [fe.invalid(path, v, "must be greater than or equal to 0")] if isinstance(v, int) and v < 0 else []


class HorizontalPodAutoscalerStrategy(ConvertingStrategy, SpecStatusStrategy):
    """autoscaling/v2, the storage version."""

    tracks_generation = False
    api_version = conv.V2
    storage_api_version = conv.V2
    converter = conv.HPAConverter()

    def default(self, obj: dict, now: str | None = None) -> None:
        default_v2(obj)

    def storage_default(self, obj: dict, now: str | None = None) -> None:
        default_v2(obj)

    def stored_form(self, obj: dict) -> None:
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            conv.drop_round_trip(meta)

    def initial_status(self, obj: dict) -> dict:
        return {"currentMetrics": None, "desiredReplicas": 0}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_spec(obj.get("spec") or {})

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        lower = 0 if (old.get("spec") or {}).get("minReplicas") == 0 else 1
        return validate_spec(new.get("spec") or {}, lower)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        st = new.get("status") or {}
        return _nonnegative(st.get("currentReplicas"), "status.currentReplicas") + _nonnegative(
            st.get("desiredReplicas"), "status.desiredReplicas"
        )


class HorizontalPodAutoscalerV1Strategy(HorizontalPodAutoscalerStrategy):
    """autoscaling/v1: defaulted as v1 (minReplicas), converted to v2 before anything else."""

    api_version = conv.V1

    def default(self, obj: dict, now: str | None = None) -> None:
        if obj.get("apiVersion") == conv.V2:  # already converted (a retried write)
            default_v2(obj)
            return
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("minReplicas") is None:
            spec["minReplicas"] = 1


_STATUS = (Subresource("status", "HorizontalPodAutoscaler"),)

# v2 first: the storage version is what components and reset find first for the storage key
hpa_v2 = REGISTRY.add(
    ResourceType(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        namespaced=True,
        short_names=("hpa",),
        categories=("all",),
        subresources=_STATUS,
        strategy=HorizontalPodAutoscalerStrategy(),
    )
)
hpa_v1 = REGISTRY.add(
    ResourceType(
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        namespaced=True,
        short_names=("hpa",),
        categories=("all",),
        subresources=_STATUS,
        strategy=HorizontalPodAutoscalerV1Strategy(),
    )
)
