"""Server-side ``meta.k8s.io/v1`` Tables for ``kubectl get``.

kubectl asks for ``as=Table`` and prints whatever columns and cells the server returns, so
the columns and each cell's text follow kubernetes/kubernetes
``pkg/printers/internalversion/printers.go`` (the server always renders the wide columns;
kubectl hides ``priority > 0`` unless ``-o wide``). Pure functions: ``now`` is passed in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from mockkube.apiserver.http.tablecells import (
    _APPS,
    _CORE,
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
    _selector_string,
    _template_containers,
    parse_time,
    since,
)

# --- column definitions -------------------------------------------------------------------------


_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."


def _build_columns() -> dict[tuple[str, str], list[dict]]:
    events = [
        _col("Last Seen", _doc(_CORE + "Event", "lastTimestamp")),
        _col("Type", _doc(_CORE + "Event", "type")),
        _col("Reason", _doc(_CORE + "Event", "reason")),
        _col("Object", _doc(_CORE + "Event", "involvedObject")),
        _col("Subobject", _doc(_CORE + "ObjectReference", "fieldPath"), priority=1),
        _col("Source", _doc(_CORE + "Event", "source"), priority=1),
        _col("Message", _doc(_CORE + "Event", "message")),
        _col("First Seen", _doc(_CORE + "Event", "firstTimestamp"), priority=1),
        _col("Count", _doc(_CORE + "Event", "count"), priority=1),
        _name_col(priority=1),
    ]
    name_age = [_name_col(), _age_col()]
    return {
        ("", "pods"): [
            _name_col(),
            _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
            _col("Status", "The aggregate status of the containers in this pod."),
            _col(
                "Restarts",
                "The number of times the containers in this pod have been restarted and when the "
                "last container in this pod has restarted.",
            ),
            _age_col(),
            _col("IP", _doc(_CORE + "PodStatus", "podIP"), priority=1),
            _col("Node", _doc(_CORE + "PodSpec", "nodeName"), priority=1),
            _col("Nominated Node", _doc(_CORE + "PodStatus", "nominatedNodeName"), priority=1),
            _col("Readiness Gates", _doc(_CORE + "PodSpec", "readinessGates"), priority=1),
        ],
        ("", "nodes"): [
            _name_col(),
            _col("Status", "The status of the node"),
            _col("Roles", "The roles of the node"),
            _age_col(),
            _col("Version", _doc(_CORE + "NodeSystemInfo", "kubeletVersion")),
            _col("Internal-IP", _doc(_CORE + "NodeStatus", "addresses"), priority=1),
            _col("External-IP", _doc(_CORE + "NodeStatus", "addresses"), priority=1),
            _col("OS-Image", _doc(_CORE + "NodeSystemInfo", "osImage"), priority=1),
            _col("Kernel-Version", _doc(_CORE + "NodeSystemInfo", "kernelVersion"), priority=1),
            _col("Container-Runtime", _doc(_CORE + "NodeSystemInfo", "containerRuntimeVersion"), priority=1),
        ],
        ("", "namespaces"): [_name_col(), _col("Status", "The status of the namespace"), _age_col()],
        ("", "componentstatuses"): [
            _name_col(),
            _col("Status", "Status of the component conditions"),
            _col("Message", "Message of the component conditions"),
            _col("Error", "Error of the component conditions"),
        ],
        ("", "events"): events,
        ("events.k8s.io", "events"): [dict(c) for c in events],
        ("", "configmaps"): [_name_col(), _col("Data", _doc(_CORE + "ConfigMap", "data")), _age_col()],
        ("", "secrets"): [
            _name_col(),
            _col("Type", _doc(_CORE + "Secret", "type")),
            _col("Data", _doc(_CORE + "Secret", "data")),
            _age_col(),
        ],
        ("", "serviceaccounts"): [_name_col(), _col("Secrets", _doc(_CORE + "ServiceAccount", "secrets")), _age_col()],
        ("", "resourcequotas"): [
            _name_col(),
            _age_col(),
            _col("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
            _col(
                "Limit",
                "Limits control the maximum amount of cpu/memory that a container may use "
                "independent of contention on the node.",
            ),
        ],
        ("", "services"): [
            _name_col(),
            _col("Type", _doc(_CORE + "ServiceSpec", "type")),
            _col("Cluster-IP", _doc(_CORE + "ServiceSpec", "clusterIP")),
            _col("External-IP", _doc(_CORE + "ServiceSpec", "externalIPs")),
            _col("Port(s)", _doc(_CORE + "ServiceSpec", "ports")),
            _age_col(),
            _col("Selector", _doc(_CORE + "ServiceSpec", "selector"), priority=1),
        ],
        ("resource.k8s.io", "deviceclasses"): [dict(c) for c in name_age],
        ("resource.k8s.io", "resourceclaims"): [
            _name_col(),
            _col("State", "A summary of the current state (allocated, pending, reserved, etc.)."),
            _age_col(),
        ],
        ("resource.k8s.io", "resourceclaimtemplates"): [dict(c) for c in name_age],
        ("resource.k8s.io", "resourceslices"): [
            _name_col(),
            _col("Node", _doc("io.k8s.api.resource.v1.ResourceSliceSpec", "nodeName")),
            _col("Driver", _doc("io.k8s.api.resource.v1.ResourceSliceSpec", "driver")),
            _col("Pool", _doc("io.k8s.api.resource.v1.ResourcePool", "name")),
            _age_col(),
        ],
        ("resource.k8s.io", "devicetaintrules"): [dict(c) for c in name_age],
        ("coordination.k8s.io", "leases"): [
            _name_col(),
            _col("Holder", _doc("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity")),
            _age_col(),
        ],
        ("apps", "deployments"): [
            _name_col(),
            _col("Ready", "Number of the pod with ready state"),
            _col("Up-to-date", _doc(_APPS + "DeploymentStatus", "updatedReplicas")),
            _col("Available", _doc(_APPS + "DeploymentStatus", "availableReplicas")),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_APPS + "DeploymentSpec", "selector"), priority=1),
        ],
        ("apps", "replicasets"): [
            _name_col(),
            _col("Desired", _doc(_APPS + "ReplicaSetSpec", "replicas"), type="integer"),
            _col("Current", _doc(_APPS + "ReplicaSetStatus", "replicas"), type="integer"),
            _col("Ready", _doc(_APPS + "ReplicaSetStatus", "readyReplicas"), type="integer"),
            _age_col(),
            _col("Containers", _CONTAINERS, priority=1),
            _col("Images", _IMAGES, priority=1),
            _col("Selector", _doc(_APPS + "ReplicaSetSpec", "selector"), priority=1),
        ],
    }


COLUMNS: dict[tuple[str, str], list[dict]] = _build_columns()
DEFAULT_COLUMNS: list[dict] = [_name_col(), _age_col()]


def columns_for(group: str, plural: str) -> list[dict]:
    """The column definitions for a resource (Name, Age for anything printers.go lacks)."""
    return COLUMNS.get((group, plural), DEFAULT_COLUMNS)


# --- time -----------------------------------------------------------------------------------------


# --- small helpers ----------------------------------------------------------------------------------


# --- per-resource cells -------------------------------------------------------------------------


def _restartable(init: dict | None) -> bool:
    return bool(init) and init.get("restartPolicy") == "Always"


def _finished_at(status: dict) -> datetime | None:
    term = ((status.get("lastState") or {}).get("terminated")) or {}
    return parse_time(term.get("finishedAt"))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if b is not None and (a is None or a < b):
        return b
    return a


def _cond_true(conditions: list, ctype: str) -> bool:
    for c in conditions:
        if c.get("type") == ctype:
            return c.get("status") == "True"
    return False


def _pod_cells(pod: Obj, now: datetime) -> list:
    spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, _meta(pod)
    conditions = status.get("conditions") or []
    init_specs = spec.get("initContainers") or []
    restarts = 0
    restartable_restarts = 0
    total = len(spec.get("containers") or [])
    ready = 0
    last_restart: datetime | None = None
    last_restartable_restart: datetime | None = None

    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for c in conditions:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    inits = {c.get("name"): c for c in init_specs}
    total += sum(1 for c in init_specs if _restartable(c))

    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += cs.get("restartCount") or 0
        last_restart = _later(last_restart, _finished_at(cs))
        restartable = _restartable(inits.get(cs.get("name")))
        if restartable:
            restartable_restarts += cs.get("restartCount") or 0
            last_restartable_restart = _later(last_restartable_restart, _finished_at(cs))
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and (term.get("exitCode") or 0) == 0:
            continue
        if restartable and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                if term.get("signal"):
                    reason = f"Init:Signal:{term['signal']}"
                else:
                    reason = f"Init:ExitCode:{term.get('exitCode') or 0}"
            else:
                reason = "Init:" + term["reason"]
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _cond_true(conditions, "Initialized"):
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount") or 0
            last_restart = _later(last_restart, _finished_at(cs))
            state = cs.get("state") or {}
            term, waiting = state.get("terminated"), state.get("waiting")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                if term.get("signal"):
                    reason = f"Signal:{term['signal']}"
                else:
                    reason = f"ExitCode:{term.get('exitCode') or 0}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _cond_true_any(conditions, "Ready") else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_str = str(restarts)
    if restarts and last_restart is not None:
        restarts_str = f"{restarts} ({since(last_restart.isoformat(), now)} ago)"

    ips = status.get("podIPs") or []
    pod_ip = (ips[0].get("ip") if ips else "") or "<none>"
    gates = spec.get("readinessGates") or []
    readiness = "<none>"
    if gates:
        true_count = 0
        for g in gates:
            for c in conditions:
                if c.get("type") == g.get("conditionType"):
                    if c.get("status") == "True":
                        true_count += 1
                    break
        readiness = f"{true_count}/{len(gates)}"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_str,
        _age(pod, now),
        pod_ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        readiness,
    ]


def _cond_true_any(conditions: list, ctype: str) -> bool:
    """hasPodReadyCondition: any condition of the type with status True."""
    return any(c.get("type") == ctype and c.get("status") == "True" for c in conditions)


def _pod_row_conditions(pod: Obj) -> list[dict] | None:
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


def node_roles(labels: dict | None) -> list[str]:
    """findNodeRoles: node-role.kubernetes.io/<role> keys and the kubernetes.io/role value."""
    roles = set()
    for k, v in (labels or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            if role := k[len("node-role.kubernetes.io/") :]:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return sorted(roles)


def _node_address(node: Obj, kind: str) -> str:
    for a in (node.get("status") or {}).get("addresses") or []:
        if a.get("type") == kind:
            return a.get("address", "")
    return "<none>"


def _node_cells(node: Obj, now: datetime) -> list:
    status = node.get("status") or {}
    ready = None
    for c in status.get("conditions") or []:
        if c.get("type") == "Ready":
            ready = c  # upstream keeps the last one of a type
    states = []
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [
        _meta(node).get("name", ""),
        ",".join(states),
        ",".join(node_roles(_meta(node).get("labels"))) or "<none>",
        _age(node, now),
        info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _micro_since(value: str | None, now: datetime) -> str:
    return since(value, now)


def _event_cells(ev: Obj, now: datetime) -> list:
    """printEvent over the internal Event (core/v1 field names)."""
    first = since(ev.get("firstTimestamp"), now)
    if parse_time(ev.get("firstTimestamp")) is None:
        first = _micro_since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now)
    if parse_time(ev.get("lastTimestamp")) is None:
        last = first
    count = ev.get("count") or 0
    series = ev.get("series")
    if series is not None:
        last = _micro_since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif count == 0:
        count = 1
    inv = ev.get("involvedObject") or {}
    kind = (inv.get("kind") or "").lower()
    target = f"{kind}/{inv['name']}" if inv.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    instance = source.get("host") or ev.get("reportingInstance") or ""
    src = f"{component}, {instance}" if instance else component
    return [
        last,
        ev.get("type", ""),
        ev.get("reason", ""),
        target,
        inv.get("fieldPath", ""),
        src,
        (ev.get("message") or "").strip(),
        first,
        count,
        _meta(ev).get("name", ""),
    ]


def events_v1_as_core(ev: Obj) -> Obj:
    """An events.k8s.io/v1 Event in core/v1 field names (the internal type both share)."""
    return {
        "metadata": ev.get("metadata") or {},
        "involvedObject": ev.get("regarding") or {},
        "reason": ev.get("reason", ""),
        "message": ev.get("note", ""),
        "source": ev.get("deprecatedSource") or {},
        "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
        "lastTimestamp": ev.get("deprecatedLastTimestamp"),
        "count": ev.get("deprecatedCount") or 0,
        "type": ev.get("type", ""),
        "eventTime": ev.get("eventTime"),
        "series": ev.get("series"),
        "reportingComponent": ev.get("reportingController", ""),
        "reportingInstance": ev.get("reportingInstance", ""),
    }


def _lb_status(svc: Obj, wide: bool = True) -> str:
    found = set()
    for ing in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if ing.get("ip"):
            found.add(ing["ip"])
        elif ing.get("hostname"):
            found.add(ing["hostname"])
    r = ",".join(sorted(found))
    if not wide and len(r) > 16:
        r = r[:13] + "..."
    return r


def _service_external_ip(svc: Obj) -> str:
    spec = svc.get("spec") or {}
    ext = spec.get("externalIPs") or []
    t = spec.get("type", "")
    if t in ("ClusterIP", "NodePort"):
        return ",".join(ext) if ext else "<none>"
    if t == "LoadBalancer":
        lb = _lb_status(svc, wide=True)  # the server always renders wide
        if ext:
            return ",".join((lb.split(",") if lb else []) + ext)
        return lb or "<pending>"
    if t == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def _quota_columns(quota: Obj) -> list[str]:
    """printResourceQuota: "<resource>: <used>/<hard>" for each spec.hard resource, sorted,
    limits.* in the Limit column and everything else in Request."""
    status = quota.get("status") or {}
    used, hard = status.get("used") or {}, status.get("hard") or {}
    request, limit = [], []
    for name in sorted((quota.get("spec") or {}).get("hard") or {}):
        pieces = name.split(".")
        (limit if len(pieces) > 1 and pieces[0] == "limits" else request).append(
            f"{name}: {used.get(name, '0')}/{hard.get(name, '0')}"
        )
    return [", ".join(request), ", ".join(limit)]


def _service_cells(svc: Obj, now: datetime) -> list:
    spec = svc.get("spec") or {}
    ips = spec.get("clusterIPs") or []
    pieces = []
    for p in spec.get("ports") or []:
        proto = p.get("protocol", "TCP")
        if p.get("nodePort"):
            pieces.append(f"{p.get('port', 0)}:{p['nodePort']}/{proto}")
        else:
            pieces.append(f"{p.get('port', 0)}/{proto}")
    return [
        _meta(svc).get("name", ""),
        spec.get("type", ""),
        ips[0] if ips else "<none>",
        _service_external_ip(svc),
        ",".join(pieces) or "<none>",
        _age(svc, now),
        _format_labels(spec.get("selector")),
    ]


def resource_claim_state(claim: Obj) -> str:
    """resourceClaimState: e.g. "pending", "allocated,reserved", "deleted,allocated"."""
    states = []
    deleted = bool(_meta(claim).get("deletionTimestamp"))
    status = claim.get("status") or {}
    if deleted:
        states.append("deleted")
    if status.get("allocation") is None:
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _deployment_cells(d: Obj, now: datetime) -> list:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    sel = _selector_string(spec.get("selector"))
    names, images = _layout_containers(_template_containers(d))
    return [
        _meta(d).get("name", ""),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(d, now),
        names,
        images,
        "<invalid>" if sel is None else sel,
    ]


def _replicaset_cells(rs: Obj, now: datetime) -> list:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    names, images = _layout_containers(_template_containers(rs))
    return [
        _meta(rs).get("name", ""),
        spec.get("replicas", 1),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        _age(rs, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _name_age(obj: Obj, now: datetime) -> list:
    return [_meta(obj).get("name", ""), _age(obj, now)]


_CELLS: dict[tuple[str, str], Callable[[Obj, datetime], list]] = {
    ("", "pods"): _pod_cells,
    ("", "nodes"): _node_cells,
    ("", "namespaces"): lambda o, now: [
        _meta(o).get("name", ""),
        (o.get("status") or {}).get("phase", ""),
        _age(o, now),
    ],
    ("", "componentstatuses"): lambda o, now: [_meta(o).get("name", ""), *_component_status_cells(o)],
    ("", "events"): _event_cells,
    ("events.k8s.io", "events"): lambda o, now: _event_cells(events_v1_as_core(o), now),
    ("", "configmaps"): lambda o, now: [
        _meta(o).get("name", ""),
        len(o.get("data") or {}) + len(o.get("binaryData") or {}),
        _age(o, now),
    ],
    ("", "secrets"): lambda o, now: [
        _meta(o).get("name", ""),
        o.get("type", ""),
        len(o.get("data") or {}),
        _age(o, now),
    ],
    ("", "serviceaccounts"): lambda o, now: [_meta(o).get("name", ""), len(o.get("secrets") or []), _age(o, now)],
    ("", "services"): _service_cells,
    ("", "resourcequotas"): lambda o, now: [_meta(o).get("name", ""), _age(o, now), *_quota_columns(o)],
    ("resource.k8s.io", "resourceclaims"): lambda o, now: [
        _meta(o).get("name", ""),
        resource_claim_state(o),
        _age(o, now),
    ],
    # spec.nodeName is a pointer upstream: null when the slice is not node-local
    ("resource.k8s.io", "resourceslices"): lambda o, now: [
        _meta(o).get("name", ""),
        (o.get("spec") or {}).get("nodeName"),
        (o.get("spec") or {}).get("driver", ""),
        ((o.get("spec") or {}).get("pool") or {}).get("name", ""),
        _age(o, now),
    ],
    ("coordination.k8s.io", "leases"): lambda o, now: [
        _meta(o).get("name", ""),
        (o.get("spec") or {}).get("holderIdentity") or "",
        _age(o, now),
    ],
    ("apps", "deployments"): _deployment_cells,
    ("apps", "replicasets"): _replicaset_cells,
}


def _component_status_cells(o: Obj) -> list:
    """printComponentStatus: the Healthy condition's status, message and error."""
    for c in o.get("conditions") or ():
        if c.get("type") == "Healthy":
            return ["Healthy" if c.get("status") == "True" else "Unhealthy", c.get("message", ""), c.get("error", "")]
    return ["Unknown", "", ""]


