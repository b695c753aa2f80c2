"""The horizontal pod autoscaler controller (kube-controller-manager
``pkg/controller/podautoscaler/horizontal.go``), without a metrics pipeline.

A simulated cluster has no metrics server and serves no ``metrics.k8s.io``,
``custom.metrics.k8s.io`` or ``external.metrics.k8s.io`` API, so what the controller can do
is what upstream's does when every metric fails: it reads the target's scale, keeps the
replica count within ``minReplicas``..``maxReplicas`` (the bounds rescale, with its
``SuccessfulRescale`` event), leaves a target scaled to zero alone (``ScalingDisabled``),
and otherwise records that the metrics could not be read (``ScalingActive=False`` with
upstream's reasons, ``FailedGetResourceMetric``/``FailedComputeMetricsReplicas`` events)
without changing the replica count. See docs/compatibility.md.

Upstream resyncs every 15 s; here an HPA is looked at again when it or its target changes
(metrics never arrive, so nothing else could change the outcome).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client import recorder
from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta
from mockkube.machinery.customresource import value_at
from mockkube.machinery.meta import clone

if TYPE_CHECKING:
    from mockkube.machinery.registry import ResourceType
    from mockkube.server.server import Server

NAME = "horizontal-pod-autoscaler"
_TARGETS = (("deployments", "apps"), ("replicasets", "apps"), ("statefulsets", "apps"), ("replicationcontrollers", ""))
_METRICS_API = {
    "Resource": "unable to fetch metrics from resource metrics API: the server could not find the requested "
    "resource (get pods.metrics.k8s.io)",
    "Pods": "unable to fetch metrics from custom metrics API: the server could not find the metric {name} for pods",
    "Object": "unable to fetch metrics from custom metrics API: the server could not find the requested resource",
    "External": "unable to fetch metrics from external metrics API: the server could not find the requested resource",
}


def metric_error(spec: dict) -> tuple[str, str, str]:
    """(condition reason, the metrics client's error, computeReplicasForMetric's error) for one
    metric that cannot be read, worded as upstream's."""
    typ = spec.get("type", "")
    if typ in ("Resource", "ContainerResource"):
        src = spec.get("resource" if typ == "Resource" else "containerResource") or {}
        res = src.get("name", "")
        what = "utilization" if (src.get("target") or {}).get("averageUtilization") is not None else "usage"
        if typ == "Resource":
            inner = f"unable to get metrics for resource {res}: {_METRICS_API['Resource']}"
            return (
                "FailedGetResourceMetric",
                inner,
                f"failed to get {res} resource metric value: failed to get {res} {what}: {inner}",
            )
        inner = f"unable to get container metrics for resource {res}: {_METRICS_API['Resource']}"
        return (
            "FailedGetContainerResourceMetric",
            inner,
            f"failed to get {res} container metric value: failed to get {res} {what}: {inner}",
        )
    if typ == "Pods":
        name = ((spec.get("pods") or {}).get("metric") or {}).get("name", "")
        inner = f"unable to get metric {name}: " + _METRICS_API["Pods"].format(name=name)
        return "FailedGetPodsMetric", inner, f"failed to get pods metric value: {inner}"
    if typ == "Object":
        name = ((spec.get("object") or {}).get("metric") or {}).get("name", "")
        inner = f"unable to get metric {name}: {_METRICS_API['Object']}"
        return "FailedGetObjectMetric", inner, f"failed to get object metric value: {inner}"
    name = ((spec.get("external") or {}).get("metric") or {}).get("name", "")
    inner = f"unable to get external metric {name}: {_METRICS_API['External']}"
    return "FailedGetExternalMetric", inner, f"failed to get external metric value: {inner}"


def set_condition(status: dict, ctype: str, cstatus: str, reason: str, message: str, now: str) -> None:
    """setCondition: the transition time moves only when the status does."""
    conds = status.setdefault("conditions", [])
    for c in conds:
        if c.get("type") == ctype:
            if c.get("status") != cstatus:
                c["lastTransitionTime"] = now
            c.update(status=cstatus, reason=reason, message=message)
            return
    conds.append({"type": ctype, "status": cstatus, "lastTransitionTime": now, "reason": reason, "message": message})


