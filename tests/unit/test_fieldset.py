"""Field sets: FieldsV1 round trips, set algebra, and fields_of over real schemas."""

import copy

import pytest

from mockkube.machinery import schema as S
from mockkube.machinery.fieldset import (
    FieldSet,
    FieldSetError,
    field,
    fields_of,
    key,
    path_str,
    value_element,
)

CM = S.for_kind("", "v1", "ConfigMap")
POD = S.for_kind("", "v1", "Pod")
DEP = S.for_kind("apps", "v1", "Deployment")
CLAIM = S.for_kind("resource.k8s.io", "v1", "ResourceClaim")


def f(*names):
    return tuple(field(n) for n in names)


@pytest.mark.parametrize(
    "fields_v1",
    [
        {"f:data": {"f:k": {}}},
        {"f:data": {".": {}, "f:a": {}, "f:b": {}}},
        {"f:spec": {"f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}, "f:name": {}}}}},
        {"f:metadata": {"f:finalizers": {".": {}, 'v:"x"': {}, 'v:"y"': {}}}},
        {"f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {}}},
        {"f:list": {"i:0": {}, "i:2": {}}},
    ],
)
def test_fields_v1_round_trip(fields_v1):
    assert FieldSet.from_fields_v1(fields_v1).to_fields_v1() == fields_v1


def test_fields_v1_member_with_children_gets_dot_first_and_sorted_keys():
    s = FieldSet([f("data", "b"), f("data"), f("data", "a"), (field("spec"), key(name="c"))])
    out = s.to_fields_v1()
    assert list(out) == ["f:data", "f:spec"]
    assert list(out["f:data"]) == [".", "f:a", "f:b"]
    assert out["f:spec"] == {'k:{"name":"c"}': {}}


def test_decode_rejects_malformed_and_skips_unknown():
    with pytest.raises(FieldSetError):
        FieldSet.from_fields_v1({"x": {}})
    assert FieldSet.from_fields_v1({"q:zz": {}, "f:a": {}}) == FieldSet([f("a")])


@pytest.mark.parametrize(
    "op,expected",
    [
        ("union", {f("a"), f("a", "b"), f("c")}),
        ("intersection", {f("a")}),
        ("difference", {f("a", "b")}),
    ],
)
def test_set_algebra(op, expected):
    x = FieldSet([f("a"), f("a", "b")])
    y = FieldSet([f("a"), f("c")])
    assert getattr(x, op)(y).paths == expected


def test_recursive_difference_drops_descendants():
    x = FieldSet([f("a", "b"), f("a", "c", "d"), f("e")])
    assert x.recursive_difference(FieldSet([f("a", "c")])).paths == {f("a", "b"), f("e")}
    assert x.difference(FieldSet([f("a", "c")])) == x


@pytest.mark.parametrize(
    "path,text",
    [
        (f("data", "k"), ".data.k"),
        (f("metadata", "labels", "app"), ".metadata.labels.app"),
        ((field("spec"), field("containers"), key(name="a"), field("image")), '.spec.containers[name="a"].image'),
        ((field("ports"), key(containerPort=80, protocol="TCP")), '.ports[containerPort=80,protocol="TCP"]'),
        ((field("finalizers"), value_element("x")), '.finalizers[="x"]'),
    ],
)
def test_path_rendering(path, text):
    assert path_str(path) == text


def test_fields_of_configmap_map_entries_are_leaves():
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"k": "v"}}
    assert fields_of(obj, CM).paths == {
        f("apiVersion"),
        f("kind"),
        f("metadata", "name"),
        f("metadata", "labels", "a"),
        f("data", "k"),
    }


def test_fields_of_pod_containers_keyed_by_name_and_atomic_lists():
    pod = {
        "spec": {
            "containers": [{"name": "a", "image": "i", "args": ["x", "y"], "ports": [{"containerPort": 80}]}],
            "nodeSelector": {"k": "v"},
        }
    }
    c = (field("spec"), field("containers"), key(name="a"))
    port = c + (field("ports"), key(containerPort=80, protocol="TCP"))
    assert fields_of(pod, POD).paths == {
        c,
        c + (field("name"),),
        c + (field("image"),),
        c + (field("args"),),
        port,
        port + (field("containerPort"),),
        f("spec", "nodeSelector"),  # x-kubernetes-map-type: atomic → one leaf
    }


def test_fields_of_empty_struct_and_null_are_members():
    d = {"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {}}]}}, "paused": None}}
    got = fields_of(d, DEP).paths
    assert f("spec", "paused") in got
    c = f("spec", "template", "spec", "containers") + (key(name="a"),)
    assert c + (field("resources"),) in got


def test_fields_of_resource_claim_requests_atomic_status_devices_keyed():
    # Upstream DeviceClaim.requests is +listType=atomic; status.devices is a map keyed by
    # driver/device/pool.
    claim = {
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}]}
        },
        "status": {"devices": [{"driver": "d", "pool": "p", "device": "g0", "conditions": []}]},
    }
    got = fields_of(claim, CLAIM).paths
    dev = f("status", "devices") + (key(driver="d", pool="p", device="g0"),)
    assert got == {
        f("spec", "devices", "requests"),
        dev,
        dev + (field("driver"),),
        dev + (field("pool"),),
        dev + (field("device"),),
    }  # [] map-list: nothing
    assert path_str(dev) == '.status.devices[device="g0",driver="d",pool="p"]'


