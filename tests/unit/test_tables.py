from datetime import datetime, timedelta, timezone

import pytest

from mockkube.apiserver.http.tablecells import human_duration, since
from mockkube.apiserver.http.tables import (
    COLUMNS,
    columns_for,
    make_table,
    node_roles,
    resource_claim_state,
    row_cells,
)

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
S = 1_000_000_000
M, H, D = 60 * S, 3600 * S, 86400 * S


def ts(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


CREATED = ts(timedelta(minutes=5))


def names(group, plural):
    return [(c["name"], c["priority"]) for c in columns_for(group, plural)]


# --- columns --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key,cols",
    [
        (
            ("", "pods"),
            [
                ("Name", 0),
                ("Ready", 0),
                ("Status", 0),
                ("Restarts", 0),
                ("Age", 0),
                ("IP", 1),
                ("Node", 1),
                ("Nominated Node", 1),
                ("Readiness Gates", 1),
            ],
        ),
        (
            ("", "nodes"),
            [
                ("Name", 0),
                ("Status", 0),
                ("Roles", 0),
                ("Age", 0),
                ("Version", 0),
                ("Internal-IP", 1),
                ("External-IP", 1),
                ("OS-Image", 1),
                ("Kernel-Version", 1),
                ("Container-Runtime", 1),
            ],
        ),
        (("", "namespaces"), [("Name", 0), ("Status", 0), ("Age", 0)]),
        (
            ("", "events"),
            [
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1),
            ],
        ),
        (
            ("events.k8s.io", "events"),
            [
                ("Last Seen", 0),
                ("Type", 0),
                ("Reason", 0),
                ("Object", 0),
                ("Subobject", 1),
                ("Source", 1),
                ("Message", 0),
                ("First Seen", 1),
                ("Count", 1),
                ("Name", 1),
            ],
        ),
        (("", "configmaps"), [("Name", 0), ("Data", 0), ("Age", 0)]),
        (("", "secrets"), [("Name", 0), ("Type", 0), ("Data", 0), ("Age", 0)]),
        (("", "serviceaccounts"), [("Name", 0), ("Secrets", 0), ("Age", 0)]),
        (
            ("", "services"),
            [
                ("Name", 0),
                ("Type", 0),
                ("Cluster-IP", 0),
                ("External-IP", 0),
                ("Port(s)", 0),
                ("Age", 0),
                ("Selector", 1),
            ],
        ),
        (("resource.k8s.io", "deviceclasses"), [("Name", 0), ("Age", 0)]),
        (("resource.k8s.io", "resourceclaims"), [("Name", 0), ("State", 0), ("Age", 0)]),
        (("resource.k8s.io", "resourceclaimtemplates"), [("Name", 0), ("Age", 0)]),
        (("resource.k8s.io", "resourceslices"), [("Name", 0), ("Node", 0), ("Driver", 0), ("Pool", 0), ("Age", 0)]),
        (("resource.k8s.io", "devicetaintrules"), [("Name", 0), ("Age", 0)]),
        (("coordination.k8s.io", "leases"), [("Name", 0), ("Holder", 0), ("Age", 0)]),
        (
            ("apps", "deployments"),
            [
                ("Name", 0),
                ("Ready", 0),
                ("Up-to-date", 0),
                ("Available", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
        ),
        (
            ("apps", "replicasets"),
            [
                ("Name", 0),
                ("Desired", 0),
                ("Current", 0),
                ("Ready", 0),
                ("Age", 0),
                ("Containers", 1),
                ("Images", 1),
                ("Selector", 1),
            ],
        ),
        (("example.com", "widgets"), [("Name", 0), ("Age", 0)]),
    ],
)
def test_columns(key, cols):
    assert names(*key) == cols


def test_column_shape():
    for key, cols in COLUMNS.items():
        for c in cols:
            assert set(c) == {"name", "type", "format", "description", "priority"}, key
            assert c["type"] in ("string", "integer", "boolean"), key
        name = next(c for c in cols if c["format"] == "name")  # "Template" for podtemplates
        assert name["name"] in ("Name", "Template"), key
    assert [c["type"] for c in COLUMNS[("apps", "replicasets")][1:4]] == ["integer"] * 3
    assert "Name must be unique" in COLUMNS[("", "pods")][0]["description"]


# printers.go's own mismatch: printIPAddress appends an age cell the columns do not declare
ONE_EXTRA_CELL = {("networking.k8s.io", "ipaddresses")}


def test_every_row_is_as_wide_as_its_columns():
    for (group, plural), cols in list(COLUMNS.items()) + [(("x.io", "things"), [1, 2])]:
        extra = 1 if (group, plural) in ONE_EXTRA_CELL else 0
        assert len(row_cells(group, plural, {"metadata": {"name": "a"}}, NOW)) == len(cols) + extra, plural


# --- age ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ns,want",
    [
        (S, "1s"),
        (70 * S, "70s"),
        (190 * S, "3m10s"),
        (70 * M, "70m"),
        (47 * H, "47h"),
        (49 * H, "2d1h"),
        ((8 * 24 + 2) * H, "8d"),
        (367 * 24 * H, "367d"),
        ((365 * 2 * 24 + 25) * H, "2y1d"),
        ((365 * 8 * 24 + 2) * H, "8y"),
        (-2 * S, "<invalid>"),
        (-2 * S + 1, "0s"),
        (0, "0s"),
        (S - 1_000_000, "0s"),
        (2 * M - 1_000_000, "119s"),
        (2 * M, "2m"),
        (2 * M + S, "2m1s"),
        (10 * M - 1_000_000, "9m59s"),
        (10 * M, "10m"),
        (10 * M + S, "10m"),
        (3 * H - 1_000_000, "179m"),
        (3 * H, "3h"),
        (3 * H + M, "3h1m"),
        (8 * H - 1_000_000, "7h59m"),
        (8 * H, "8h"),
        (8 * H + 59 * M, "8h"),
        (2 * D - 1_000_000, "47h"),
        (2 * D, "2d"),
        (2 * D + H, "2d1h"),
        (8 * D - 1_000_000, "7d23h"),
        (8 * D, "8d"),
        (8 * D + 23 * H, "8d"),
        (2 * 365 * D - 1_000_000, "729d"),
        (2 * 365 * D, "2y"),
        (2 * 365 * D + 24 * H, "2y1d"),
        (3 * 365 * D, "3y"),
    ],
)
def test_human_duration(ns, want):
    # upstream TestHumanDuration / TestHumanDurationBoundaries
    assert human_duration(ns) == want


