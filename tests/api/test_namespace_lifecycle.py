"""Namespace deletion (namespace controller), admission into terminating or missing
namespaces, and the default ServiceAccount (serviceaccounts controller)."""

from __future__ import annotations

import pytest
from _lifecycle import cm, eventually, settle

from mockkube.client.client import Client, clone
from mockkube.controllers.namespace import NamespaceController, deletion_conditions, merge_conditions
from mockkube.machinery import errors
from mockkube.testing.cluster import running_server


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
async def env():
    clock = FakeClock()
    async with running_server(components=True, clock=clock) as server:
        yield server, Client(server.resources, manager="test"), clock


def _ns(c: Client, name: str) -> dict:
    return c.create(c.rt("namespaces"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def _pod(name: str, ns: str, node: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _controller(server) -> NamespaceController:
    return next(c for c in server.components if isinstance(c, NamespaceController))


async def test_default_serviceaccount_in_new_and_existing_namespaces(env):
    server, c, _ = env
    sas = c.rt("serviceaccounts")
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        await eventually(lambda: c.get(sas, ns, "default"))
    _ns(c, "fresh")
    await eventually(lambda: c.get(sas, "fresh", "default"))


async def test_default_serviceaccount_is_recreated(env):
    server, c, _ = env
    sas = c.rt("serviceaccounts")
    _ns(c, "again")
    first = await eventually(lambda: c.get(sas, "again", "default"))
    c.delete(sas, "again", "default")
    second = await eventually(lambda: c.get(sas, "again", "default"))
    assert second["metadata"]["uid"] != first["metadata"]["uid"]


async def test_delete_namespace_removes_content_then_namespace(env):
    server, c, _ = env
    nss = c.rt("namespaces")
    _ns(c, "doomed")
    c.create(c.rt("configmaps"), cm("a", ns="doomed"))
    c.create(c.rt("secrets"), {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "doomed"}})
    c.create(c.rt("pods"), _pod("unbound", "doomed"))
    c.create(
        c.rt("resourceclaims", "resource.k8s.io"),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "claim", "namespace": "doomed"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
        },
    )
    await eventually(lambda: c.get(c.rt("serviceaccounts"), "doomed", "default"))
    pending = c.delete(nss, "", "doomed")
    assert pending["status"]["phase"] == "Terminating" and pending["metadata"]["deletionTimestamp"]
    assert pending["spec"]["finalizers"] == ["kubernetes"]
    seen_conditions = []
    server.store.hub.add_listener(
        "core/namespaces", lambda ev: seen_conditions.append((ev.entry.obj.get("status") or {}).get("conditions"))
    )
    await eventually(lambda: c.get(nss, "", "doomed") is None)
    for rt in server.registry.all():
        if rt.namespaced:
            assert c.list(rt, "doomed") == [], rt.plural
    final = [x for x in seen_conditions if x][-1]
    assert {x["type"]: (x["status"], x["reason"]) for x in final} == {
        "NamespaceDeletionDiscoveryFailure": ("False", "ResourcesDiscovered"),
        "NamespaceDeletionGroupVersionParsingFailure": ("False", "ParsedGroupVersions"),
        "NamespaceDeletionContentFailure": ("False", "ContentDeleted"),
        "NamespaceContentRemaining": ("False", "ContentRemoved"),
        "NamespaceFinalizersRemaining": ("False", "ContentRemoved"),
    }
    # the serviceaccounts controller did not resurrect anything in it
    await settle()
    assert c.get(nss, "", "doomed") is None


async def test_content_with_finalizers_keeps_namespace_terminating(env):
    server, c, _ = env
    nss, cms = c.rt("namespaces"), c.rt("configmaps")
    _ns(c, "held")
    c.create(cms, cm("stuck", ns="held", finalizers=["example.com/hold"]))
    c.delete(nss, "", "held")

    def conditions():
        ns = c.get(nss, "", "held")
        return {x["type"]: x for x in (ns.get("status") or {}).get("conditions") or []}

    await eventually(lambda: conditions().get("NamespaceFinalizersRemaining", {}).get("status") == "True")
    conds = conditions()
    assert (
        conds["NamespaceFinalizersRemaining"]["message"]
        == "Some finalizers are remaining: example.com/hold in 1 resource instances"
    )
    assert conds["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert (
        conds["NamespaceContentRemaining"]["message"]
        == "Some resources are remaining: configmaps. has 1 resource instances"
    )
    assert c.get(nss, "", "held")["status"]["phase"] == "Terminating"
    stuck = clone(c.get(cms, "held", "stuck"))
    stuck["metadata"]["finalizers"] = []
    c.update(cms, stuck)
    await eventually(lambda: c.get(nss, "", "held") is None)


async def test_bound_pod_waits_for_its_grace_period_then_is_removed(env):
    server, c, clock = env
    nss, pods = c.rt("namespaces"), c.rt("pods")
    _ns(c, "graceful")
    p = _pod("running", "graceful", node="node-a")
    p["spec"]["terminationGracePeriodSeconds"] = 20
    c.create(pods, p)
    c.delete(nss, "", "graceful")
    await eventually(lambda: (c.get(pods, "graceful", "running") or {}).get("metadata", {}).get("deletionTimestamp"))
    await settle()
    assert c.get(pods, "graceful", "running") is not None  # within its grace period
    assert c.get(nss, "", "graceful") is not None
    clock.t += 21
    _controller(server).queue.add("graceful")  # the real timer is 20 s away; the clock already passed it
    await eventually(lambda: c.get(nss, "", "graceful") is None)
    assert c.get(pods, "graceful", "running") is None


async def test_create_in_terminating_namespace_is_forbidden(env):
    server, c, _ = env
    nss, cms = c.rt("namespaces"), c.rt("configmaps")
    _ns(c, "closing")
    c.create(cms, cm("keep", ns="closing", finalizers=["example.com/hold"]))
    c.delete(nss, "", "closing")
    with pytest.raises(errors.APIError) as e:
        c.create(cms, cm("late", ns="closing"))
    assert (e.value.code, e.value.reason) == (403, "Forbidden")
    assert e.value.message.endswith(
        " is forbidden: unable to create new content in namespace closing because it is being terminated"
    )
    stuck = clone(c.get(cms, "closing", "keep"))
    stuck["metadata"]["finalizers"] = []
    c.update(cms, stuck)
    await eventually(lambda: c.get(nss, "", "closing") is None)


async def test_terminating_namespace_message_names_the_object(env):
    server, c, _ = env
    _ns(c, "closing2")
    c.create(c.rt("configmaps"), cm("keep", ns="closing2", finalizers=["example.com/hold"]))
    c.delete(c.rt("namespaces"), "", "closing2")
    with pytest.raises(errors.APIError) as e:
        c.create(c.rt("configmaps"), cm("late", ns="closing2"))
    assert e.value.message == (
        'configmaps "late" is forbidden: unable to create new content in namespace '
        "closing2 because it is being terminated"
    )


async def test_create_in_missing_namespace_is_not_found(env):
    server, c, _ = env
    with pytest.raises(errors.APIError) as e:
        c.create(c.rt("configmaps"), cm("x", ns="nowhere"))
    assert (e.value.code, e.value.message) == (404, 'namespaces "nowhere" not found')


async def test_other_spec_finalizers_keep_the_namespace(env):
    server, c, _ = env
    nss = c.rt("namespaces")
    ns = clone(_ns(c, "extra"))
    ns["spec"]["finalizers"] = ["kubernetes", "example.com/other"]
    server.resources.finalize_namespace("extra", ns)
    c.delete(nss, "", "extra")
    await eventually(lambda: c.get(nss, "", "extra")["spec"]["finalizers"] == ["example.com/other"])
    await settle()
    assert c.get(nss, "", "extra") is not None


def test_deletion_conditions_wording():
    got = deletion_conditions({"pods.": 2, "resourceclaims.resource.k8s.io": 1}, {"a/b": 1}, ["boom", "again"])
    assert [(x["type"], x["reason"], x["message"]) for x in got] == [
        (
            "NamespaceDeletionContentFailure",
            "ContentDeletionFailed",
            "Failed to delete all resource types, 2 remaining: again, boom",
        ),
        (
            "NamespaceContentRemaining",
            "SomeResourcesRemain",
            "Some resources are remaining: pods. has 2 resource instances, "
            "resourceclaims.resource.k8s.io has 1 resource instances",
        ),
        (
            "NamespaceFinalizersRemaining",
            "SomeFinalizerRemain",
            "Some finalizers are remaining: a/b in 1 resource instances",
        ),
    ]


def test_merge_conditions_moves_transition_time_only_on_flip():
    first = merge_conditions([], deletion_conditions({"pods.": 1}, {}, []), "T1")
    assert len(first) == 5 and all(x["lastTransitionTime"] == "T1" for x in first)
    assert merge_conditions(first, deletion_conditions({"pods.": 1}, {}, []), "T2") is None
    second = merge_conditions(first, deletion_conditions({"pods.": 2}, {}, []), "T3")
    rem = next(x for x in second if x["type"] == "NamespaceContentRemaining")
    assert rem["lastTransitionTime"] == "T1" and "2 resource instances" in rem["message"]
    third = merge_conditions(second, [], "T4")
    rem = next(x for x in third if x["type"] == "NamespaceContentRemaining")
    assert (rem["status"], rem["lastTransitionTime"]) == ("False", "T4")