def test_fields_of_set_list_uses_values():
    got = fields_of({"metadata": {"finalizers": ["a", "b"]}}, CM).paths
    assert got == {
        f("metadata", "finalizers") + (value_element("a"),),
        f("metadata", "finalizers") + (value_element("b"),),
    }


def test_fields_of_rejects_keyless_item():
    with pytest.raises(FieldSetError):
        fields_of({"spec": {"containers": [{"image": "x"}]}}, POD)


def test_iteration_order_members_then_children():
    s = FieldSet([f("b"), f("a", "x"), f("c")])
    assert [path_str(p) for p in s] == [".b", ".c", ".a.x"]


def test_fields_v1_memo_round_trips_and_ignores_lookalikes():
    """The encode/decode memo: the very dict encoded decodes to its set; an equal copy and a
    changed copy are decoded from their content."""
    import copy

    fs = FieldSet.of("spec.replicas", "metadata.labels")
    v1 = fs.to_fields_v1()
    assert fs.to_fields_v1() is v1
    assert FieldSet.from_fields_v1(v1).paths == fs.paths
    same = copy.deepcopy(v1)
    assert FieldSet.from_fields_v1(same).paths == fs.paths
    changed = copy.deepcopy(v1)
    del changed["f:spec"]
    assert FieldSet.from_fields_v1(changed).paths == FieldSet.of("metadata.labels").paths


def test_the_encoding_memo_keeps_what_objects_hold_and_drops_what_none_does(monkeypatch):
    """One entry per pod that ever ran (its IP, its owner's uid) filled the memo for hours —
    ~16 KB each up to 50,000 — until the soak benchmark's server had crept 2-3 MB a minute:
    once the memo has doubled, the encodings no object holds any more are dropped."""
    from mockkube.machinery import fieldset as fsm

    monkeypatch.setattr(fsm, "_ENCODED", {})
    monkeypatch.setattr(fsm, "_DECODED", {})
    monkeypatch.setattr(fsm, "_SWEEP_FLOOR", 8)
    monkeypatch.setattr(fsm, "_sweep_at", 8)

    def pod_status(ip: str) -> FieldSet:
        return FieldSet([(("f", "status"), ("f", "podIPs"), ("k", (("ip", f'"{ip}"'),)))])

    held = [{"fieldsV1": pod_status(f"10.0.0.{i}").to_fields_v1()} for i in range(4)]  # pods alive
    for i in range(4, 8):
        pod_status(f"10.0.0.{i}").to_fields_v1()  # pods gone: nothing holds their encoding
    assert len(fsm._ENCODED) == 8
    pod_status("10.0.0.8").to_fields_v1()  # the memo doubled from the floor: swept
    assert len(fsm._ENCODED) == 5 and len(fsm._DECODED) == 5
    assert fsm._sweep_at == 8
    for i, obj in enumerate(held):  # what objects hold is still found by identity
        assert FieldSet.from_fields_v1(obj["fieldsV1"]) is fsm._DECODED[id(obj["fieldsV1"])][1]
        assert pod_status(f"10.0.0.{i}").to_fields_v1() is obj["fieldsV1"]
    assert FieldSet.from_fields_v1(held[0]["fieldsV1"]) == pod_status("10.0.0.0")