def test_since():
    assert since(None, NOW) == "<unknown>"
    assert since("", NOW) == "<unknown>"
    assert since(ts(timedelta(hours=3, minutes=2)), NOW) == "3h2m"
    assert since("2025-06-01T11:59:59.500000Z", NOW) == "0s"  # MicroTime
    assert since(ts(timedelta(seconds=-30)), NOW) == "<invalid>"  # clock skew


# --- pods -----------------------------------------------------------------------------------------


def pod(status=None, spec=None, **meta):
    return {
        "metadata": {"name": "p", "creationTimestamp": CREATED, **meta},
        "spec": spec or {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": status or {},
    }


def running(ready=True, restarts=0, finished=None):
    cs = {"name": "a", "ready": ready, "restartCount": restarts, "state": {"running": {}}}
    if finished:
        cs["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": finished}}
    return cs


@pytest.mark.parametrize(
    "status,spec,meta,want",
    [
        ({"phase": "Pending"}, None, {}, ["0/2", "Pending", "0"]),
        ({"phase": "Running", "containerStatuses": [running(), running()]}, None, {}, ["2/2", "Running", "0"]),
        (
            {"phase": "Running", "containerStatuses": [running(), running(ready=False)]},
            None,
            {},
            ["1/2", "Running", "0"],
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    running(),
                    {
                        "name": "b",
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "restartCount": 3,
                        "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(timedelta(minutes=5))}},
                    },
                ],
            },
            None,
            {},
            ["1/2", "CrashLoopBackOff", "3 (5m ago)"],
        ),
        ({"phase": "Running", "containerStatuses": [running(restarts=2)]}, None, {}, ["1/2", "Running", "2"]),
        (
            {
                "phase": "Pending",
                "containerStatuses": [{"name": "a", "state": {"waiting": {"reason": "ContainerCreating"}}}],
            },
            None,
            {},
            ["0/2", "ContainerCreating", "0"],
        ),
        (
            {
                "phase": "Succeeded",
                "containerStatuses": [{"name": "a", "state": {"terminated": {"reason": "Completed"}}}],
            },
            None,
            {},
            ["0/2", "Completed", "0"],
        ),
        (
            {"phase": "Failed", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 2}}}]},
            None,
            {},
            ["0/2", "ExitCode:2", "0"],
        ),
        (
            {
                "phase": "Failed",
                "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}],
            },
            None,
            {},
            ["0/2", "Signal:9", "0"],
        ),
        # a finished container next to a running one: back to Running / NotReady
        (
            {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "a", "state": {"terminated": {"reason": "Completed"}}}, running()],
            },
            None,
            {},
            ["1/2", "Running", "0"],
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [{"name": "a", "state": {"terminated": {"reason": "Completed"}}}, running()],
            },
            None,
            {},
            ["1/2", "NotReady", "0"],
        ),
        ({"phase": "Failed", "reason": "Evicted"}, None, {}, ["0/2", "Evicted", "0"]),
        (
            {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
            },
            None,
            {},
            ["0/2", "SchedulingGated", "0"],
        ),
        (
            {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            },
            None,
            {},
            ["0/2", "Pending", "0"],
        ),
        (
            {"phase": "Running", "containerStatuses": [running(), running()]},
            None,
            {"deletionTimestamp": CREATED},
            ["2/2", "Terminating", "0"],
        ),
        ({"phase": "Succeeded"}, None, {"deletionTimestamp": CREATED}, ["0/2", "Succeeded", "0"]),
        ({"phase": "Running", "reason": "NodeLost"}, None, {"deletionTimestamp": CREATED}, ["0/2", "Unknown", "0"]),
    ],
)
def test_pod_status(status, spec, meta, want):
    assert row_cells("", "pods", pod(status, spec, **meta), NOW)[1:4] == want


