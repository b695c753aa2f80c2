"""Table columns and cells of the workload controllers' resources (DaemonSet, StatefulSet,
ControllerRevision, Job, CronJob, ReplicationController), as printers.go renders them.
``mockkube.apiserver.http.tables`` merges these into its maps."""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from mockkube.apiserver.http.tables import (
    _NS,
    Obj,
    _age,
    _age_col,
    _col,
    _doc,
    _format_label_selector,
    _format_labels,
    _layout_containers,
    _meta,
    _name_col,
    _template_containers,
    human_duration,
    parse_time,
    since,
)

_APPS = "io.k8s.api.apps.v1."
_BATCH = "io.k8s.api.batch.v1."
_CORE = "io.k8s.api.core.v1."
_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."


def columns() -> dict[tuple[str, str], list[dict]]:
    ds = _APPS + "DaemonSetStatus"
    return {
        ("apps", "daemonsets"): [
            _name_col(),
            _col("Desired", _doc(ds, "desiredNumberScheduled"), type="integer"),
            _col("Current", _doc(ds, "currentNumberScheduled"), type="integer"),
            _col("Ready", _doc(ds, "numberReady"), type="integer"),
            _col("Up-to-date", _doc(ds, "updatedNumberScheduled"), type="integer"),
            _col("Available", _doc(ds, "numberAvailable"), type="integer"),
            _col("Node Selector", _doc(_CORE + "PodSpec", "nodeSelector")),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_APPS + "DaemonSetSpec", "selector"), priority=1),
        ],
        ("apps", "statefulsets"): [
            _name_col(),
            _col("Ready", "Number of the pod with ready state"),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
        ],
        ("apps", "controllerrevisions"): [
            _name_col(),
            _col("Controller", "Controller of the object"),
            _col("Revision", _doc(_APPS + "ControllerRevision", "revision"), type="integer"),
            _age_col(),
        ],
        ("batch", "jobs"): [
            _name_col(),
            _col("Status", "Status of the job."),
            _col("Completions", "The completion status of the job."),
            _col("Duration", "Time required to complete the job."),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_BATCH + "JobSpec", "selector"), priority=1),
        ],
        ("batch", "cronjobs"): [
            _name_col(),
            _col("Schedule", _doc(_BATCH + "CronJobSpec", "schedule")),
            _col("Timezone", _doc(_BATCH + "CronJobSpec", "timeZone")),
            _col("Suspend", _doc(_BATCH + "CronJobSpec", "suspend")),
            _col("Active", _doc(_BATCH + "CronJobStatus", "active"), type="integer"),
            _col("Last Schedule", _doc(_BATCH + "CronJobStatus", "lastScheduleTime")),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_BATCH + "JobSpec", "selector"), priority=1),
        ],
        ("", "replicationcontrollers"): [
            _name_col(),
            _col("Desired", _doc(_CORE + "ReplicationControllerSpec", "replicas"), type="integer"),
            _col("Current", _doc(_CORE + "ReplicationControllerStatus", "replicas"), type="integer"),
            _col("Ready", _doc(_CORE + "ReplicationControllerStatus", "readyReplicas"), type="integer"),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_CORE + "ReplicationControllerSpec", "selector"), priority=1),
        ],
    }


def _daemonset(o: Obj, now: datetime) -> list:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _layout_containers(_template_containers(o))
    node_sel = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")
    return [
        _meta(o).get("name", ""),
        st.get("desiredNumberScheduled", 0),
        st.get("currentNumberScheduled", 0),
        st.get("numberReady", 0),
        st.get("updatedNumberScheduled", 0),
        st.get("numberAvailable", 0),
        _format_labels(node_sel),
        _age(o, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _statefulset(o: Obj, now: datetime) -> list:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _layout_containers(_template_containers(o))
    return [
        _meta(o).get("name", ""),
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        _age(o, now),
        names,
        images,
    ]


def _controllerrevision(o: Obj, now: datetime) -> list:
    ref = next((r for r in _meta(o).get("ownerReferences") or () if r.get("controller")), None)
    ctrl = "<none>"
    if ref is not None:
        group = ref.get("apiVersion", "").rpartition("/")[0]
        kind = ref.get("kind", "").lower()
        ctrl = f"{kind}.{group}/{ref.get('name', '')}" if group else f"{kind}/{ref.get('name', '')}"
    return [_meta(o).get("name", ""), ctrl, o.get("revision", 0), _age(o, now)]


def job_status_word(o: Obj) -> str:
    conds = {c.get("type") for c in (o.get("status") or {}).get("conditions") or () if c.get("status") == "True"}
    if "Complete" in conds:
        return "Complete"
    if "Failed" in conds:
        return "Failed"
    if _meta(o).get("deletionTimestamp"):
        return "Terminating"
    for c in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if c in conds:
            return c
    return "Running"


def _job(o: Obj, now: datetime) -> list:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    succeeded = st.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(st.get("startTime")), parse_time(st.get("completionTime"))
    if start is None:
        duration = ""
    elif end is None:
        duration = since(st.get("startTime"), now)
    else:
        d = end - start
        duration = human_duration((d.days * 86400 + d.seconds) * _NS + d.microseconds * 1000)
    names, images = _layout_containers(_template_containers(o))
    return [
        _meta(o).get("name", ""),
        job_status_word(o),
        completions,
        duration,
        _age(o, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _cronjob(o: Obj, now: datetime) -> list:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    jspec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = _layout_containers(_template_containers({"spec": jspec}))
    suspend = spec.get("suspend")
    last = st.get("lastScheduleTime")
    return [
        _meta(o).get("name", ""),
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(st.get("active") or ()),
        since(last, now) if last else "<none>",
        _age(o, now),
        names,
        images,
        _format_label_selector(jspec.get("selector")),
    ]


def _replicationcontroller(o: Obj, now: datetime) -> list:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _layout_containers(_template_containers(o))
    return [
        _meta(o).get("name", ""),
        spec.get("replicas", 1),
        st.get("replicas", 0),
        st.get("readyReplicas", 0),
        _age(o, now),
        names,
        images,
        _format_labels(spec.get("selector")),
    ]


def cells() -> dict[tuple[str, str], Callable[[Obj, datetime], list]]:
    return {
        ("apps", "daemonsets"): _daemonset,
        ("apps", "statefulsets"): _statefulset,
        ("apps", "controllerrevisions"): _controllerrevision,
        ("batch", "jobs"): _job,
        ("batch", "cronjobs"): _cronjob,
        ("", "replicationcontrollers"): _replicationcontroller,
    }


__all__ = ["columns", "cells", "job_status_word"]
