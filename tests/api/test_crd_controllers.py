"""Controllers follow custom resources defined at run time: the garbage collector deletes
the dependents of a deleted custom resource, the namespace controller deletes custom
resources in a deleted namespace."""

from __future__ import annotations

import copy

import pytest
from _lifecycle import cm, eventually, owner_ref

from mockkube.client.client import Client
from mockkube.testing.cluster import running_server

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gizmos", "kind": "Gizmo"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
        ],
    },
}


@pytest.fixture
async def env():
    async with running_server(components=True) as server:
        c = Client(server.resources, manager="test")
        c.create(c.rt("customresourcedefinitions", "apiextensions.k8s.io"), copy.deepcopy(CRD))
        yield server, c


def _gizmo(c: Client, name: str, ns: str = "default") -> dict:
    rt = c.res.registry.get("example.com", "v1", "gizmos")
    return c.create(
        rt,
        {
            "apiVersion": "example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": name, "namespace": ns},
            "anything": {"goes": 1},
        },
    )


async def test_garbage_collector_follows_custom_resources(env):
    server, c = env
    owner = _gizmo(c, "owner")
    cms = c.rt("configmaps")
    c.create(cms, cm("dep", owners=[owner_ref(owner)]))
    c.delete(server.registry.get("example.com", "v1", "gizmos"), "default", "owner")
    await eventually(lambda: c.get(cms, "default", "dep") is None)


async def test_namespace_deletion_deletes_custom_resources(env):
    server, c = env
    ns_rt = c.rt("namespaces")
    c.create(ns_rt, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    _gizmo(c, "g", "doomed")
    c.delete(ns_rt, "", "doomed")
    rt = server.registry.get("example.com", "v1", "gizmos")
    await eventually(lambda: c.get(rt, "doomed", "g") is None and c.get(ns_rt, "", "doomed") is None)
