"""batch/v1 validation a client notices (pkg/apis/batch/validation): Job counts and modes,
restart policies, pod failure policies, immutable fields; CronJob schedules (parsed by
croniter, as robfig/cron parses them upstream), time zones and policies."""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.resources.apps_validation import non_negative, validate_selector
from mockkube.machinery import fielderrors as fe

_POLICY_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
_OPERATORS = ["In", "NotIn"]
CRONJOB_NAME_MAX = 52  # 63 minus the 11 characters of a scheduled Job's suffix


def _pos(errs: list[fe.FieldError], spec: dict, field: str, path: str) -> None:
    v = spec.get(field)
    if isinstance(v, int) and not isinstance(v, bool) and v <= 0:
        errs.append(fe.invalid(f"{path}.{field}", v, "must be greater than 0"))


def validate_job_spec(spec: Any, path: str = "spec", require_selector: bool = True) -> list[fe.FieldError]:
    if not isinstance(spec, dict):
        return [fe.required(path)]
    errs: list[fe.FieldError] = []
    for f in (
        "parallelism",
        "completions",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ):
        non_negative(errs, spec, f, path)
    _pos(errs, spec, "activeDeadlineSeconds", path)
    if require_selector or spec.get("selector"):
        errs += validate_selector(spec, "job", path)
    mode = spec.get("completionMode")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(fe.not_supported(f"{path}.completionMode", mode, ["NonIndexed", "Indexed"]))
    if mode == "Indexed":
        if spec.get("completions") is None:
            errs.append(fe.required(f"{path}.completions", "when completion mode is Indexed"))
        elif isinstance(spec.get("completions"), int) and spec["completions"] > 10**5:
            errs.append(
                fe.invalid(
                    f"{path}.completions",
                    spec["completions"],
                    "must be less than or equal to 100000 when completion mode is Indexed",
                )
            )
    elif spec.get("backoffLimitPerIndex") is not None:
        errs.append(
            fe.required(
                f"{path}.completionMode", "when backoffLimitPerIndex is specified, completionMode must be Indexed"
            )
        )
    pspec = (spec.get("template") or {}).get("spec") or {}
    rp = pspec.get("restartPolicy")
    if rp not in ("OnFailure", "Never"):
        errs.append(fe.not_supported(f"{path}.template.spec.restartPolicy", rp, ["OnFailure", "Never"]))
    pfp = spec.get("podFailurePolicy")
    if pfp is not None:
        if rp != "Never":
            errs.append(
                fe.invalid(
                    f"{path}.template.spec.restartPolicy",
                    rp,
                    'only "Never" is supported when podFailurePolicy is specified',
                )
            )
        rules = (pfp or {}).get("rules") or []
        if len(rules) > 20:
            errs.append(fe.too_many(f"{path}.podFailurePolicy.rules", len(rules), 20))
        for i, r in enumerate(rules):
            rp_ = f"{path}.podFailurePolicy.rules[{i}]"
            act = (r or {}).get("action")
            if act not in _POLICY_ACTIONS:
                errs.append(fe.not_supported(f"{rp_}.action", act, _POLICY_ACTIONS))
            has_codes, has_conds = r.get("onExitCodes") is not None, bool(r.get("onPodConditions"))
            if has_codes == has_conds:
                errs.append(fe.invalid(rp_, r, "specifying one of OnExitCodes and OnPodConditions is required"))
            codes = r.get("onExitCodes") or {}
            if has_codes:
                if codes.get("operator") not in _OPERATORS:
                    errs.append(fe.not_supported(f"{rp_}.onExitCodes.operator", codes.get("operator"), _OPERATORS))
                vals = codes.get("values") or []
                if not vals:
                    errs.append(fe.invalid(f"{rp_}.onExitCodes.values", vals, "at least one value is required"))
                if codes.get("operator") == "In" and 0 in vals:
                    errs.append(
                        fe.invalid(f"{rp_}.onExitCodes.values[{vals.index(0)}]", 0, "must not be 0 for the In operator")
                    )
    return errs


def validate_job(obj: dict) -> list[fe.FieldError]:
    return validate_job_spec(obj.get("spec"))


_JOB_IMMUTABLE = ("selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "manualSelector")


def validate_job_update(new: dict, old: dict) -> list[fe.FieldError]:
    errs = validate_job(new)
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    for k in _JOB_IMMUTABLE:
        if ns.get(k) != os_.get(k):
            errs.append(fe.invalid(f"spec.{k}", ns.get(k), "field is immutable"))
    elastic = ns.get("completionMode") == "Indexed" and ns.get("completions") == ns.get("parallelism")
    if ns.get("completions") != os_.get("completions") and not elastic:
        errs.append(fe.invalid("spec.completions", ns.get("completions"), "field is immutable"))
    if ns.get("template") != os_.get("template"):
        # a suspended Job that never started may change its pods' scheduling directives
        never_started = not ((old.get("status") or {}).get("startTime"))
        mutable = ("nodeSelector", "tolerations", "affinity", "schedulingGates")
        nt = {k: v for k, v in ((ns.get("template") or {}).get("spec") or {}).items() if k not in mutable}
        ot = {k: v for k, v in ((os_.get("template") or {}).get("spec") or {}).items() if k not in mutable}
        same_meta = (ns.get("template") or {}).get("metadata") == (os_.get("template") or {}).get("metadata")
        if not (os_.get("suspend") and never_started and nt == ot and same_meta):
            errs.append(fe.invalid("spec.template", ns.get("template"), "field is immutable"))
    return errs


def validate_schedule(schedule: Any, tz: Any, path: str = "spec") -> list[fe.FieldError]:
    from mockkube.machinery import cron as cronjob_schedule

    errs: list[fe.FieldError] = []
    if not schedule:
        return [fe.required(f"{path}.schedule")]
    if tz is not None and ("TZ=" in schedule or "CRON_TZ=" in schedule):
        errs.append(
            fe.invalid(f"{path}.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")
        )
    problem = cronjob_schedule.parse_error(schedule)
    if problem:
        errs.append(fe.invalid(f"{path}.schedule", schedule, problem))
    if tz is not None:
        if not isinstance(tz, str) or not cronjob_schedule.valid_timezone(tz):
            errs.append(fe.invalid(f"{path}.timeZone", tz, f"unknown time zone {tz}"))
    return errs


def validate_cronjob(obj: dict) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    name = (obj.get("metadata") or {}).get("name") or ""
    if len(name) > CRONJOB_NAME_MAX:
        errs.append(fe.invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return errs + [fe.required("spec")]
    errs += validate_schedule(spec.get("schedule"), spec.get("timeZone"))
    cp = spec.get("concurrencyPolicy")
    if cp not in ("Allow", "Forbid", "Replace"):
        errs.append(fe.not_supported("spec.concurrencyPolicy", cp, ["Allow", "Forbid", "Replace"]))
    for f in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        non_negative(errs, spec, f, "spec")
    jt = spec.get("jobTemplate")
    if not isinstance(jt, dict):
        return errs + [fe.required("spec.jobTemplate")]
    jspec = jt.get("spec")
    errs += validate_job_spec(jspec, "spec.jobTemplate.spec", require_selector=False)
    return errs
