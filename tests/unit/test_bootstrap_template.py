"""The bootstrap's template (mockkube/server/bootstraptemplate.py) gives exactly the store a
bootstrap object by object gives, apart from uids and times."""

from __future__ import annotations

import json
import os
import re

import pytest

from mockkube.machinery.clock import Clock
from mockkube.server import bootstraptemplate as tpl
from mockkube.server.server import Server

_TIME = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"')


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCKKUBE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MOCKKUBE_BOOTSTRAP_TEMPLATE", raising=False)
    monkeypatch.setattr(tpl, "_memo", {})  # read from the file, as a new process does
    return tmp_path / "bootstrap"


def opened(clock: Clock | None = None, **kw) -> Server:
    s = Server(port=0, components=False, clock=clock, **kw)
    s.open_store()
    return s


def state(s: Server) -> tuple[int, dict, list]:
    """The store's objects and watch history, each object's uid replaced by its own key
    (so references stay comparable) and every time by one placeholder."""
    store = s.store
    names: dict[str, str] = {}
    objs: dict[tuple, str] = {}
    for key, cache in store._caches.items():
        for k, e in cache.entries.items():
            names[e.obj["metadata"]["uid"]] = f"{key}/{k}"
            objs[(key, k)] = e.raw.decode()
    uids = re.compile("|".join(map(re.escape, names)))

    def norm(text: str) -> dict:
        return json.loads(_TIME.sub('"T"', uids.sub(lambda m: names[m.group(0)], text)))

    history = []
    for key, log in sorted(store._logs.items()):
        for (typ, after, before), rv in zip(log._events, log._rvs):  # the entries it holds
            history.append((rv, key, typ, norm(after.raw.decode()), before and norm(before.raw.decode())))
    history.sort(key=lambda h: h[0])
    return store.rv, {k: norm(v) for k, v in objs.items()}, history


def test_replayed_bootstrap_is_the_bootstrap(cache, monkeypatch):
    monkeypatch.setenv("MOCKKUBE_BOOTSTRAP_TEMPLATE", "off")
    plain = opened()
    assert not cache.exists()
    monkeypatch.delenv("MOCKKUBE_BOOTSTRAP_TEMPLATE")
    recorded = opened()  # bootstraps object by object and keeps the template
    assert len(list(cache.glob("*.json"))) == 1
    calls = []
    monkeypatch.setattr(Server, "_bootstrap_objects", lambda self: calls.append(self))
    replayed = opened()
    assert calls == []  # from the template
    try:
        want = state(plain)
        assert want[0] > 200
        for got in (state(recorded), state(replayed)):
            assert got[0] == want[0]  # the same resourceVersions
            assert got[1].keys() == want[1].keys()
            for k in want[1]:
                assert got[1][k] == want[1][k], k
            assert got[2] == want[2]  # the same watch events, in order
        # fresh uids, not the recorded ones
        a = {e.obj["metadata"]["uid"] for c in recorded.store._caches.values() for e in c.entries.values()}
        b = {e.obj["metadata"]["uid"] for c in replayed.store._caches.values() for e in c.entries.values()}
        assert len(a) == len(b) > 200 and not a & b
    finally:
        for s in (plain, recorded, replayed):
            s.store.close()


def test_times_are_the_clock_now(cache):
    opened().store.close()  # records at wall time
    frozen = Clock()
    frozen.set(1_900_000_000)  # 2030-03-17T17:46:40Z
    frozen.freeze()
    s = opened(clock=frozen)
    try:
        rt = s.registry.get("", "v1", "namespaces")
        ns = s.store.get(rt, "", "kube-system").obj
        assert ns["metadata"]["creationTimestamp"] == "2030-03-17T17:46:40Z"
        times = {t for c in s.store._caches.values() for e in c.entries.values() for t in _TIME.findall(e.raw.decode())}
        assert times == {'"2030-03-17T17:46:40Z"'}  # creations, managedFields, conditions
        cidr = s.store.get(s.registry.get("networking.k8s.io", "v1", "servicecidrs"), "", "kubernetes").obj
        assert cidr["status"]["conditions"][0]["lastTransitionTime"] == "2030-03-17T17:46:40Z"
    finally:
        s.store.close()


