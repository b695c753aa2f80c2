"""The Store: resourceVersion rules, conflicts, the event log window, persistence."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from mockkube.apiserver.resources import registry
from mockkube.machinery import errors, jsoncodec
from mockkube.storage.cache import CachedEntry, JsonEntry, Packed, Packer
from mockkube.storage.db import make_engine, migrate
from mockkube.storage.store import Store


def open_store(url: str | None = "sqlite://", window: int = 5) -> Store:
    engine = make_engine(url)
    migrate(engine)
    s = Store(engine, registry().child(), event_window=window)
    s.load()
    return s


def cm(name: str, ns: str = "default", **data) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "uid": "u-" + name},
        "data": data,
    }


@pytest.fixture(params=["sqlite://", None], ids=["memory", "ephemeral-file"])
def store(request):
    s = open_store(request.param)
    yield s
    s.close()


@pytest.fixture
def rt():
    return registry().get("", "v1", "configmaps")


def test_every_write_bumps_one_global_rv(store, rt):
    pods = registry().get("", "v1", "pods")
    a = store.create(rt, cm("a"))
    b = store.create(pods, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}})
    c = store.update(rt, dict(a.obj, data={"x": "1"}), a.rv)
    d = store.delete(rt, "default", "a")
    assert [a.rv, b.rv, c.rv, d.rv] == [1, 2, 3, 4]
    assert store.rv == 4
    assert c.obj["metadata"]["resourceVersion"] == "3"


def test_stale_update_conflicts_and_changes_nothing(store, rt):
    a = store.create(rt, cm("a"))
    store.update(rt, dict(a.obj, data={"x": "1"}), a.rv)
    with pytest.raises(errors.APIError) as e:
        store.update(rt, dict(a.obj, data={"x": "2"}), a.rv)
    assert e.value.code == 409 and e.value.reason == "Conflict"
    assert store.get(rt, "default", "a").obj["data"] == {"x": "1"}
    assert store.rv == 2


def test_create_existing_is_already_exists(store, rt):
    store.create(rt, cm("a"))
    with pytest.raises(errors.APIError) as e:
        store.create(rt, cm("a"))
    assert e.value.code == 409 and e.value.reason == "AlreadyExists"


def test_delete_missing_is_not_found(store, rt):
    with pytest.raises(errors.APIError) as e:
        store.delete(rt, "default", "nope")
    assert e.value.code == 404


def test_list_is_sorted_by_namespace_then_name(store, rt):
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y")]:
        store.create(rt, cm(name, ns))
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.objects(rt)] == [
        ("a", "y"),
        ("a", "z"),
        ("b", "x"),
    ]
    assert [o["metadata"]["name"] for o in store.objects(rt, "a")] == ["y", "z"]


def test_selectable_field_index_follows_updates(store):
    pods = registry().get("", "v1", "pods")
    p = store.create(
        pods,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n1"}},
    )
    cache = store.cache(pods)
    assert cache.keys_with("spec.nodeName", "n1", None) == [("d", "p")]
    store.update(pods, dict(p.obj, spec={"nodeName": "n2"}), p.rv)
    assert cache.keys_with("spec.nodeName", "n1", None) == []
    assert cache.keys_with("spec.nodeName", "n2", "d") == [("d", "p")]


def test_the_cache_indexes_the_fields_components_query_alone(store):
    """Pods by spec.nodeName (upstream's watch cache index), Events by the involved object's
    name (kubectl describe), under either API group's name; other selectable fields are
    matched object by object (tests/api/test_verbs.py, test_event_recorder.py)."""
    reg = registry()
    pods, events, events_v1 = (
        reg.get(g, "v1", r) for g, r in (("", "pods"), ("", "events"), ("events.k8s.io", "events"))
    )
    assert store.cache(pods).indexed("spec.nodeName") and not store.cache(pods).indexed("status.podIP")
    cache = store.cache(events)
    assert cache.indexed("involvedObject.name") and cache.indexed("regarding.name")
    assert not cache.indexed("involvedObject.uid") and not cache.indexed("reason")
    assert events_v1.indexes("regarding.name") and not events_v1.indexes("reason")


def test_events_are_held_as_json_and_read_as_any_object(tmp_path):
    """Events (``held_as_json``): the cache keeps their JSON alone; reads, the field index,
    updates, deletes and a reopened store see them as before."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    store = open_store(url)
    events = registry().get("", "v1", "events")

    def event(name: str, pod: str) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": "d"},
            "involvedObject": {"kind": "Pod", "name": pod, "namespace": "d"},
            "reason": "Started",
        }

    made = store.create(events, event("e1", "p1"))
    held = store.get(events, "d", "e1")
    assert isinstance(held, JsonEntry) and held.raw == made.raw and held.obj == made.obj
    assert isinstance(held.held, Packed)  # deflated: Events are five a pod, kept an hour
    assert held.obj is not held.obj  # decoded at each read, kept nowhere
    cache = store.cache(events)
    assert cache.keys_with("involvedObject.name", "p1", "d") == [("d", "e1")]
    store.update(events, dict(made.obj, involvedObject=dict(made.obj["involvedObject"], name="p2")), made.rv)
    assert cache.keys_with("involvedObject.name", "p1", None) == []
    assert cache.keys_with("involvedObject.name", "p2", None) == [("d", "e1")]
    assert store.get(events, "d", "e1").obj["involvedObject"]["name"] == "p2"
    store.create(events, event("e2", "p2"))
    store.close()
    store = open_store(url)
    assert isinstance(store.get(events, "d", "e2"), JsonEntry)
    assert store.cache(events).keys_with("involvedObject.name", "p2", "d") == [("d", "e1"), ("d", "e2")]
    gone = store.delete(events, "d", "e1")
    assert gone.obj["metadata"]["name"] == "e1" and store.get(events, "d", "e1") is None
    assert store.cache(events).keys_with("involvedObject.name", "p2", "d") == [("d", "e2")]
    store.close()


