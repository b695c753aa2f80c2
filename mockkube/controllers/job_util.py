"""Pure Job logic (upstream pkg/controller/job): completion indexes, the pods a Job creates,
the pod failure policy, and the finishing conditions. No I/O, no clock: ``now`` (epoch
seconds) is passed in.
"""

from __future__ import annotations

from mockkube.controllers import controllerref as cref
from mockkube.machinery import meta
from mockkube.machinery.meta import clone

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"

# condition reasons (batch/v1 types and job_controller.go)
BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
DEADLINE_EXCEEDED = "DeadlineExceeded"
POD_FAILURE_POLICY = "PodFailurePolicy"
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


def pod_index(pod: dict) -> int | None:
    m = pod.get("metadata") or {}
    v = (m.get("annotations") or {}).get(INDEX_ANNOTATION) or (m.get("labels") or {}).get(INDEX_LABEL)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def parse_indexes(text: str | None) -> set[int]:
    """``completedIndexes`` ("1,3-5,7") as a set."""
    out: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return out


def format_indexes(indexes: set[int]) -> str:
    """The compressed interval form upstream writes."""
    out: list[str] = []
    for i in sorted(indexes):
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def job_pod(job: dict, index: int | None) -> dict:
    """The pod for one more completion (or for ``index``): the template, a controller
    reference, the tracking finalizer, and for Indexed jobs the completion index as
    annotation, label, env var and (with a subdomain) hostname."""
    tpl = spec(job).get("template") or {}
    tm = tpl.get("metadata") or {}
    name = job["metadata"]["name"]
    m: dict = {"generateName": f"{name}-{index}-" if index is not None else f"{name}-",
               "namespace": job["metadata"].get("namespace", ""),
               "labels": dict(tm.get("labels") or {}),
               "ownerReferences": [cref.new_controller_ref(job, "batch/v1", "Job")],
               "finalizers": list(tm.get("finalizers") or ()) + [TRACKING_FINALIZER]}
    if tm.get("annotations"):
        m["annotations"] = clone(tm["annotations"])
    pod_spec = clone(tpl.get("spec") or {})
    if index is not None:
        m.setdefault("annotations", {})[INDEX_ANNOTATION] = str(index)
        m["labels"][INDEX_LABEL] = str(index)
        for c in list(pod_spec.get("initContainers") or ()) + list(pod_spec.get("containers") or ()):
            env = [e for e in c.get("env") or () if e.get("name") != INDEX_ENV]
            env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
                "apiVersion": "v1", "fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}}})
            c["env"] = env
        if pod_spec.get("subdomain"):
            pod_spec["hostname"] = f"{name}-{index}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": pod_spec}


def _exit_codes(pod: dict, container: str | None) -> list[int]:
    out = []
    for st in (pod.get("status") or {}).get("containerStatuses") or ():
        if container and st.get("name") != container:
            continue
        term = (st.get("state") or {}).get("terminated")
        if term is not None:
            out.append(int(term.get("exitCode", 0)))
    return out


def _has_condition(pod: dict, type_: str, status: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == status
               for c in (pod.get("status") or {}).get("conditions") or ())


def failure_policy_action(job: dict, pod: dict) -> tuple[str | None, str]:
    """matchPodFailurePolicy: the action of the first rule a failed pod matches
    (FailJob, FailIndex, Ignore, Count) and the message upstream gives it, or (None, "")."""
    pfp = spec(job).get("podFailurePolicy") or {}
    for i, rule in enumerate(pfp.get("rules") or ()):
        action = rule.get("action")
        codes = rule.get("onExitCodes")
        if codes:
            values = set(codes.get("values") or ())
            op = codes.get("operator")
            for code in (c for c in _exit_codes(pod, codes.get("containerName")) if c != 0 or op == "NotIn"):
                if (op == "In" and code in values) or (op == "NotIn" and code not in values):
                    name = next((s.get("name") for s in (pod.get("status") or {}).get("containerStatuses") or ()
                                 if ((s.get("state") or {}).get("terminated") or {}).get("exitCode") == code), "")
                    return action, (f"Container {name} for pod {meta.namespace_of(pod)}/{meta.name_of(pod)} "
                                    f"failed with exit code {code} matching {action} rule at index {i}")
        for pc in rule.get("onPodConditions") or ():
            if _has_condition(pod, pc.get("type", ""), pc.get("status", "True")):
                return action, (f"Pod {meta.namespace_of(pod)}/{meta.name_of(pod)} has condition {pc.get('type')} "
                                f"matching {action} rule at index {i}")
    return None, ""


def condition(type_: str, reason: str, message: str, now: float) -> dict:
    t = meta.rfc3339(now)
    return {"type": type_, "status": "True", "lastProbeTime": t, "lastTransitionTime": t,
            "reason": reason, "message": message}


def finished(job: dict) -> str | None:
    """"Complete" or "Failed" once the Job has that condition."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None
