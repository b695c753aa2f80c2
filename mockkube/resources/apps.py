"""apps/v1 Deployments and ReplicaSets, with status and scale subresources."""

from __future__ import annotations

from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource
from mockkube.resources import apps_validation, pod_defaults
from mockkube.resources.strategies import SpecStatusStrategy


def _default_template(spec: dict) -> None:
    tpl = spec.get("template")
    if isinstance(tpl, dict):
        pod_defaults.default_pod_spec(tpl.get("spec"))


class WorkloadStrategy(SpecStatusStrategy):
    def validate(self, obj: dict):
        return apps_validation.validate_workload(obj)

    def validate_update(self, new: dict, old: dict):
        return apps_validation.validate_workload_update(new, old)


class DeploymentStrategy(WorkloadStrategy):
    status_keeps_meta = ("annotations",)  # the controller records revisions with status writes
    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strat = spec.setdefault("strategy", {})
        if isinstance(strat, dict):
            strat.setdefault("type", "RollingUpdate")
            if strat["type"] == "RollingUpdate":
                ru = strat.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", "25%")
                    ru.setdefault("maxSurge", "25%")
        _default_template(spec)


class ReplicaSetStrategy(WorkloadStrategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("replicas", 1)
        _default_template(spec)

    def initial_status(self, obj: dict) -> dict:
        return {"replicas": 0}


_SCALE = Subresource("scale", "Scale", group="autoscaling", version="v1")

deployments = REGISTRY.add(ResourceType(
    "apps", "v1", "Deployment", "deployments", namespaced=True, short_names=("deploy",), categories=("all",),
    subresources=(Subresource("status", "Deployment"), _SCALE), strategy=DeploymentStrategy()))

replicasets = REGISTRY.add(ResourceType(
    "apps", "v1", "ReplicaSet", "replicasets", namespaced=True, short_names=("rs",), categories=("all",),
    subresources=(Subresource("status", "ReplicaSet"), _SCALE), strategy=ReplicaSetStrategy(),
    selectable_fields={"status.replicas": lambda o: str((o.get("status") or {}).get("replicas", 0))}))
