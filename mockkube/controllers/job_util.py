"""Pure Job logic (upstream pkg/controller/job): completion indexes and their interval
strings, the pods a Job creates, which pods count as failed, the pod failure policy, the
success policy, the per-index failure counts of ``backoffLimitPerIndex``, pod back-off and
the finishing conditions. No I/O, no clock: ``now`` (epoch seconds) is passed in.
"""

from __future__ import annotations

from mockkube.controllers import controllerref as cref
from mockkube.machinery import meta
from mockkube.machinery.meta import clone

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
INDEX_IGNORED_FAILURE_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
INDEX_ENV = "JOB_COMPLETION_INDEX"
MAX_GENERATED_NAME = 58  # names.MaxGeneratedNameLength
MAX_UNCOUNTED_PODS = 500  # MaxUncountedPods
BACKOFF_BASE, BACKOFF_MAX = 10.0, 360.0  # DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff

# condition reasons (batch/v1 types and job_controller.go)
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
DEADLINE_EXCEEDED = "DeadlineExceeded"
POD_FAILURE_POLICY = "PodFailurePolicy"
FAILED_INDEXES = "FailedIndexes"
MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
COMPLETIONS_REACHED = "CompletionsReached"
SUCCESS_POLICY = "SuccessPolicy"
JOB_SUSPENDED = "JobSuspended"
JOB_RESUMED = "JobResumed"


def spec(job: dict) -> dict:
    return job.get("spec") or {}


def is_indexed(job: dict) -> bool:
    return spec(job).get("completionMode") == "Indexed"


def completions(job: dict) -> int | None:
    v = spec(job).get("completions")
    return None if v is None else int(v)


def parallelism(job: dict) -> int:
    v = spec(job).get("parallelism")
    return 1 if v is None else int(v)


def has_backoff_limit_per_index(job: dict) -> bool:
    return spec(job).get("backoffLimitPerIndex") is not None


def suspended(job: dict) -> bool:
    return bool(spec(job).get("suspend"))


def only_replace_failed(job: dict) -> bool:
    """onlyReplaceFailedPods: terminating pods are not replaced until they have failed."""
    return spec(job).get("podReplacementPolicy") == "Failed" or spec(job).get("podFailurePolicy") is not None


# --- pods -------------------------------------------------------------------------------


def phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def tracked(pod: dict) -> bool:
    return TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or ())


def is_pod_failed(pod: dict, job: dict) -> bool:
    """isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it
    succeeded - an orphan that never reaches a terminal phase is still a failure."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed(job):
        return False
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and phase(pod) != "Succeeded"


def pod_index(pod: dict) -> int | None:
    """getCompletionIndex: the annotation, a non-negative integer, or None."""
    v = ((pod.get("metadata") or {}).get("annotations") or {}).get(INDEX_ANNOTATION)
    try:
        i = int(v) if v is not None else -1
    except ValueError:
        return None
    return i if i >= 0 else None


def valid_index(job: dict, pod: dict) -> bool:
    i = pod_index(pod)
    return i is not None and i < (completions(job) or 0)


def _int_annotation(pod: dict, key: str) -> int:
    v = ((pod.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        i = int(v) if v is not None else 0
    except ValueError:
        return 0
    return i if 0 <= i <= 2**31 - 1 else 0


def index_failure_count(pod: dict) -> int:
    return _int_annotation(pod, INDEX_FAILURE_COUNT)


def index_absolute_failure_count(pod: dict) -> int:
    return _int_annotation(pod, INDEX_FAILURE_COUNT) + _int_annotation(pod, INDEX_IGNORED_FAILURE_COUNT)


def finished_time(pod: dict) -> float:
    """getFinishedTime: the last container's finish, else the Ready=False transition,
    else deletionTimestamp minus the grace period, else the creation time."""
    st = pod.get("status") or {}
    ends: list[float] = []
    statuses = st.get("containerStatuses") or ()
    for c in statuses:
        t = ((c.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if not t:
            ends = []
            break
        ends.append(meta.parse_time(t))
    if ends:
        return max(ends)
    for c in st.get("conditions") or ():
        if c.get("type") == "Ready" and c.get("status") == "False" and c.get("lastTransitionTime"):
            return meta.parse_time(c["lastTransitionTime"])
    m = pod.get("metadata") or {}
    if m.get("deletionTimestamp"):
        return meta.parse_time(m["deletionTimestamp"]) - float(m.get("deletionGracePeriodSeconds") or 0)
    return meta.parse_time(m["creationTimestamp"]) if m.get("creationTimestamp") else 0.0


# --- intervals ("1,3-5,7") --------------------------------------------------------------


def parse_indexes(text: str | None, limit: int | None = None) -> set[int]:
    """``completedIndexes`` / ``failedIndexes`` as a set; like parseIndexesFromString,
    indexes at or above ``limit`` (the completions) are dropped and bad parts skipped."""
    out: set[int] = set()
    for part in (text or "").split(","):
        first, _, last = part.strip().partition("-")
        try:
            a = int(first)
            b = int(last) if last else a
        except ValueError:
            continue
        if limit is not None:
            if a >= limit:
                break
            b = min(b, limit - 1)
        out.update(range(a, b + 1))
    return out


def format_indexes(indexes: set[int] | list[int]) -> str:
    """orderedIntervals.String: runs of three or more as ``a-b``, a pair as ``a,b``."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    out = []
    for a, b in runs:
        out.append(str(a) if a == b else f"{a},{b}" if b == a + 1 else f"{a}-{b}")
    return ",".join(out)


