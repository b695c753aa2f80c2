"""VolumeBinding against upstream's volume_binding_test.go TestVolumeBinding cases (the
filter part; scoring by storage capacity is not simulated), and the decisions Reserve and
PreBind carry out."""

from __future__ import annotations

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo
from mockkube.scheduler.plugins import volumebinding as vb

IMMEDIATE_SC = {"metadata": {"name": "immediate-sc"}, "volumeBindingMode": "Immediate", "provisioner": "p"}
WAIT_SC = {
    "metadata": {"name": "wait-sc"},
    "volumeBindingMode": "WaitForFirstConsumer",
    "provisioner": vb.NO_PROVISIONER,
}
WAIT_PROVISION_SC = {"metadata": {"name": "wait-prov"}, "volumeBindingMode": "WaitForFirstConsumer", "provisioner": "p"}
CLASSES = {c["metadata"]["name"]: c for c in (IMMEDIATE_SC, WAIT_SC, WAIT_PROVISION_SC)}


def node(name: str = "node-a", **labels) -> NodeInfo:
    return NodeInfo({"metadata": {"name": name, "labels": labels}, "status": {"allocatable": {"pods": "110"}}})


def pvc(name: str, volume: str = "", sc: str = "", size: str = "1Gi", uid: str = "") -> dict:
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    if sc:
        spec["storageClassName"] = sc
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}, "spec": spec}


def pv(name: str, sc: str = "", size: str = "1Gi", claim: dict | None = None, **affinity) -> dict:
    spec: dict = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": sc}
    if affinity:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in affinity.items()]}
                ]
            }
        }
    status = {"phase": "Available"}
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim["metadata"]["name"], "uid": claim["metadata"]["uid"]}
        status = {"phase": "Bound"}
    return {"metadata": {"name": name}, "spec": spec, "status": status}


def pod(*claims: str) -> dict:
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return {"metadata": {"name": "pod-a", "namespace": "default", "uid": "pod-uid"}, "spec": {"volumes": vols}}


def plugin(claims: list[dict], volumes: list[dict]) -> vb.VolumeBinding:
    cs = {c["metadata"]["name"]: c for c in claims}
    vs = {v["metadata"]["name"]: v for v in volumes}
    return vb.VolumeBinding(
        lambda ns, n: cs.get(n), lambda n: vs.get(n), lambda: list(vs.values()), lambda n: CLASSES.get(n)
    )


BOUND_A = pvc("pvc-a", volume="pv-a")
BOUND_B = pvc("pvc-b", volume="pv-b")
PV_A = pv("pv-a", claim=BOUND_A, foo="bar")
PV_B = pv("pv-b", claim=BOUND_B, foo="bar")
UNR = fw.UNSCHEDULABLE_AND_UNRESOLVABLE

# (name, pod, node, claims, volumes, PreFilter (code, reasons) or None, Filter (code, reasons) or None)
CASES = [
    ("pod has not pvcs", {"metadata": {"name": "p"}, "spec": {}}, node(), [], [], "skip", None),
    ("all bound", pod("pvc-a"), node(foo="bar"), [BOUND_A], [PV_A], None, None),
    (
        "all bound with local volumes",
        pod("pvc-a", "pvc-b"),
        node(foo="bar"),
        [BOUND_A, BOUND_B],
        [PV_A, PV_B],
        None,
        None,
    ),
    (
        "PVC does not exist",
        pod("pvc-a"),
        node(),
        [],
        [],
        (UNR, 'persistentvolumeclaim "pvc-a" not found'),
        None,
    ),
    (
        "Part of PVCs do not exist",
        pod("pvc-a", "pvc-b"),
        node(),
        [BOUND_A],
        [PV_A],
        (UNR, 'persistentvolumeclaim "pvc-b" not found'),
        None,
    ),
    (
        "immediate claims not bound",
        pod("pvc-i"),
        node(),
        [pvc("pvc-i", sc="immediate-sc")],
        [],
        (UNR, vb.ERR_IMMEDIATE),
        None,
    ),
    (
        "unbound claims no matches",
        pod("pvc-w"),
        node(),
        [pvc("pvc-w", sc="wait-sc")],
        [],
        None,
        (UNR, vb.ERR_BIND_CONFLICT),
    ),
    (
        "bound and unbound unsatisfied",
        pod("pvc-a", "pvc-w"),
        node(foo="barbar"),
        [BOUND_A, pvc("pvc-w", sc="wait-sc")],
        [PV_A, pv("pv-w", sc="wait-sc", foo="bar")],
        None,
        (UNR, vb.ERR_NODE_CONFLICT, vb.ERR_BIND_CONFLICT),
    ),
    (
        "pv not found",
        pod("pvc-a"),
        node(),
        [BOUND_A],
        [],
        None,
        (UNR, vb.ERR_PV_NOT_EXIST),
    ),
    (
        "unbound claim matches an available volume on the node",
        pod("pvc-w"),
        node(foo="bar"),
        [pvc("pvc-w", sc="wait-sc")],
        [pv("pv-w", sc="wait-sc", foo="bar")],
        None,
        None,
    ),
    (
        "unbound claim: the volume is too small",
        pod("pvc-w"),
        node(foo="bar"),
        [pvc("pvc-w", sc="wait-sc", size="2Gi")],
        [pv("pv-w", sc="wait-sc", foo="bar")],
        None,
        (UNR, vb.ERR_BIND_CONFLICT),
    ),
    (
        "unbound claim provisioned where no volume fits",
        pod("pvc-w"),
        node(foo="baz"),
        [pvc("pvc-w", sc="wait-prov")],
        [pv("pv-w", sc="wait-prov", foo="bar")],
        None,
        None,
    ),
]


