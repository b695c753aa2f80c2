"""Resources defined at run time: a server's registry is a child of the built-in one."""

from __future__ import annotations

from mockkube.apiserver.resources import registry
from mockkube.machinery.registry import ResourceType
from mockkube.storage.db import make_engine, migrate
from mockkube.storage.store import Store


def widget(version: str = "v1", kind: str = "Widget") -> ResourceType:
    return ResourceType("example.com", version, kind, "widgets", namespaced=True)


def test_child_serves_builtins_and_its_own_additions_only():
    base = registry()
    child = base.child()
    rt = child.add(widget())
    assert child.get("", "v1", "pods") is base.get("", "v1", "pods")
    assert child.get("example.com", "v1", "widgets") is rt
    assert child.for_api_version("example.com/v1", "Widget") is rt
    assert ("example.com", "v1") in child.group_versions()
    assert base.get("example.com", "v1", "widgets") is None
    assert registry().child().get("example.com", "v1", "widgets") is None


def test_add_replaces_and_remove_stops_serving_and_listeners_hear_both():
    reg = registry().child()
    heard: list[tuple[str, str]] = []
    reg.subscribe(lambda change, rt: heard.append((change, rt.kind)))
    reg.add(widget())
    newer = reg.add(widget(kind="Gadget"))
    assert reg.get("example.com", "v1", "widgets") is newer
    assert reg.by_kind("example.com", "v1", "Widget") is None
    assert [rt for rt in reg.all() if rt.group == "example.com"] == [newer]
    reg.remove(newer)
    reg.remove(newer)  # removing what is not served is a no-op
    assert reg.get("example.com", "v1", "widgets") is None
    assert ("example.com", "v1") not in reg.group_versions()
    assert heard == [("added", "Widget"), ("added", "Gadget"), ("removed", "Gadget")]


def test_store_keeps_objects_of_a_resource_added_after_load():
    engine = make_engine("sqlite://")
    migrate(engine)
    reg = registry().child()
    store = Store(engine, reg)
    store.load()
    try:
        rt = reg.add(widget())
        e = store.create(
            rt,
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w", "namespace": "default", "uid": "u-w"},
            },
        )
        assert store.get(rt, "default", "w").rv == e.rv
        assert [o["metadata"]["name"] for o in store.objects(rt)] == ["w"]
    finally:
        store.close()