def test_the_gates_choose_the_template(cache):
    opened().store.close()
    s = opened(feature_gates={"GenericWorkload": True}, runtime_config={"scheduling.k8s.io/v1alpha2": True})
    try:
        assert len(list(cache.glob("*.json"))) == 2
        sa = s.registry.get("", "v1", "serviceaccounts")
        assert s.store.get(sa, "kube-system", "podgroup-protection-controller") is not None
    finally:
        s.store.close()


def test_old_templates_are_pruned(cache):
    cache.mkdir(parents=True)
    for i in range(tpl.KEEP + 3):
        (cache / f"old{i:02}.json").write_text("{}")
        os.utime(cache / f"old{i:02}.json", (1_000_000 + i, 1_000_000 + i))
    opened().store.close()
    left = sorted(p.name for p in cache.glob("*.json"))
    assert len(left) == tpl.KEEP
    assert "old00.json" not in left and f"old{tpl.KEEP + 2:02}.json" in left


def test_the_flowschemas_dangling_conditions_are_the_bootstraps_and_replayed(cache):
    """The configuration consumer's first pass is part of the bootstrap, so a replayed start
    has it too (the controller then finds each condition current)."""
    opened().store.close()  # records
    s = opened()  # replays
    try:
        rt = s.registry.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
        fss = s.store.objects(rt)
        assert len(fss) >= 10
        for fs in fss:
            [cond] = fs["status"]["conditions"]
            assert (cond["type"], cond["status"], cond["reason"]) == ("Dangling", "False", "Found")
            assert cond["lastTransitionTime"] == fs["metadata"]["creationTimestamp"]
            managers = {(m["manager"], m.get("subresource", "")) for m in fs["metadata"]["managedFields"]}
            assert managers == {
                ("api-priority-and-fairness-config-producer-v1", ""),
                ("api-priority-and-fairness-config-consumer-v1", "status"),
            }
    finally:
        s.store.close()


@pytest.mark.parametrize("template", ["off", "replayed"])
def test_the_bootstraps_objects_are_kube_apiservers_in_managed_fields(cache, monkeypatch, template):
    """As kube-apiserver's loopback writes record them (its user agent names the manager)."""
    if template == "off":
        monkeypatch.setenv("MOCKKUBE_BOOTSTRAP_TEMPLATE", "off")
    else:
        opened().store.close()  # records
    s = opened()
    try:

        def managed(group: str, plural: str, ns: str, name: str) -> list:
            rt = next(r for r in s.registry.all() if r.group == group and r.plural == plural)
            obj = s.store.get(rt, ns, name).obj
            return [(m["manager"], m["operation"], m.get("subresource", "")) for m in obj["metadata"]["managedFields"]]

        assert managed("", "namespaces", "", "default") == [("kube-apiserver", "Update", "")]
        assert managed("rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin") == [
            ("kube-apiserver", "Update", "")
        ]
        assert managed("", "services", "default", "kubernetes") == [("kube-apiserver", "Update", "")]
        assert sorted(managed("networking.k8s.io", "servicecidrs", "", "kubernetes")) == [
            ("kube-apiserver", "Update", ""),
            ("kube-apiserver", "Update", "status"),
        ]
        rt = s.registry.get("", "v1", "namespaces")
        [fields] = s.store.get(rt, "", "kube-system").obj["metadata"]["managedFields"]
        assert fields["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}
    finally:
        s.store.close()


def test_a_bootstrap_that_finds_its_objects_made_meanwhile_goes_on(cache, monkeypatch):
    """Another API server may make a bootstrap object between this one's look and its create
    (on PostgreSQL): the create's AlreadyExists means the object is there, as kube-apiserver's
    bootstrap controllers take it, and the bootstrap goes on; stored objects are untouched."""
    import sys

    s = opened()
    before = state(s)
    get = s.store.get

    def lagging(*a, **k):  # the bootstrap's own looks miss (admission's still find namespaces)
        return None if sys._getframe(1).f_code.co_name == "_bootstrap_objects" else get(*a, **k)

    monkeypatch.setattr(s.store, "get", lagging)  # so every create of the bootstrap collides
    s._bootstrap_objects()
    monkeypatch.undo()
    assert state(s) == before
