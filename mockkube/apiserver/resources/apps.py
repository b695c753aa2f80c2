"""apps/v1 Deployments, ReplicaSets, DaemonSets, StatefulSets (status and scale
subresources) and ControllerRevisions."""

from __future__ import annotations

from mockkube.apiserver.resources import apps_validation, feature_drops, pod_defaults
from mockkube.apiserver.resources.strategies import GenerationStrategy, SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource


def _default_template(spec: dict) -> None:
    tpl = spec.get("template")
    if isinstance(tpl, dict):
        pod_defaults.default_pod_spec(tpl.get("spec"))


class WorkloadStrategy(SpecStatusStrategy):
    drop_disabled = staticmethod(feature_drops.pod_template(("spec", "template")))  # DropDisabledTemplateFields
    kind_word = "deployment"  # upstream's "empty selector is invalid for <kind>"

    def validate(self, obj: dict):
        return apps_validation.validate_workload(obj, self.kind_word)

    def validate_update(self, new: dict, old: dict):
        return apps_validation.validate_workload_update(new, old, self.kind_word)


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


class DaemonSetStrategy(SpecStatusStrategy):
    """SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0."""

    drop_disabled = staticmethod(feature_drops.pod_template(("spec", "template")))  # DropDisabledTemplateFields

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("revisionHistoryLimit", 10)
        strat = spec.setdefault("updateStrategy", {})
        if isinstance(strat, dict):
            strat.setdefault("type", "RollingUpdate")
            if strat["type"] == "RollingUpdate":
                ru = strat.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", 1)
                    ru.setdefault("maxSurge", 0)
        _default_template(spec)

    def initial_status(self, obj: dict) -> dict:
        return {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}

    def validate(self, obj: dict):
        return apps_validation.validate_daemonset(obj)

    def validate_update(self, new: dict, old: dict):
        return apps_validation.validate_daemonset_update(new, old)


class StatefulSetStrategy(SpecStatusStrategy):
    """SetDefaults_StatefulSet and the PVC template defaults."""

    drop_disabled = staticmethod(feature_drops.pod_template(("spec", "template")))  # DropDisabledTemplateFields

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        spec.setdefault("revisionHistoryLimit", 10)
        strat = spec.setdefault("updateStrategy", {})
        if isinstance(strat, dict):
            strat.setdefault("type", "RollingUpdate")
            if strat["type"] == "RollingUpdate":
                ru = strat.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("partition", 0)
        pol = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
        if isinstance(pol, dict):
            pol.setdefault("whenDeleted", "Retain")
            pol.setdefault("whenScaled", "Retain")
        for t in spec.get("volumeClaimTemplates") or ():
            if isinstance(t, dict):
                t.setdefault("apiVersion", "v1")
                t.setdefault("kind", "PersistentVolumeClaim")
                ts = t.setdefault("spec", {})
                if isinstance(ts, dict):
                    ts.setdefault("volumeMode", "Filesystem")
                t.setdefault("status", {"phase": "Pending"})
        _default_template(spec)

    def initial_status(self, obj: dict) -> dict:
        return {"replicas": 0, "availableReplicas": 0}

    def validate(self, obj: dict):
        return apps_validation.validate_statefulset(obj)

    def validate_update(self, new: dict, old: dict):
        return apps_validation.validate_statefulset_update(new, old)


class ControllerRevisionStrategy(GenerationStrategy):
    """data and revision are immutable once written (ValidateControllerRevisionUpdate)."""

    tracks_generation = False

    def validate(self, obj: dict):
        errs = []
        rev = obj.get("revision")
        if isinstance(rev, int) and not isinstance(rev, bool) and rev < 0:
            errs.append(fe.invalid("revision", rev, "must be greater than or equal to 0"))
        return errs

    def validate_update(self, new: dict, old: dict):
        errs = self.validate(new)
        if new.get("data") != old.get("data"):
            errs.append(fe.invalid("data", "", "field is immutable"))
        return errs


_SCALE = Subresource("scale", "Scale", group="autoscaling", version="v1")

deployments = REGISTRY.add(
    ResourceType(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        namespaced=True,
        short_names=("deploy",),
        categories=("all",),
        subresources=(Subresource("status", "Deployment"), _SCALE),
        strategy=DeploymentStrategy(),
    )
)

replicasets = REGISTRY.add(
    ResourceType(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        namespaced=True,
        short_names=("rs",),
        categories=("all",),
        subresources=(Subresource("status", "ReplicaSet"), _SCALE),
        strategy=ReplicaSetStrategy(),
        selectable_fields={"status.replicas": lambda o: str((o.get("status") or {}).get("replicas", 0))},
    )
)

daemonsets = REGISTRY.add(
    ResourceType(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        namespaced=True,
        short_names=("ds",),
        categories=("all",),
        subresources=(Subresource("status", "DaemonSet"),),
        strategy=DaemonSetStrategy(),
    )
)

statefulsets = REGISTRY.add(
    ResourceType(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        namespaced=True,
        short_names=("sts",),
        categories=("all",),
        subresources=(Subresource("status", "StatefulSet"), _SCALE),
        strategy=StatefulSetStrategy(),
    )
)

controllerrevisions = REGISTRY.add(
    ResourceType(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        namespaced=True,
        strategy=ControllerRevisionStrategy(),
    )
)