def _pod_status(ip: str) -> FieldSet:
    """A kubelet's status set: the same for every pod but its IP."""
    cond = [("k", (("type", f'"{t}"'),)) for t in ("Initialized", "Ready")]
    paths = [(("f", "status"), ("f", "phase")), (("f", "status"), ("f", "podIPs"))]
    for c in cond:
        paths += [(("f", "status"), ("f", "conditions"), c)]
        paths += [(("f", "status"), ("f", "conditions"), c, ("f", f)) for f in ("status", "type")]
    ip_item = (("f", "status"), ("f", "podIPs"), ("k", (("ip", f'"{ip}"'),)))
    return FieldSet(paths + [ip_item, ip_item + (("f", "ip"),)])


def test_encodings_of_one_shape_share_their_subtrees():
    """A pod's own set (the kubelet's names its IP) held its whole FieldsV1 tree as dicts of its
    own: now every subtree but those on the way to the IP is one dict for all pods."""
    a, b = _pod_status("10.0.0.1").to_fields_v1(), _pod_status("10.0.0.2").to_fields_v1()
    assert a is not b and a != b
    assert a["f:status"]["f:conditions"] is b["f:status"]["f:conditions"]
    ka, kb = 'k:{"ip":"10.0.0.1"}', 'k:{"ip":"10.0.0.2"}'
    assert a["f:status"]["f:podIPs"][ka] is b["f:status"]["f:podIPs"][kb]
    assert a["f:status"]["f:podIPs"] is not b["f:status"]["f:podIPs"]
    # the encoding is upstream's all the same
    assert a["f:status"]["f:podIPs"] == {".": {}, ka: {".": {}, "f:ip": {}}}
    assert FieldSet.from_fields_v1(copy.deepcopy(a)) == _pod_status("10.0.0.1")


def test_the_memo_is_bounded_by_use_and_shared_subtrees_go_with_their_objects(monkeypatch):
    """Beyond its bound the memo forgets the least recently encoded set, even one an object
    still holds (whose FieldsV1 then decodes anew); the sets written all the time stay."""
    from mockkube.machinery import fieldset as fsm

    monkeypatch.setattr(fsm, "_ENCODED", {})
    monkeypatch.setattr(fsm, "_DECODED", {})
    monkeypatch.setattr(fsm, "_MEMO_SIZE", 4)
    monkeypatch.setattr(fsm, "_SHARED", {})
    monkeypatch.setattr(fsm, "_SWEEP_FLOOR", 8)
    monkeypatch.setattr(fsm, "_shared_sweep_at", 8)
    common = FieldSet.of("spec.containers", "metadata.labels")
    held = []
    for i in range(10):
        held.append({"fieldsV1": _pod_status(f"10.0.1.{i}").to_fields_v1()})
        common_v1 = common.to_fields_v1()  # every write encodes the shared set too
        assert len(fsm._ENCODED) <= 4 and len(fsm._DECODED) == len(fsm._ENCODED)
    assert common.to_fields_v1() is common_v1  # used all along: never evicted
    first = held[0]["fieldsV1"]
    assert id(first) not in fsm._DECODED  # evicted while a pod still holds it
    assert FieldSet.from_fields_v1(first) == _pod_status("10.0.1.0")
    assert held[-1]["fieldsV1"] is _pod_status("10.0.1.9").to_fields_v1()
    # the shared subtrees follow the objects alive: those of the pods gone are swept
    tables = len(fsm._SHARED)
    del held[:]
    fsm._ENCODED.clear()
    fsm._DECODED.clear()
    fsm._sweep_shared()
    assert len(fsm._SHARED) < tables
    named = {name for k in fsm._SHARED for name in k if isinstance(name, str) and '"ip"' in name}
    assert named == {'k:{"ip":"10.0.1.0"}'}  # only the IP of the pod still held (``first``)
    assert FieldSet.from_fields_v1(first) == _pod_status("10.0.1.0")


def test_the_memo_s_sets_share_their_paths_and_are_sized_to_them():
    """A running pod's kubelet set stays in the memo for the pod's next write: it shares every
    path but its IP's with the other pods' sets, and its frozenset is not the doubled table a
    set grown path by path gets."""
    import sys

    from mockkube.machinery import fieldset as fsm

    a, b = _pod_status("10.0.2.1").to_fields_v1(), _pod_status("10.0.2.2").to_fields_v1()
    sa, sb = fsm._DECODED[id(a)][1], fsm._DECODED[id(b)][1]
    phase = (("f", "status"), ("f", "phase"))
    pa = next(p for p in sa.paths if p == phase)
    pb = next(p for p in sb.paths if p == phase)
    assert pa is pb
    assert sys.getsizeof(sa.paths) <= sys.getsizeof(frozenset(set(sa.paths)))
    assert FieldSet.from_fields_v1(a) is sa  # found by identity: no decode