class HorizontalPodAutoscalerController(Controller):
    name = "horizontal-pod-autoscaler-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.hpa_rt = self.client.rt("horizontalpodautoscalers", "autoscaling", "v2")
        self.hpas = Informer(server.store, self.hpa_rt)
        self.hpas.add_handler(
            lambda t, o, p: (
                t != "DELETED" and self.queue.add((o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            )
        )
        self.informers.append(self.hpas)
        for plural, group in _TARGETS:
            rt = self.client.rt(plural, group)
            inf = Informer(server.store, rt)
            inf.add_handler(self._on_target(rt.kind))
            self.informers.append(inf)

    def _on_target(self, kind: str):
        def handler(typ: str, obj: dict, prev: dict | None) -> None:
            ns, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
            for hpa in self.hpas.list(ns):
                ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
                if ref.get("kind") == kind and ref.get("name") == name:
                    self.queue.add((ns, hpa["metadata"]["name"]))

        return handler

    def _now(self) -> str:
        return meta.rfc3339(self.server.clock())

    def _target_rt(self, ref: dict) -> "ResourceType | None":
        group = ref.get("apiVersion", "").rpartition("/")[0] if "/" in ref.get("apiVersion", "") else ""
        for rt in self.client.registry.all():
            if rt.group == group and rt.kind == ref.get("kind") and rt.subresource("scale") is not None:
                return rt
        return None

    def _event(self, hpa: dict, type_: str, reason: str, message: str) -> None:
        recorder.record(
            self.client,
            hpa,
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            type_,
            reason,
            message,
            NAME,
            self.server.clock(),
        )

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        hpa = self.hpas.get(ns, name)
        if hpa is None or hpa["metadata"].get("deletionTimestamp"):
            return
        spec = hpa.get("spec") or {}
        old_status = hpa.get("status") or {}
        status = clone(old_status)
        now = self._now()
        events: list[tuple[str, str, str]] = []
        ref = spec.get("scaleTargetRef") or {}
        rt = self._target_rt(ref)
        target = self.client.get(rt, ns, ref.get("name", "")) if rt is not None else None
        if target is None:
            if rt is None:
                group = ref.get("apiVersion", "").rpartition("/")[0]
                err = f'no matches for kind "{ref.get("kind", "")}" in group "{group}"'
            else:
                err = f'{rt.plural}{"." + rt.group if rt.group else ""} "{ref.get("name", "")}" not found'
            set_condition(
                status,
                "AbleToScale",
                "False",
                "FailedGetScale",
                f"the HPA controller was unable to get the target's current scale: {err}",
                now,
            )
            events.append(("Warning", "FailedGetScale", err))
            self._write(hpa, old_status, status, events)
            return
        paths = getattr(rt.strategy, "scale_paths", lambda: None)()
        spec_path = (paths or {}).get("specReplicasPath", ".spec.replicas")
        current = value_at(target, spec_path)
        current = current if isinstance(current, int) else 0
        set_condition(
            status,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
            now,
        )
        mn, mx = spec.get("minReplicas", 1), spec.get("maxReplicas", 0)
        metrics: list | None = None
        desired, reason = current, ""
        if current == 0 and mn != 0:
            desired = 0
            set_condition(
                status,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            )
        elif current > mx:
            desired, reason = mx, "Current number of replicas above Spec.MaxReplicas"
        elif current < mn:
            desired, reason = mn, "Current number of replicas below Spec.MinReplicas"
        else:
            specs = spec.get("metrics") or []
            failures = [metric_error(m) for m in specs]
            if failures:
                metrics = [{"type": ""} for _ in specs]
                cond_reason, inner, _ = failures[0]
                set_condition(
                    status,
                    "ScalingActive",
                    "False",
                    cond_reason,
                    f"the HPA was unable to compute the replica count: {inner}",
                    now,
                )
                events += [("Warning", r, e) for r, e, _ in failures]
                events.append(
                    (
                        "Warning",
                        "FailedComputeMetricsReplicas",
                        f"invalid metrics ({len(failures)} invalid out of {len(specs)}), first error is: {failures[0][2]}",
                    )
                )
                status.update(currentReplicas=current, currentMetrics=metrics)
                status.setdefault("desiredReplicas", 0)
                self._write(hpa, old_status, status, events)
                return
        if desired != current:
            try:
                self.client.update_scale(rt, ns, ref["name"], desired, spec_path)
            except errors.APIError as e:
                set_condition(
                    status,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {e}",
                    now,
                )
                events.append(("Warning", "FailedRescale", f"New size: {desired}; reason: {reason}; error: {e}"))
                self._write(hpa, old_status, status, events)
                return
            set_condition(
                status,
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
                now,
            )
            events.append(("Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}"))
            status["lastScaleTime"] = now
        status.update(currentReplicas=current, desiredReplicas=desired, currentMetrics=metrics)
        self._write(hpa, old_status, status, events)

    def _write(self, hpa: dict, old_status: dict, status: dict, events: list[tuple[str, str, str]]) -> None:
        if status == old_status:
            return
        new = clone(hpa)
        new["status"] = status
        try:
            self.client.update_status(self.hpa_rt, new)
        except errors.APIError as e:
            if e.code in (404, 409):
                return
            raise
        for type_, reason, message in events:
            self._event(hpa, type_, reason, message)


async def start(server: "Server") -> list:
    c = HorizontalPodAutoscalerController(server)
    await c.start()
    return [c]