async def test_watch_replays_window_and_410s_before_it(store, rt):
    a = store.create(rt, cm("a"))
    for i in range(3):
        a = store.update(rt, dict(a.obj, data={"i": str(i)}), a.rv)
    w, backlog = store.watch(rt, None, 2, None)
    assert [(t, e.rv) for t, e in backlog] == [("MODIFIED", 3), ("MODIFIED", 4)]
    w.close()
    for i in range(10):  # the window holds 5 events
        a = store.update(rt, dict(a.obj, data={"j": str(i)}), a.rv)
    with pytest.raises(errors.APIError) as e:
        store.watch(rt, None, 2, None)
    assert e.value.code == 410 and e.value.reason == "Expired"
    w, backlog = store.watch(rt, None, store.rv - 2, None)
    assert len(backlog) == 2
    w.close()
    with pytest.raises(errors.APIError) as e:
        store.watch(rt, None, store.rv + 5, None)
    assert e.value.code == 504


async def test_resumed_watch_gets_every_event_from_the_json_the_log_holds(rt):
    """The log keeps each version as the JSON the cache held (no dicts): a watch resumed
    from inside it still gets every change, with selector transitions as upstream's."""
    store = open_store(window=50)
    start = store.rv
    a = store.create(rt, dict(cm("a", x="0"), metadata={"name": "a", "namespace": "default", "labels": {"x": "1"}}))
    written = [a]
    for labels in ({"x": "2"}, {"x": "1"}):  # stops matching x=1, then matches again
        obj = dict(a.obj, metadata=dict(a.obj["metadata"], labels=labels))
        a = store.update(rt, obj, a.rv)
        written.append(a)
    store.create(rt, cm("elsewhere", "kube-system"))
    written.append(store.delete(rt, "default", "a"))
    log = store._logs[rt.storage_key]
    current = {id(e) for e in store.cache(rt).entries.values()}
    # no dict but the cache's current versions': superseded ones and the deleted state are packed JSON
    held = [x for _, after, before in log._events for x in (after, before) if x is not None]
    assert all(id(x) in current or getattr(x, "_obj", None) is None for x in held)
    assert (
        sum(isinstance(x.held, Packed) for x in held) == 7
    )  # a's three versions (each after, then before), the deleted

    def x1(o: dict) -> bool:
        return o["metadata"].get("labels", {}).get("x") == "1"

    w, backlog = store.watch(rt, "default", start, x1)
    assert [(t, e.rv) for t, e in backlog] == [
        ("ADDED", written[0].rv),
        ("DELETED", written[1].rv),
        ("ADDED", written[2].rv),
        ("DELETED", written[3].rv),
    ]
    w.close()
    w, backlog = store.watch(rt, "default", start, None)
    assert [t for t, _ in backlog] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    assert [e.obj for _, e in backlog] == [e.obj for e in written]
    assert [e.raw for _, e in backlog] == [e.raw for e in written]
    w.close()
    store.close()


async def test_live_events_reach_watchers_filtered_by_namespace(store, rt):
    w, _ = store.watch(rt, "default", store.rv, None)
    store.create(rt, cm("other", "kube-system"))
    store.create(rt, cm("mine", "default"))
    typ, entry = await asyncio.wait_for(w.queue.get(), 1)
    assert (typ, entry.obj["metadata"]["name"]) == ("ADDED", "mine")
    assert w.queue.empty()
    w.close()


