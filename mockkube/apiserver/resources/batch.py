"""batch/v1: Jobs and CronJobs, with status subresources."""

from __future__ import annotations

from mockkube.apiserver.resources import batch_validation, feature_drops, pod_defaults
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource

CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"


def default_job_spec(spec: dict) -> None:
    """SetDefaults_Job (and the template's pod defaults)."""
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    pfp = spec.get("podFailurePolicy")
    if isinstance(pfp, dict):
        for r in pfp.get("rules") or ():
            for c in (r or {}).get("onPodConditions") or ():
                if isinstance(c, dict):
                    c.setdefault("status", "True")
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if pfp is not None else "TerminatingOrFailed"
    tpl = spec.get("template")
    if isinstance(tpl, dict):
        pod_defaults.default_pod_spec(tpl.get("spec"))


class JobStrategy(SpecStatusStrategy):
    drop_disabled = staticmethod(feature_drops.pod_template(("spec", "template")))  # DropDisabledTemplateFields

    def default(self, obj: dict, now: str | None = None) -> None:
        default_job_spec(obj.get("spec"))

    def initial_status(self, obj: dict) -> dict:
        return {}

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("manualSelector"):
            generate_selector(obj)

    def validate(self, obj: dict):
        return batch_validation.validate_job(obj)

    def validate_update(self, new: dict, old: dict):
        return batch_validation.validate_job_update(new, old)


def generate_selector(job: dict) -> None:
    """The Job strategy's generateSelector: the template gets the controller-uid and
    job-name labels (new and legacy keys), the selector matches the uid."""
    m = job["metadata"]
    spec = job["spec"]
    tpl = spec.setdefault("template", {})
    if not isinstance(tpl, dict):
        return
    tm = tpl.setdefault("metadata", {})
    labels = dict(tm.get("labels") or {})
    uid, name = m.get("uid", ""), m.get("name", "")
    for k, v in ((CONTROLLER_UID, uid), (JOB_NAME, name), (LEGACY_CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name)):
        labels.setdefault(k, v)
    tm["labels"] = labels
    if not spec.get("selector"):
        spec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}


class CronJobStrategy(SpecStatusStrategy):
    drop_disabled = staticmethod(
        feature_drops.pod_template(("spec", "jobTemplate", "spec", "template"))
    )  # DropDisabledTemplateFields

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        jt = spec.get("jobTemplate")
        if isinstance(jt, dict) and isinstance(jt.get("spec"), dict):
            tpl = jt["spec"].get("template")
            if isinstance(tpl, dict):
                pod_defaults.default_pod_spec(tpl.get("spec"))

    def initial_status(self, obj: dict) -> dict:
        return {}

    def validate(self, obj: dict):
        return batch_validation.validate_cronjob(obj)


jobs = REGISTRY.add(
    ResourceType(
        "batch",
        "v1",
        "Job",
        "jobs",
        namespaced=True,
        categories=("all",),
        subresources=(Subresource("status", "Job"),),
        strategy=JobStrategy(),
        selectable_fields={"status.successful": lambda o: str((o.get("status") or {}).get("succeeded", 0))},
    )
)

cronjobs = REGISTRY.add(
    ResourceType(
        "batch",
        "v1",
        "CronJob",
        "cronjobs",
        namespaced=True,
        short_names=("cj",),
        categories=("all",),
        subresources=(Subresource("status", "CronJob"),),
        strategy=CronJobStrategy(),
    )
)