INIT_SPEC = {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]}


@pytest.mark.parametrize(
    "init_statuses,conditions,want",
    [
        ([{"name": "i1", "state": {"running": {}}}], [], ["0/1", "Init:0/2", "0"]),
        (
            [{"name": "i1", "state": {"terminated": {"exitCode": 0}}}, {"name": "i2", "state": {"running": {}}}],
            [],
            ["0/1", "Init:1/2", "0"],
        ),
        ([{"name": "i1", "state": {"waiting": {"reason": "PodInitializing"}}}], [], ["0/1", "Init:0/2", "0"]),
        (
            [{"name": "i1", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
            [],
            ["0/1", "Init:ImagePullBackOff", "0"],
        ),
        (
            [
                {
                    "name": "i1",
                    "restartCount": 4,
                    "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
                    "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(timedelta(seconds=30))}},
                }
            ],
            [],
            ["0/1", "Init:Error", "4 (30s ago)"],
        ),
        ([{"name": "i1", "state": {"terminated": {"exitCode": 3}}}], [], ["0/1", "Init:ExitCode:3", "0"]),
        ([{"name": "i1", "state": {"terminated": {"exitCode": 3, "signal": 15}}}], [], ["0/1", "Init:Signal:15", "0"]),
        # initialized: the main containers decide
        (
            [
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"terminated": {"exitCode": 0}}},
            ],
            [{"type": "Initialized", "status": "True"}],
            ["0/1", "PodInitializing", "0"],
        ),
    ],
)
def test_pod_init_status(init_statuses, conditions, want):
    status = {"phase": "Pending", "initContainerStatuses": init_statuses, "conditions": conditions}
    if want[1] == "PodInitializing":
        status["containerStatuses"] = [{"name": "a", "state": {"waiting": {"reason": "PodInitializing"}}}]
    assert row_cells("", "pods", pod(status, INIT_SPEC), NOW)[1:4] == want


def test_pod_sidecar_counts_and_restarts():
    spec = {"initContainers": [{"name": "side", "restartPolicy": "Always"}], "containers": [{"name": "a"}]}
    status = {
        "phase": "Running",
        "conditions": [{"type": "Initialized", "status": "True"}],
        "initContainerStatuses": [
            {
                "name": "side",
                "started": True,
                "ready": True,
                "restartCount": 1,
                "state": {"running": {}},
                "lastState": {"terminated": {"finishedAt": ts(timedelta(minutes=2))}},
            }
        ],
        "containerStatuses": [running(restarts=2, finished=ts(timedelta(minutes=7)))],
    }
    assert row_cells("", "pods", pod(status, spec), NOW)[1:4] == ["2/2", "Running", "3 (2m ago)"]


def test_pod_wide_cells():
    p = pod(
        {
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
            "podIP": "ignored",
            "nominatedNodeName": "n2",
            "conditions": [{"type": "example.com/gate", "status": "True"}],
        },
        {
            "containers": [{"name": "a"}],
            "nodeName": "n1",
            "readinessGates": [{"conditionType": "example.com/gate"}, {"conditionType": "other"}],
        },
    )
    assert row_cells("", "pods", p, NOW) == ["p", "0/1", "Running", "0", "5m", "10.0.0.5", "n1", "n2", "1/2"]
    assert row_cells("", "pods", pod({}), NOW)[5:] == ["<none>"] * 4