# --- the pods a Job creates -------------------------------------------------------------


def generate_name(job_name: str, index: int | None) -> str:
    """podGenerateNameWithIndex (the default generateName is ``<job>-``)."""
    if index is None:
        return f"{job_name}-"
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME:
        prefix = prefix[: MAX_GENERATED_NAME - len(suffix)] + suffix
    return prefix


def job_pod(job: dict, index: int | None, replaced: dict | None = None) -> dict:
    """The pod for one more completion (or for ``index``): the template, a controller
    reference, the tracking finalizer, and for Indexed jobs the completion index as
    annotation, label, env var and hostname; with ``backoffLimitPerIndex`` the failure
    counts carried over from the pod it replaces."""
    tpl = spec(job).get("template") or {}
    tm = tpl.get("metadata") or {}
    name = job["metadata"]["name"]
    finalizers = list(tm.get("finalizers") or ())
    if TRACKING_FINALIZER not in finalizers:
        finalizers.append(TRACKING_FINALIZER)
    m: dict = {
        "generateName": generate_name(name, index),
        "namespace": job["metadata"].get("namespace", ""),
        "labels": dict(tm.get("labels") or {}),
        "ownerReferences": [cref.new_controller_ref(job, "batch/v1", "Job")],
        "finalizers": finalizers,
    }
    if tm.get("annotations"):
        m["annotations"] = clone(tm["annotations"])
    pod_spec = clone(tpl.get("spec") or {})
    if index is not None:
        anns = m.setdefault("annotations", {})
        anns[INDEX_ANNOTATION] = str(index)
        m["labels"][INDEX_LABEL] = str(index)
        for c in list(pod_spec.get("initContainers") or ()) + list(pod_spec.get("containers") or ()):
            if not any(e.get("name") == INDEX_ENV for e in c.get("env") or ()):
                c["env"] = list(c.get("env") or ()) + [
                    {"name": INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX_LABEL}']"}}}
                ]
        pod_spec["hostname"] = f"{name}-{index}"
        if has_backoff_limit_per_index(job):
            failed, ignored = new_index_failure_counts(job, replaced)
            anns[INDEX_FAILURE_COUNT] = str(failed)
            if ignored > 0:
                anns[INDEX_IGNORED_FAILURE_COUNT] = str(ignored)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": pod_spec}


def new_index_failure_counts(job: dict, replaced: dict | None) -> tuple[int, int]:
    """getNewIndexFailureCounts: the replaced pod's counts plus its own failure."""
    if replaced is None:
        return 0, 0
    failed, ignored = index_failure_count(replaced), _int_annotation(replaced, INDEX_IGNORED_FAILURE_COUNT)
    if failure_policy_match(job, replaced)[1]:
        failed += 1
    else:
        ignored += 1
    return failed, ignored


def first_pending_indexes(job: dict, count: int, taken: set[int]) -> list[int]:
    """firstPendingIndexes: the lowest ``count`` indexes not in ``taken`` (succeeded,
    failed, active and, when only failed pods are replaced, terminating)."""
    out: list[int] = []
    for i in range(completions(job) or 0):
        if len(out) >= count:
            break
        if i not in taken:
            out.append(i)
    return out


# --- pod failure policy -----------------------------------------------------------------


def _matching_exit(pod: dict, req: dict) -> dict | None:
    st = pod.get("status") or {}
    for statuses in (st.get("containerStatuses") or (), st.get("initContainerStatuses") or ()):
        for cs in statuses:
            term = (cs.get("state") or {}).get("terminated")
            if term is None:
                continue
            if req.get("containerName") and req["containerName"] != cs.get("name"):
                continue
            code = int(term.get("exitCode", 0))
            if code == 0:
                continue
            values = set(req.get("values") or ())
            op = req.get("operator")
            if (op == "In" and code in values) or (op == "NotIn" and code not in values):
                return cs
    return None


def _matching_condition(pod: dict, patterns: list[dict]) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        for p in patterns:
            if c.get("type") == p.get("type") and c.get("status") == p.get("status", "True"):
                return c
    return None