@pytest.mark.parametrize("name,p,n,claims,volumes,pre,filt", CASES, ids=[c[0] for c in CASES])
def test_volume_binding(name, p, n, claims, volumes, pre, filt):
    plug = plugin(claims, volumes)
    state = fw.CycleState()
    st = plug.pre_filter(state, p)
    if pre == "skip":
        assert st is not None and st.code == fw.SKIP
        return
    if pre is not None:
        assert st is not None and (st.code, *st.reasons) == pre
        return
    assert st is None
    st = plug.filter(state, p, n)
    if filt is None:
        assert st is None or st.ok
    else:
        assert st is not None and (st.code, *st.reasons) == filt


def test_two_claims_of_a_pod_take_two_volumes_the_smallest_first_and_reserve_assumes_them():
    a, b = pvc("a", sc="wait-sc"), pvc("b", sc="wait-sc")
    small, big = pv("small", sc="wait-sc", size="1Gi"), pv("big", sc="wait-sc", size="5Gi")
    plug = plugin([a, b], [big, small])
    state = fw.CycleState()
    assert plug.pre_filter(state, pod("a", "b")) is None
    assert plug.filter(state, pod("a", "b"), node()) is None
    chosen = [(c["metadata"]["name"], v["metadata"]["name"]) for c, v in state[vb.NAME].decisions["node-a"]]
    assert chosen == [("a", "small"), ("b", "big")]
    plug.reserve(state, pod("a", "b"), "node-a")
    assert plug.assumed == {"small": "pod-uid", "big": "pod-uid"}
    # another pod finds both taken until Unreserve
    other = dict(pod("c"), metadata={"name": "o", "namespace": "default", "uid": "other"})
    plug2_state = fw.CycleState()
    plug.get_claim = lambda ns, n: pvc("c", sc="wait-sc") if n == "c" else None
    assert plug.pre_filter(plug2_state, other) is None
    assert plug.filter(plug2_state, other, node()).reasons == [vb.ERR_BIND_CONFLICT]
    plug.unreserve(state, pod("a", "b"), "node-a")
    assert plug.assumed == {} and plug.filter(plug2_state, other, node()) is None


def test_allowed_topologies_limit_where_a_class_provisions():
    sc = dict(WAIT_PROVISION_SC, allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["z1"]}]}])
    CLASSES["topo"] = dict(sc, metadata={"name": "topo"})
    try:
        plug = plugin([pvc("w", sc="topo")], [])
        state = fw.CycleState()
        assert plug.pre_filter(state, pod("w")) is None
        assert plug.filter(state, pod("w"), node("n1", zone="z1")) is None
        assert plug.filter(state, pod("w"), node("n2", zone="z2")).reasons == [vb.ERR_BIND_CONFLICT]
    finally:
        del CLASSES["topo"]