def test_pod_row_conditions():
    t = make_table("", "pods", [pod({"phase": "Succeeded"}), pod({"phase": "Running"})], "", NOW, {})
    assert t["rows"][0]["conditions"] == [
        {"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}
    ]
    assert "conditions" not in t["rows"][1]


# --- nodes ----------------------------------------------------------------------------------------


def node(conditions=(), unschedulable=False, labels=None, **status):
    return {
        "metadata": {"name": "n1", "creationTimestamp": ts(timedelta(days=3)), "labels": labels or {}},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"conditions": list(conditions), **status},
    }


READY = {"type": "Ready", "status": "True"}


@pytest.mark.parametrize(
    "n,status",
    [
        (node([READY]), "Ready"),
        (node([{"type": "Ready", "status": "False"}]), "NotReady"),
        (node([{"type": "Ready", "status": "Unknown"}]), "NotReady"),
        (node([]), "Unknown"),
        (node([{"type": "MemoryPressure", "status": "True"}]), "Unknown"),
        (node([READY], unschedulable=True), "Ready,SchedulingDisabled"),
        (node([], unschedulable=True), "Unknown,SchedulingDisabled"),
    ],
)
def test_node_status(n, status):
    assert row_cells("", "nodes", n, NOW)[1] == status


@pytest.mark.parametrize(
    "labels,roles",
    [
        ({}, []),
        ({"node-role.kubernetes.io/control-plane": ""}, ["control-plane"]),
        (
            {
                "node-role.kubernetes.io/worker": "",
                "node-role.kubernetes.io/gpu": "true",
                "kubernetes.io/role": "infra",
            },
            ["gpu", "infra", "worker"],
        ),
        ({"node-role.kubernetes.io/": "x", "kubernetes.io/role": ""}, []),
    ],
)
def test_node_roles(labels, roles):
    assert node_roles(labels) == roles


def test_node_cells():
    n = node(
        [READY],
        labels={"node-role.kubernetes.io/worker": ""},
        nodeInfo={"kubeletVersion": "v1.36.0", "osImage": "mockOS"},
        addresses=[{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.1.0.1"}],
    )
    assert row_cells("", "nodes", n, NOW) == [
        "n1",
        "Ready",
        "worker",
        "3d",
        "v1.36.0",
        "10.1.0.1",
        "<none>",
        "mockOS",
        "<unknown>",
        "<unknown>",
    ]
    assert row_cells("", "nodes", node([]), NOW)[2] == "<none>"


# --- DRA ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "claim,state",
    [
        ({}, "pending"),
        ({"status": {"allocation": {"devices": {}}}}, "allocated"),
        (
            {"status": {"allocation": {}, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}},
            "allocated,reserved",
        ),
        ({"status": {"reservedFor": []}}, "pending"),
        ({"metadata": {"deletionTimestamp": CREATED}}, "deleted"),
        ({"metadata": {"deletionTimestamp": CREATED}, "status": {"allocation": {}}}, "deleted,allocated"),
        (
            {"metadata": {"deletionTimestamp": CREATED}, "status": {"allocation": {}, "reservedFor": [{}]}},
            "deleted,allocated,reserved",
        ),
    ],
)
def test_resource_claim_state(claim, state):
    assert resource_claim_state(claim) == state
    claim = {
        "metadata": {"name": "c", **claim.get("metadata", {})},
        **{k: v for k, v in claim.items() if k != "metadata"},
    }
    assert row_cells("resource.k8s.io", "resourceclaims", claim, NOW) == ["c", state, "<unknown>"]


def test_dra_simple_rows():
    meta = {"name": "x", "creationTimestamp": ts(timedelta(seconds=42))}
    assert row_cells("resource.k8s.io", "deviceclasses", {"metadata": meta}, NOW) == ["x", "42s"]
    assert row_cells("resource.k8s.io", "resourceclaimtemplates", {"metadata": meta}, NOW) == ["x", "42s"]
    assert row_cells("resource.k8s.io", "devicetaintrules", {"metadata": meta}, NOW) == ["x", "42s"]
    sl = {"metadata": meta, "spec": {"nodeName": "n1", "driver": "gpu.example.com", "pool": {"name": "n1"}}}
    assert row_cells("resource.k8s.io", "resourceslices", sl, NOW) == ["x", "n1", "gpu.example.com", "n1", "42s"]
    sl = {"metadata": meta, "spec": {"allNodes": True, "driver": "fpga.example.com", "pool": {"name": "fabric"}}}
    assert row_cells("resource.k8s.io", "resourceslices", sl, NOW) == ["x", None, "fpga.example.com", "fabric", "42s"]


# --- events ---------------------------------------------------------------------------------------


def test_core_event_cells():
    ev = {
        "metadata": {"name": "p.123"},
        "type": "Normal",
        "reason": "Scheduled",
        "message": " Assigned p to n1\n",
        "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{a}"},
        "source": {"component": "default-scheduler"},
        "firstTimestamp": ts(timedelta(minutes=10)),
        "lastTimestamp": ts(timedelta(minutes=1)),
        "count": 3,
    }
    assert row_cells("", "events", ev, NOW) == [
        "60s",
        "Normal",
        "Scheduled",
        "pod/p",
        "spec.containers{a}",
        "default-scheduler",
        "Assigned p to n1",
        "10m",
        3,
        "p.123",
    ]