def test_persistence_across_reopen(tmp_path, rt):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    s = open_store(url)
    a = s.create(rt, cm("kept", x="1"))
    s.update(rt, dict(a.obj, data={"x": "2"}), a.rv)
    s.create(rt, cm("gone"))
    s.delete(rt, "default", "gone")
    last = s.rv
    s.close()
    s2 = open_store(url)
    try:
        assert s2.rv == last
        assert s2.get(rt, "default", "kept").obj["data"] == {"x": "2"}
        assert s2.get(rt, "default", "gone") is None
        w, backlog = s2.watch(rt, None, last - 2, None)  # the event log survived too
        assert [t for t, _ in backlog] == ["ADDED", "DELETED"][-len(backlog) :]
        w.close()
        b = s2.create(rt, cm("after"))
        assert b.rv == last + 1
    finally:
        s2.close()


def test_failed_database_write_leaves_cache_untouched(store, rt, monkeypatch):
    a = store.create(rt, cm("a", x="1"))

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    from sqlalchemy.engine import Connection

    from mockkube.storage import store as store_mod

    monkeypatch.setattr(Connection, "execute", boom)
    monkeypatch.setattr(store_mod._Compiled, "run", boom)  # SQLite's pre-compiled write path
    with pytest.raises(RuntimeError):
        store.update(rt, dict(a.obj, data={"x": "2"}), a.rv)
    assert store.get(rt, "default", "a").obj["data"] == {"x": "1"}
    assert store.rv == a.rv
    monkeypatch.undo()
    b = store.update(rt, dict(a.obj, data={"x": "3"}), a.rv)  # the write connection still works
    assert b.rv == a.rv + 1


def test_failed_event_row_rolls_back_the_object_row(tmp_path, rt, monkeypatch):
    """The object row and its event row commit together or not at all (a database file: an
    in-memory one writes no event rows, nothing would read them)."""
    from mockkube.storage import store as store_mod

    store = open_store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    a = store.create(rt, cm("a", x="1"))
    real = store_mod._Compiled.run

    def fail_on_event(self, cursor, row):
        if self.sql.upper().startswith("INSERT INTO EVENTS"):
            raise RuntimeError("disk full")
        return real(self, cursor, row)

    if store._sqlite:
        monkeypatch.setattr(store_mod._Compiled, "run", fail_on_event)
        with pytest.raises(RuntimeError):
            store.update(rt, dict(a.obj, data={"x": "2"}), a.rv)
        monkeypatch.undo()
    b = store.update(rt, dict(a.obj, data={"x": "3"}), a.rv)  # the object row kept rv a.rv
    assert b.rv == a.rv + 1 and store.get(rt, "default", "a").obj["data"] == {"x": "3"}
    store.close()


def test_a_deleted_event_shares_the_last_state_it_carries(store, rt):
    """A deletion holds the object's last state twice over (the object with the delete's rv,
    and ``prev``) for as long as the watch history keeps it: one copy of its contents, not two
    (TTL-deleted Events filled the soak benchmark's history with second copies). The history
    keeps the last state as the very bytes the cache held, and the deleted object shares all
    but its metadata with the last state."""
    a = store.create(rt, cm("a", k="v" * 100))
    held = store.get(rt, "default", "a")
    gone = store.delete(rt, "default", "a")
    log = store._logs[rt.storage_key]
    typ, after, before = log._events[-1]
    assert typ == "DELETED" and before is held and log._events[-2][1] is held  # the ADDED event's entry
    assert isinstance(after.held, Packed) and after.raw == gone.raw and before.raw == a.raw
    assert gone.obj["data"] is a.obj["data"]  # shared, not a parsed copy
    assert gone.obj["metadata"]["resourceVersion"] == str(gone.rv)
    assert a.obj["metadata"]["resourceVersion"] == str(a.rv)  # the last state is untouched
    assert jsoncodec.loads(gone.raw) == gone.obj


def test_the_cache_keeps_json_only_while_the_history_holds_its_event(rt):
    """A current version's JSON is the bytes its event holds; once the event leaves the
    window the cache holds the dict alone and a read encodes the exact bytes written."""
    store = open_store(window=3)
    a = store.create(rt, cm("a", k="v"))
    held = store.get(rt, "default", "a")
    assert isinstance(held, CachedEntry) and held.held is a.raw and held.obj is a.obj
    for i in range(3):
        store.create(rt, cm(f"b{i}"))  # a's ADDED leaves the window
    assert held._held is None and held.obj is a.obj and held.raw == a.raw
    w, backlog = store.watch(rt, None, store.rv - 3, None)
    assert [e.obj["metadata"]["name"] for _, e in backlog] == ["b0", "b1", "b2"]
    assert backlog[0][1] is store.get(rt, "default", "b0")  # a current version is not decoded again
    w.close()
    b = store.update(rt, dict(a.obj, metadata=dict(a.obj["metadata"]), data={"k": "w"}), a.rv)
    # superseded: packed for the history from its dict, which goes
    assert held._obj is None and isinstance(held.held, Packed) and held.raw == a.raw and held.obj == a.obj
    w, backlog = store.watch(rt, None, b.rv - 1, lambda o: o["data"].get("k") == "v")
    assert [(t, e.raw) for t, e in backlog] == [("DELETED", b.raw)]  # the packed version told it matched before
    w.close()
    store.close()