def _add_workloads() -> None:
    from mockkube.apiserver.http import tables_workloads

    COLUMNS.update(tables_workloads.columns())
    _CELLS.update(tables_workloads.cells())


_add_workloads()


# kinds whose list printer orders the rows itself (printFlowSchemaList sorts by precedence)
ROW_ORDER: dict[tuple[str, str], Callable[[list[Obj]], list[Obj]]] = {}


def row_cells(group: str, plural: str, obj: Obj, now: datetime) -> list:
    """The cells of one row, exactly as printers.go renders them (wide columns included)."""
    return _CELLS.get((group, plural), _name_age)(obj, now)


# --- the Table ------------------------------------------------------------------------------------


def _row_object(obj: Obj, include_object: str) -> Obj | None:
    if include_object == "Object":
        return obj
    if include_object == "None":
        return None
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}


def make_table(
    group: str,
    plural: str,
    objects: list[Obj],
    include_object: str,
    now: datetime,
    list_meta: dict,
    with_headers: bool = True,
    printer: Any = None,
) -> dict:
    """A ``meta.k8s.io/v1`` Table, as kube-apiserver returns for ``Accept: ...;as=Table``.

    ``include_object`` is the ``includeObject`` query parameter: ""/"Metadata" embeds a
    PartialObjectMetadata, "Object" the object itself, "None" nothing (``object: null``).
    ``with_headers=False`` is for watch events after the first, whose columnDefinitions
    upstream leaves null. ``printer`` (a ``ResourceType.table``: a custom resource's printer
    columns, or "default") overrides the built-in columns.
    """
    if printer is not None:
        from mockkube.apiserver.http.tables_custom import printer as custom_printer

        printer = custom_printer(printer)
    order = ROW_ORDER.get((group, plural)) if printer is None else None
    if order is not None:
        objects = order(objects)
    rows = []
    for obj in objects:
        cells = printer.cells(obj, now) if printer is not None else row_cells(group, plural, obj, now)
        row: dict[str, Any] = {"cells": cells}
        if group == "" and plural == "pods" and (conds := _pod_row_conditions(obj)):
            row["conditions"] = conds
        row["object"] = _row_object(obj, include_object)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": (
            printer.columns() if printer is not None else [dict(c) for c in columns_for(group, plural)]
        )
        if with_headers
        else None,
        "rows": rows,
    }


def _register_more() -> None:
    from mockkube.apiserver.http import tables_admission, tables_apis, tables_cluster

    tables_cluster.register(__import__(__name__, fromlist=["_CELLS"]))
    tables_apis.register(__import__(__name__, fromlist=["_CELLS"]))
    tables_admission.register(__import__(__name__, fromlist=["_CELLS"]))


_register_more()