def test_core_event_new_style_fields():
    ev = {
        "metadata": {"name": "e"},
        "type": "Warning",
        "reason": "X",
        "message": "m",
        "involvedObject": {"kind": "Node"},
        "eventTime": "2025-06-01T11:59:00.000000Z",
        "reportingComponent": "kubelet",
        "reportingInstance": "n1",
    }
    assert row_cells("", "events", ev, NOW) == ["60s", "Warning", "X", "node", "", "kubelet, n1", "m", "60s", 1, "e"]
    ev["series"] = {"count": 7, "lastObservedTime": "2025-06-01T11:59:50.000000Z"}
    assert row_cells("", "events", ev, NOW)[0] == "10s"
    assert row_cells("", "events", ev, NOW)[8] == 7


def test_events_k8s_io_cells():
    ev = {
        "metadata": {"name": "e"},
        "type": "Normal",
        "reason": "Started",
        "note": "Started container",
        "regarding": {"kind": "Pod", "name": "p"},
        "eventTime": "2025-06-01T11:58:00.000000Z",
        "reportingController": "kubelet",
        "reportingInstance": "n1",
        "deprecatedSource": {"component": "kubelet", "host": "n1"},
    }
    assert row_cells("events.k8s.io", "events", ev, NOW) == [
        "2m",
        "Normal",
        "Started",
        "pod/p",
        "",
        "kubelet, n1",
        "Started container",
        "2m",
        1,
        "e",
    ]


# --- core odds and ends -------------------------------------------------------------------------


def test_simple_core_rows():
    meta = {"name": "x", "creationTimestamp": CREATED}
    assert row_cells("", "namespaces", {"metadata": meta, "status": {"phase": "Terminating"}}, NOW) == [
        "x",
        "Terminating",
        "5m",
    ]
    assert row_cells(
        "", "configmaps", {"metadata": meta, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}}, NOW
    ) == ["x", 3, "5m"]
    assert row_cells("", "secrets", {"metadata": meta, "type": "Opaque", "data": {"a": "eA=="}}, NOW) == [
        "x",
        "Opaque",
        1,
        "5m",
    ]
    assert row_cells("", "serviceaccounts", {"metadata": meta}, NOW) == ["x", 0, "5m"]
    assert row_cells("coordination.k8s.io", "leases", {"metadata": meta, "spec": {"holderIdentity": "n1"}}, NOW) == [
        "x",
        "n1",
        "5m",
    ]
    assert row_cells("coordination.k8s.io", "leases", {"metadata": meta, "spec": {}}, NOW) == ["x", "", "5m"]
    assert row_cells("example.com", "widgets", {"metadata": {"name": "w"}}, NOW) == ["w", "<unknown>"]


