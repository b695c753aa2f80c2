"""The Store: resourceVersion rules, conflicts, the event log window, persistence."""

from __future__ import annotations

import asyncio

import pytest

from mockkube.apiserver.resources import registry
from mockkube.machinery import errors, jsoncodec
from mockkube.storage.db import make_engine, migrate
from mockkube.storage.store import Store


def open_store(url: str = "sqlite://", window: int = 5) -> Store:
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


@pytest.fixture
def store():
    s = open_store()
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
    """The DELETED event holds the object's last state twice over (the object with the delete's
    rv, and ``prev``) for as long as the watch history keeps it: one copy of its contents,
    not two (TTL-deleted Events filled the soak benchmark's history with second copies)."""
    a = store.create(rt, cm("a", k="v" * 100))
    gone = store.delete(rt, "default", "a")
    ev = store._logs[rt.storage_key]._events[-1]
    assert ev.type == "DELETED" and ev.entry is gone and ev.prev is a.obj
    assert gone.obj["data"] is a.obj["data"]  # shared, not a parsed copy
    assert gone.obj["metadata"]["resourceVersion"] == str(gone.rv)
    assert a.obj["metadata"]["resourceVersion"] == str(a.rv)  # the last state is untouched
    assert jsoncodec.loads(gone.raw) == gone.obj