def test_packer_round_trips_and_follows_what_it_packs():
    """A dictionary of a like object makes a version a tenth of its size; an object unlike it
    (packed badly) becomes the dictionary, at most once in ``EVERY`` packs, and what was
    packed with an earlier one still unpacks."""

    def obj(kind: str, i: int) -> bytes:
        digests = [hashlib.sha256(f"{kind}{j}".encode()).hexdigest() for j in range(20)]
        return jsoncodec.dumps({"kind": kind, "metadata": {"name": f"{kind}-{i}"}, "spec": digests})

    packer = Packer()
    first = packer.pack(obj("Pod", 0))
    pods = [packer.pack(obj("Pod", i)) for i in range(1, Packer.EVERY + 1)]
    assert first.zdict == b"" and all(p.zdict == obj("Pod", 0) for p in pods)
    assert all(len(p.data) * 10 < len(obj("Pod", 1)) for p in pods)
    lease = packer.pack(obj("Lease", 0))  # packs badly: the next dictionary
    leases = [packer.pack(obj("Lease", i)) for i in range(1, 3)]
    assert lease.zdict == obj("Pod", 0) and all(p.zdict == obj("Lease", 0) for p in leases)
    assert all(len(p.data) * 10 < len(obj("Lease", 1)) for p in leases)
    assert packer.pack(obj("Pod", 99)).zdict == obj("Lease", 0)  # not again before EVERY packs
    assert [p.unpack() for p in (first, *pods, lease, *leases)] == [
        *(obj("Pod", i) for i in range(Packer.EVERY + 1)),
        *(obj("Lease", i) for i in range(3)),
    ]


def test_equal_parts_of_specs_are_held_once(store):
    """Pods made from one template hold their containers and tolerations once, pods started
    together their conditions; what each reads and what is written stay as they were."""
    pods = registry().get("", "v1", "pods")

    def pod(name: str, image: str) -> dict:
        spec = {"containers": [{"name": "app", "image": image}], "tolerations": [{"operator": "Exists"}]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "d"}, "spec": spec}

    given = pod("b", "pause")
    a, b, c = store.create(pods, pod("a", "pause")), store.create(pods, given), store.create(pods, pod("c", "other"))
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIP": "10.0.0.1"}
    a = store.update(pods, dict(a.obj, status=status), a.rv)
    b = store.update(
        pods, dict(b.obj, status=dict(status, podIP="10.0.0.2", conditions=[{"type": "Ready", "status": "True"}])), b.rv
    )
    assert b.obj["status"]["conditions"] is a.obj["status"]["conditions"] and b.obj["status"]["podIP"] == "10.0.0.2"
    assert b.obj["spec"]["containers"] is a.obj["spec"]["containers"]
    assert c.obj["spec"]["tolerations"] is a.obj["spec"]["tolerations"]
    assert c.obj["spec"]["containers"] is not a.obj["spec"]["containers"]
    assert store.get(pods, "d", "b").obj is b.obj and jsoncodec.loads(b.raw) == b.obj
    assert b.obj["spec"] == pod("b", "pause")["spec"]
    assert given["spec"]["containers"] is not a.obj["spec"]["containers"]  # the caller's object is left alone


def test_json_the_standard_library_wrote_is_kept():
    """Reads re-encode a dict only where orjson writes the very bytes stored (``dumps`` falls
    back to the standard library for some floats)."""
    small = {"metadata": {"name": "f"}, "x": 1e-05}
    raw = jsoncodec.dumps(small)
    assert raw == b'{"metadata":{"name":"f"},"x":1e-05}' and not jsoncodec.is_redumpable(small, raw)
    entry = CachedEntry(small, raw, 1)
    entry.forget_raw()
    assert entry.held is raw
    plain = {"metadata": {"name": "p"}, "x": 0.5}
    entry = CachedEntry(plain, jsoncodec.dumps(plain), 1)
    entry.forget_raw()
    assert entry._held is None and entry.raw == jsoncodec.dumps(plain)