def failure_policy_match(job: dict, pod: dict) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy: (the FailJob message, whether the failure counts against
    the back-off limits, the matched action) for a failed pod."""
    pfp = spec(job).get("podFailurePolicy")
    if not pfp:
        return None, True, None
    ns, name = meta.namespace_of(pod), meta.name_of(pod)
    for i, rule in enumerate(pfp.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            cs = _matching_exit(pod, rule["onExitCodes"])
            if cs is None:
                continue
            if action == "FailJob":
                code = cs["state"]["terminated"].get("exitCode", 0)
                return (
                    (
                        f"Container {cs.get('name')} for pod {ns}/{name} failed with exit code {code} "
                        f"matching {action} rule at index {i}"
                    ),
                    True,
                    action,
                )
        elif rule.get("onPodConditions") is not None:
            c = _matching_condition(pod, rule["onPodConditions"])
            if c is None:
                continue
            if action == "FailJob":
                return (
                    f"Pod {ns}/{name} has condition {c.get('type')} matching {action} rule at index {i}",
                    True,
                    action,
                )
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action in ("Count", "FailIndex"):
            return None, True, action
    return None, True, None


def is_index_failed(job: dict, pod: dict) -> bool:
    """isIndexFailed: a FailIndex rule matched, or the index used up backoffLimitPerIndex."""
    counted = False
    if is_pod_failed(pod, job):
        _, counted, action = failure_policy_match(job, pod)
        if action == "FailIndex":
            return True
    return counted and index_failure_count(pod) >= int(spec(job).get("backoffLimitPerIndex") or 0)


# --- success policy ---------------------------------------------------------------------


def match_success_policy(job: dict, succeeded: set[int]) -> str | None:
    """matchSuccessPolicy: "Matched rules at index N" for the first rule the succeeded
    indexes satisfy, else None."""
    policy = spec(job).get("successPolicy")
    if not policy or not succeeded:
        return None
    n = completions(job) or 0
    for i, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], n)
            if not required:
                continue
            have = len(required & succeeded)
            if have == len(required) or (count is not None and have >= int(count)):
                return f"Matched rules at index {i}"
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {i}"
    return None


# --- back-off ---------------------------------------------------------------------------


def remaining_backoff(failures: int, last_failure: float | None, now: float) -> float:
    """getRemainingTimeForFailuresCount: 10 s doubling per failure, capped at 6 min,
    counted from the last failure."""
    if failures <= 0 or last_failure is None:
        return 0.0
    delay = BACKOFF_BASE
    for _ in range(1, failures):
        delay *= 2
        if delay >= BACKOFF_MAX:
            delay = BACKOFF_MAX
            break
    elapsed = now - last_failure
    return 0.0 if delay < elapsed else delay - elapsed


def next_backoff_record(
    record: tuple[int, float | None], succeeded: list[dict], failed: list[dict]
) -> tuple[int, float | None]:
    """newBackoffRecord: (failures after the last success, the last failure's time)."""
    failures, last = record
    s_times = sorted(finished_time(p) for p in succeeded)
    f_times = sorted(finished_time(p) for p in failed)
    if not s_times:
        if not f_times:
            return failures, last
        return failures + len(f_times), f_times[-1]
    failures, last = 0, None
    for t in reversed(f_times):
        if t <= s_times[-1]:
            break
        if last is None:
            last = t
        failures += 1
    return failures, last


def past_backoff_limit_on_failure(job: dict, pods: list[dict]) -> bool:
    """pastBackoffLimitOnFailure: restartPolicy OnFailure restarts count against backoffLimit."""
    if ((spec(job).get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for p in pods:
        if phase(p) in ("Running", "Pending"):
            st = p.get("status") or {}
            for cs in list(st.get("initContainerStatuses") or ()) + list(st.get("containerStatuses") or ()):
                restarts += int(cs.get("restartCount") or 0)
    limit = int(spec(job).get("backoffLimit") or 0)
    return restarts > 0 if limit == 0 else restarts >= limit


# --- conditions -------------------------------------------------------------------------


def condition(type_: str, reason: str, message: str, now: float, status: str = "True") -> dict:
    t = meta.rfc3339(now)
    return {
        "type": type_,
        "status": status,
        "lastProbeTime": t,
        "lastTransitionTime": t,
        "reason": reason,
        "message": message,
    }


def find_condition(status: dict, type_: str) -> dict | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == type_), None)


def ensure_condition(status: dict, type_: str, cond_status: str, reason: str, message: str, now: float) -> bool:
    """ensureJobConditionStatus: set or update a condition (never add a False one);
    returns whether the list changed."""
    cur = find_condition(status, type_)
    if cur is not None:
        if (cur.get("status"), cur.get("reason", ""), cur.get("message", "")) != (cond_status, reason, message):
            cur.clear()
            cur.update(condition(type_, reason, message, now, cond_status))
            return True
        return False
    if cond_status != "False":
        status.setdefault("conditions", []).append(condition(type_, reason, message, now, cond_status))
        return True
    return False


def finished(job: dict) -> str | None:
    """ "Complete" or "Failed" once the Job has that condition."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None


def finish_time(job: dict) -> float | None:
    """When the Job got its Complete or Failed condition (the TTL counts from there)."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True" and c.get("lastTransitionTime"):
            return meta.parse_time(c["lastTransitionTime"])
    return None