@pytest.mark.parametrize(
    "spec,status,cells",
    [
        (
            {
                "type": "ClusterIP",
                "clusterIPs": ["10.96.0.1"],
                "ports": [{"port": 443, "protocol": "TCP"}],
                "selector": {"b": "2", "a": "1"},
            },
            {},
            ["ClusterIP", "10.96.0.1", "<none>", "443/TCP", "a=1,b=2"],
        ),
        ({"type": "ClusterIP", "clusterIPs": ["None"]}, {}, ["ClusterIP", "None", "<none>", "<none>", "<none>"]),
        (
            {
                "type": "NodePort",
                "clusterIPs": ["10.96.0.2"],
                "externalIPs": ["1.2.3.4"],
                "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            },
            {},
            ["NodePort", "10.96.0.2", "1.2.3.4", "80:30080/TCP,53/UDP", "<none>"],
        ),
        (
            {"type": "LoadBalancer", "clusterIPs": ["10.96.0.3"]},
            {},
            ["LoadBalancer", "10.96.0.3", "<pending>", "<none>", "<none>"],
        ),
        (
            {"type": "LoadBalancer", "clusterIPs": ["10.96.0.3"], "externalIPs": ["9.9.9.9"]},
            {"loadBalancer": {"ingress": [{"ip": "5.5.5.5"}, {"hostname": "lb.example.com"}]}},
            ["LoadBalancer", "10.96.0.3", "5.5.5.5,lb.example.com,9.9.9.9", "<none>", "<none>"],
        ),
        (
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ["ExternalName", "<none>", "db.example.com", "<none>", "<none>"],
        ),
    ],
)
def test_service_cells(spec, status, cells):
    svc = {"metadata": {"name": "s", "creationTimestamp": CREATED}, "spec": spec, "status": status}
    c = row_cells("", "services", svc, NOW)
    assert [c[1], c[2], c[3], c[4], c[6]] == cells
    assert (c[0], c[5]) == ("s", "5m")


TEMPLATE = {"spec": {"containers": [{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "busybox"}]}}


def test_deployment_cells():
    d = {
        "metadata": {"name": "d", "creationTimestamp": CREATED},
        "spec": {
            "replicas": 3,
            "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
            },
            "template": TEMPLATE,
        },
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
    assert row_cells("apps", "deployments", d, NOW) == [
        "d",
        "2/3",
        3,
        2,
        "5m",
        "web,log",
        "nginx:1,busybox",
        "app=web,tier in (a,b)",
    ]
    d["spec"]["selector"] = {"matchExpressions": [{"key": "x", "operator": "Bogus"}]}
    assert row_cells("apps", "deployments", d, NOW)[7] == "<invalid>"
    assert row_cells("apps", "deployments", {"metadata": {"name": "e"}}, NOW)[1:4] == ["0/1", 0, 0]


def test_replicaset_cells():
    rs = {
        "metadata": {"name": "r", "creationTimestamp": CREATED},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": "abc"}},
            "template": TEMPLATE,
        },
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    assert row_cells("apps", "replicasets", rs, NOW) == [
        "r",
        2,
        2,
        1,
        "5m",
        "web,log",
        "nginx:1,busybox",
        "app=web,pod-template-hash=abc",
    ]
    rs["spec"]["selector"] = {}
    assert row_cells("apps", "replicasets", rs, NOW)[7] == "<none>"
    rs["spec"]["selector"] = {"matchExpressions": [{"key": "x", "operator": "Bogus"}]}
    assert row_cells("apps", "replicasets", rs, NOW)[7] == "<error>"


# --- the Table ------------------------------------------------------------------------------------

OBJ = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "cm",
        "namespace": "ns",
        "labels": {"a": "b"},
        "resourceVersion": "7",
        "creationTimestamp": CREATED,
    },
    "data": {"k": "v"},
}


@pytest.mark.parametrize(
    "include,want",
    [
        ("", {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": OBJ["metadata"]}),
        ("Metadata", {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": OBJ["metadata"]}),
        ("Object", OBJ),
        ("None", None),
    ],
)
def test_make_table_include_object(include, want):
    t = make_table("", "configmaps", [OBJ], include, NOW, {"resourceVersion": "9", "continue": "abc"})
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert t["metadata"] == {"resourceVersion": "9", "continue": "abc"}
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert t["rows"] == [{"cells": ["cm", 1, "5m"], "object": want}]


def test_make_table_without_headers_and_empty():
    t = make_table("", "configmaps", [OBJ], "", NOW, {"resourceVersion": "9"}, with_headers=False)
    assert t["columnDefinitions"] is None
    assert len(t["rows"]) == 1
    empty = make_table("apps", "deployments", [], "", NOW, {"resourceVersion": "1"})
    assert empty["rows"] == [] and len(empty["columnDefinitions"]) == 8


def test_make_table_does_not_share_column_dicts():
    t = make_table("", "pods", [], "", NOW, {})
    t["columnDefinitions"][0]["name"] = "mutated"
    assert COLUMNS[("", "pods")][0]["name"] == "Name"
