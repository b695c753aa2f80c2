"""Pod lifecycle as a pure function of time: given a pod, when its sandbox became ready
and ``now``, what its status is (phase, conditions, container statuses) and when it
changes next. Container behaviour comes from annotations (docs/profiles.md):

- ``mockkube.io/exit-after[.<container>]``: the container exits after this duration, or
  ``never`` (default: init containers finish at once; main containers of a pod whose
  restartPolicy is Never or OnFailure - a Job's - exit 0 after the kubelet profile's
  ``runToCompletion``, 1 s unless set; those of restartPolicy Always pods run forever);
- ``mockkube.io/exit-code[.<container>]``: its exit code (default 0);
- ``mockkube.io/fail-start[.<container>]``: it never starts; the value is the waiting
  reason ("true" means CreateContainerError);
- ``mockkube.io/ready-after[.<container>]``: it becomes ready this long after starting;
- ``mockkube.io/log[.<container>]``: the text the container "prints" (``kubectl logs``);
- ``mockkube.io/termination-delay``: on deletion its containers take this long to stop
  (capped by the grace period; default 0).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mockkube.machinery import meta
from mockkube.machinery.durations import parse_duration

PREFIX = "mockkube.io/"


@dataclass
class Behaviour:
    exit_after: float | None
    exit_code: int
    fail_start: str | None
    ready_after: float


def annotation(pod: dict, key: str, container: str) -> str | None:
    """``mockkube.io/<key>.<container>``, else ``mockkube.io/<key>``, else None."""
    anns = (pod.get("metadata") or {}).get("annotations") or {}
    v = anns.get(f"{PREFIX}{key}.{container}")
    return v if v is not None else anns.get(PREFIX + key)


DEFAULT_RUN_TO_COMPLETION = 1.0  # seconds a Never/OnFailure pod's container runs by default


def behaviour(
    pod: dict, container: str, init: bool = False, run_to_completion: float | None = DEFAULT_RUN_TO_COMPLETION
) -> Behaviour:
    exit_after = annotation(pod, "exit-after", container)
    if exit_after is None and not init and (pod.get("spec") or {}).get("restartPolicy") in ("Never", "OnFailure"):
        exit_after = run_to_completion
    elif isinstance(exit_after, str) and exit_after.strip().lower() == "never":
        exit_after = None
    fail = annotation(pod, "fail-start", container)
    if fail is not None and fail.lower() in ("true", "1", "yes", ""):
        fail = "CreateContainerError"
    if fail is not None and fail.lower() in ("false", "0", "no"):
        fail = None
    return Behaviour(
        exit_after=(
            parse_duration(exit_after)
            if exit_after is not None
            else (0.0 if init and annotation(pod, "exit-after", container) is None else None)
        ),
        exit_code=int(annotation(pod, "exit-code", container) or 0),
        fail_start=fail,
        ready_after=parse_duration(annotation(pod, "ready-after", container) or 0),
    )


def termination_delay(pod: dict) -> float:
    v = ((pod.get("metadata") or {}).get("annotations") or {}).get(PREFIX + "termination-delay")
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    d = parse_duration(v) if v else 0.0
    return min(d, float(grace)) if grace is not None else d


def normalize_image(image: str) -> str:
    name = image or "busybox"
    if "@" not in name and ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = "docker.io/library/" + name
    elif "." not in first and ":" not in first and first != "localhost":
        name = "docker.io/" + name
    return name


def image_id(image: str) -> str:
    norm = normalize_image(image)
    repo = norm.split("@", 1)[0].rsplit(":", 1)[0] if "@" not in norm else norm.split("@", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(norm.encode()).hexdigest()}"


def container_id(pod_uid: str, name: str, restart: int) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restart}".encode()).hexdigest()


class _Wake:
    def __init__(self, now: float) -> None:
        self.now = now
        self.at: float | None = None

    def at_time(self, t: float) -> None:
        if t > self.now and (self.at is None or t < self.at):
            self.at = t


def _base(pod: dict, c: dict) -> dict:
    return {
        "name": c["name"],
        "image": c.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "lastState": {},
    }


def _run(
    pod: dict, c: dict, b: Behaviour, start: float, now: float, restart_policy: str, wake: _Wake, sidecar: bool = False
) -> tuple[dict, str, float | None]:
    """One container from ``start``: (status, one of waiting/running/terminated/crashloop, done time)."""
    uid = pod["metadata"].get("uid", "")
    st = _base(pod, c)
    if b.fail_start:
        st["state"] = {
            "waiting": {"reason": b.fail_start, "message": f"simulated start failure of container {c['name']}"}
        }
        return st, "waiting", None
    st["imageID"] = image_id(c.get("image", ""))
    st["image"] = normalize_image(c.get("image", ""))
    st["containerID"] = container_id(uid, c["name"], 0)
    started = meta.rfc3339(start)
    end = start + b.exit_after if b.exit_after is not None else None
    if end is None or now < end:
        if end is not None:
            wake.at_time(end)
        st["started"] = True
        st["state"] = {"running": {"startedAt": started}}
        ready_at = start + b.ready_after
        st["ready"] = now >= ready_at
        wake.at_time(ready_at)
        return st, "running", None
    term = {
        "exitCode": b.exit_code,
        "reason": "Completed" if b.exit_code == 0 else "Error",
        "startedAt": started,
        "finishedAt": meta.rfc3339(end),
        "containerID": st["containerID"],
    }
    restarts = restart_policy == "Always" or (restart_policy == "OnFailure" and b.exit_code != 0) or sidecar
    if restarts:
        st["restartCount"] = 1
        st["lastState"] = {"terminated": term}
        st["state"] = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off 10s restarting failed container={c['name']} "
                f"pod={pod['metadata'].get('name')}_{pod['metadata'].get('namespace')}"
                f"({uid})",
            }
        }
        st["containerID"] = container_id(uid, c["name"], 1)
        return st, "crashloop", None
    st["state"] = {"terminated": term}
    return st, "terminated", end


def compute_status(
    pod: dict,
    sandbox_at: float,
    now: float,
    pod_ip: str,
    host_ip: str,
    run_to_completion: float | None = DEFAULT_RUN_TO_COMPLETION,
) -> tuple[dict, float | None]:
    """Status fields the kubelet reports at ``now``, and the next time they change."""
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy", "Always")
    wake = _Wake(now)
    t = sandbox_at
    init_statuses: list[dict] = []
    initialized = True
    init_failed = False
    running_sidecars: list[dict] = []
    for c in spec.get("initContainers") or ():
        if not initialized:
            init_statuses.append(dict(_base(pod, c), state={"waiting": {"reason": "PodInitializing"}}))
            continue
        sidecar = c.get("restartPolicy") == "Always"
        b = behaviour(pod, c["name"], init=not sidecar, run_to_completion=None)  # sidecars run on
        init_policy = "Never" if policy == "Never" else "OnFailure"  # init containers restart only on failure
        st, state, end = _run(pod, c, b, t, now, init_policy, wake, sidecar=sidecar)
        init_statuses.append(st)
        if sidecar:
            if state == "running":
                running_sidecars.append(st)
            else:
                initialized = False
            continue
        if state == "terminated" and st["state"]["terminated"]["exitCode"] == 0:
            t = end
            continue
        initialized = False
        if state == "terminated":
            init_failed = True  # restartPolicy Never: the pod fails
    main_statuses: list[dict] = []
    states: list[str] = []
    for c in spec.get("containers") or ():
        if not initialized:
            main_statuses.append(dict(_base(pod, c), state={"waiting": {"reason": "PodInitializing"}}))
            states.append("pending")
            continue
        st, state, _ = _run(
            pod, c, behaviour(pod, c["name"], run_to_completion=run_to_completion), t, now, policy, wake
        )
        main_statuses.append(st)
        states.append(state)

    if init_failed:
        phase = "Failed"
    elif not initialized:
        phase = "Pending"
    elif states and all(s == "terminated" for s in states):
        codes = [st["state"]["terminated"]["exitCode"] for st in main_statuses]
        phase = "Succeeded" if all(code == 0 for code in codes) else "Failed"
    elif any(s in ("running", "crashloop") for s in states) or any(s == "terminated" for s in states):
        phase = "Running"
    else:
        phase = "Pending"

    terminal = phase in ("Succeeded", "Failed")
    all_ready = initialized and bool(main_statuses) and all(s["ready"] for s in main_statuses)
    not_ready = [s["name"] for s in main_statuses if not s["ready"]]
    conds = [
        {"type": "PodReadyToStartContainers", "status": "False" if terminal else "True"},
        _cond(
            "Initialized",
            initialized or terminal,
            "ContainersNotInitialized",
            "containers with incomplete status: ["
            + " ".join(s["name"] for s in init_statuses if "terminated" not in s["state"] and not s.get("started"))
            + "]",
        ),
        _ready_cond("ContainersReady", all_ready, terminal, not_ready),
        _ready_cond("Ready", all_ready, terminal, not_ready),
    ]
    if terminal:
        for s in main_statuses + init_statuses:
            s["ready"] = False
    status = {
        "phase": phase,
        "conditions": conds,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "containerStatuses": main_statuses,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    return status, (None if terminal else wake.at)


def _cond(typ: str, ok: bool, reason: str, message: str) -> dict:
    c = {"type": typ, "status": "True" if ok else "False"}
    if not ok:
        c.update(reason=reason, message=message)
    return c


def _ready_cond(typ: str, ready: bool, terminal: bool, not_ready: list[str]) -> dict:
    if ready and not terminal:
        return {"type": typ, "status": "True"}
    if terminal:
        return {"type": typ, "status": "False", "reason": "PodCompleted"}
    return {
        "type": typ,
        "status": "False",
        "reason": "ContainersNotReady",
        "message": f"containers with unready status: [{' '.join(not_ready)}]",
    }


def pending_status(pod: dict, host_ip: str, reason: str = "ContainerCreating") -> dict:
    """Before the sandbox exists (e.g. waiting for DRA claims to be prepared)."""
    spec = pod.get("spec") or {}
    first_init = bool(spec.get("initContainers"))
    st = {
        "phase": "Pending",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "False"},
            _cond(
                "Initialized",
                not first_init,
                "ContainersNotInitialized",
                "containers with incomplete status: ["
                + " ".join(c["name"] for c in spec.get("initContainers") or ())
                + "]",
            ),
            _ready_cond("ContainersReady", False, False, [c["name"] for c in spec.get("containers") or ()]),
            _ready_cond("Ready", False, False, [c["name"] for c in spec.get("containers") or ()]),
        ],
        "containerStatuses": [
            dict(_base(pod, c), state={"waiting": {"reason": reason if not first_init else "PodInitializing"}})
            for c in spec.get("containers") or ()
        ],
    }
    if first_init:
        st["initContainerStatuses"] = [
            dict(_base(pod, c), state={"waiting": {"reason": reason}}) for c in spec["initContainers"]
        ]
    return st


def merge_conditions(old: list[dict] | None, new: list[dict], now: float) -> list[dict]:
    """Keep other writers' conditions (PodScheduled, DisruptionTarget...) and transition
    times of conditions whose status did not change."""
    ts = meta.rfc3339(now)
    prev = {c.get("type"): c for c in old or ()}
    mine = {c["type"] for c in new}
    out = [c for c in old or () if c.get("type") not in mine]
    for c in new:
        o = prev.get(c["type"])
        c = dict(c, lastProbeTime=None)
        c["lastTransitionTime"] = (
            o["lastTransitionTime"] if o and o.get("status") == c["status"] and o.get("lastTransitionTime") else ts
        )
        out.append(c)
    order = {"PodReadyToStartContainers": 0, "Initialized": 1, "Ready": 2, "ContainersReady": 3, "PodScheduled": 4}
    return sorted(out, key=lambda c: order.get(c.get("type"), 5))


def terminating_status(pod: dict, now: float, stopped: bool) -> dict:
    """A simulated pod being deleted, as the kubelet reports it: its containers not ready
    (Ready and ContainersReady False) during the grace period, then (``stopped``) terminated
    with exit code 0 (a simulated process ends cleanly on SIGTERM); written before the pod
    is removed, so watchers see both. The phase is left as it is (controllers counting
    finished pods are not told that a deleted pod succeeded)."""
    status = pod.get("status") or {}
    mains = []
    for st in status.get("containerStatuses") or ():
        st = dict(st, ready=False)
        running = (st.get("state") or {}).get("running")
        if stopped and running is not None:
            st["state"] = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": running.get("startedAt"),
                    "finishedAt": meta.rfc3339(now),
                    **({"containerID": st["containerID"]} if st.get("containerID") else {}),
                }
            }
            st["started"] = False
        mains.append(st)
    names = [s["name"] for s in mains]
    out: dict = {
        "containerStatuses": mains,
        **({"initContainerStatuses": status["initContainerStatuses"]} if status.get("initContainerStatuses") else {}),
        "conditions": [
            _ready_cond("ContainersReady", False, False, names),
            _ready_cond("Ready", False, False, names),
        ],
    }
    return out
