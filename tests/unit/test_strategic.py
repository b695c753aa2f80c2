"""Strategic merge patch against the real v1.36 schemas, with upstream's ordering and errors."""

from __future__ import annotations

import copy

import pytest

from mockkube.machinery import schema
from mockkube.machinery.errors import APIError
from mockkube.machinery.schema import Node
from mockkube.machinery.strategic import apply_strategic_merge_patch as smp

DEPLOYMENT = schema.for_kind("apps", "v1", "Deployment")
POD = schema.for_kind("", "v1", "Pod")
NODE = schema.for_kind("", "v1", "Node")


def c(name: str, **kw) -> dict:
    return {"name": name, **kw}


def deployment(containers: list, **spec) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{old}"},
        },
        "spec": {
            "replicas": 2,
            **spec,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}},
        },
    }


def pod(**spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "finalizers": ["a.io/f", "b.io/f"]},
        "spec": {"containers": [c("main", image="nginx")], **spec},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
            ],
        },
    }


def containers(obj: dict) -> list:
    return obj["spec"]["template"]["spec"]["containers"]


# -- the contract's kubectl apply patch --------------------------------------------------


def test_client_side_apply_patch_from_the_contract():
    live = deployment([c("a", image="nginx:1"), c("b", image="nginx:1", env=[{"name": "X", "value": "1"}])])
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{new}"}},
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [{"env": None, "image": "nginx:2", "name": "b"}],
                }
            }
        },
    }
    live_before, patch_before = copy.deepcopy(live), copy.deepcopy(patch)
    out = smp(live, patch, DEPLOYMENT)
    assert containers(out) == [c("a", image="nginx:1"), c("b", image="nginx:2")]
    assert out["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": "{new}"}
    assert out["spec"]["replicas"] == 2
    assert live == live_before and patch == patch_before


def test_kubectl_edit_style_patch():
    # CreateTwoWayMergePatch output for: image bumped, env B removed, label added.
    live = deployment([c("a", image="nginx:1", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])])
    patch = {
        "metadata": {"labels": {"tier": "web"}},
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "A"}],
                            "env": [{"$patch": "delete", "name": "B"}],
                            "image": "nginx:3",
                            "name": "a",
                        }
                    ],
                }
            }
        },
    }
    out = smp(live, patch, DEPLOYMENT)
    assert containers(out) == [c("a", image="nginx:3", env=[{"name": "A", "value": "1"}])]
    assert out["metadata"]["labels"] == {"app": "web", "tier": "web"}


# -- table of merges ---------------------------------------------------------------------

CASES = [
    (
        "null deletes a key",
        POD,
        pod(),
        {"metadata": {"finalizers": None}, "spec": {"containers": [c("main", image=None)]}},
        lambda o: (o["metadata"].pop("finalizers"), o["spec"]["containers"][0].pop("image")),
    ),
    ("null for an absent key is ignored", POD, pod(), {"spec": {"nodeName": None}}, lambda o: None),
    (
        "tolerations are atomic: replaced",
        POD,
        pod(tolerations=[{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]),
        {"spec": {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}},
        lambda o: o["spec"].__setitem__("tolerations", [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]),
    ),
    (
        "pod condition merges by type, new one appended",
        POD,
        pod(),
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": None},
                    {"type": "ContainersReady", "status": "True"},
                ]
            }
        },
        lambda o: o["status"].__setitem__(
            "conditions",
            [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "True"},
                {"type": "ContainersReady", "status": "True"},
            ],
        ),
    ),
    (
        "merged list order: patch items not on the server lead",
        POD,
        pod(),
        {
            "status": {
                "conditions": [
                    {"type": "ContainersReady", "status": "True"},
                    {"type": "PodScheduled", "status": "False"},
                ]
            }
        },
        lambda o: o["status"].__setitem__(
            "conditions",
            [
                {"type": "ContainersReady", "status": "True"},
                {"type": "PodScheduled", "status": "False"},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
            ],
        ),
    ),
    (
        "finalizers: primitive merge list adds",
        POD,
        pod(),
        {"metadata": {"finalizers": ["c.io/f", "a.io/f"]}},
        lambda o: o["metadata"].__setitem__("finalizers", ["c.io/f", "a.io/f", "b.io/f"]),
    ),
    (
        "finalizers: $deleteFromPrimitiveList",
        POD,
        pod(),
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/f", "zzz"]}},
        lambda o: o["metadata"].__setitem__("finalizers", ["b.io/f"]),
    ),
    (
        "finalizers: order, add and delete together",
        POD,
        pod(),
        {
            "metadata": {
                "$setElementOrder/finalizers": ["c.io/f", "b.io/f"],
                "finalizers": ["c.io/f"],
                "$deleteFromPrimitiveList/finalizers": ["a.io/f"],
            }
        },
        lambda o: o["metadata"].__setitem__("finalizers", ["c.io/f", "b.io/f"]),
    ),
    (
        "$deleteFromPrimitiveList on an absent list is a no-op",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}},
        lambda o: None,
    ),
    (
        "ownerReferences merge by uid",
        POD,
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "rs1", "kind": "ReplicaSet"}]}},
        {"metadata": {"ownerReferences": [{"uid": "1", "controller": True}, {"uid": "2", "name": "x"}]}},
        lambda o: o["metadata"].__setitem__(
            "ownerReferences",
            [{"uid": "1", "name": "rs1", "kind": "ReplicaSet", "controller": True}, {"uid": "2", "name": "x"}],
        ),
    ),
    (
        "ports merge by containerPort",
        POD,
        pod(containers=[c("main", ports=[{"containerPort": 80, "name": "http"}])]),
        {"spec": {"containers": [c("main", ports=[{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}])]}},
        lambda o: o["spec"]["containers"][0].__setitem__(
            "ports", [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}]
        ),
    ),
    (
        "$patch: delete of a container",
        DEPLOYMENT,
        deployment([c("a", image="x"), c("b", image="y"), c("c", image="z")]),
        {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "b"}]}}}},
        lambda o: containers(o).pop(1),
    ),
    (
        "$patch: replace of a list",
        DEPLOYMENT,
        deployment([c("a", image="x"), c("b", image="y")]),
        {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, c("n", image="i")]}}}},
        lambda o: o["spec"]["template"]["spec"].__setitem__("containers", [c("n", image="i")]),
    ),
    (
        "$patch: replace of a map",
        DEPLOYMENT,
        deployment([c("a")]),
        {"metadata": {"labels": {"$patch": "replace", "only": "me"}}},
        lambda o: o["metadata"].__setitem__("labels", {"only": "me"}),
    ),
    (
        "$patch: replace of an absent map drops it (upstream quirk)",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"labels": {"$patch": "replace", "a": "b"}}},
        lambda o: None,
    ),
    (
        "$patch: delete of a map leaves it empty",
        DEPLOYMENT,
        deployment([c("a")]),
        {"metadata": {"annotations": {"$patch": "delete"}}},
        lambda o: o["metadata"].__setitem__("annotations", {}),
    ),
    (
        "$patch: replace at the top level",
        POD,
        pod(),
        {"$patch": "replace", "kind": "Pod", "metadata": {"name": "q"}},
        lambda o: (o.clear(), o.update({"kind": "Pod", "metadata": {"name": "q"}})),
    ),
    (
        "$setElementOrder reorders without changes",
        DEPLOYMENT,
        deployment([c("a"), c("b"), c("c")]),
        {
            "spec": {
                "template": {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}]}}
            }
        },
        lambda o: o["spec"]["template"]["spec"].__setitem__("containers", [c("c"), c("a"), c("b")]),
    ),
    (
        "$setElementOrder places a new container, server-only one keeps its place",
        DEPLOYMENT,
        deployment([c("a"), c("sidecar"), c("b")]),
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "new"}, {"name": "a"}, {"name": "b"}],
                        "containers": [c("new", image="n")],
                    }
                }
            }
        },
        lambda o: o["spec"]["template"]["spec"].__setitem__(
            "containers", [c("new", image="n"), c("a"), c("sidecar"), c("b")]
        ),
    ),
    (
        "$retainKeys clears the other keys (strategy retainKeys)",
        DEPLOYMENT,
        deployment([c("a")], strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}),
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        lambda o: o["spec"].__setitem__("strategy", {"type": "Recreate"}),
    ),
    (
        "volumes: patch strategy merge,retainKeys",
        POD,
        pod(volumes=[{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]),
        {"spec": {"volumes": [{"$retainKeys": ["configMap", "name"], "name": "v", "configMap": {"name": "cm"}}]}},
        lambda o: o["spec"].__setitem__(
            "volumes", [{"name": "v", "configMap": {"name": "cm"}}, {"name": "w", "emptyDir": {}}]
        ),
    ),
    (
        "kubectl cordon",
        NODE,
        {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"podCIDR": "10.0.0.0/24"}},
        {"spec": {"unschedulable": True}},
        lambda o: o["spec"].__setitem__("unschedulable", True),
    ),
    (
        "without $setElementOrder a new item goes first; its nulls are dropped from the result",
        DEPLOYMENT,
        deployment([c("a")]),
        {"spec": {"template": {"spec": {"containers": [c("b", image="i", env=None)]}}}},
        lambda o: containers(o).insert(0, c("b", image="i")),
    ),
    (
        "nulls inside a new map are discarded",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"labels": {"a": "1", "b": None}}},
        lambda o: o["metadata"].__setitem__("labels", {"a": "1"}),
    ),
    (
        "unknown field without schema: maps merge, lists replace",
        None,
        {"x": {"a": 1, "l": [1, 2]}, "y": [{"name": "a"}]},
        {"x": {"b": 2, "l": [3]}, "y": [{"name": "b"}]},
        lambda o: (o["x"].update({"b": 2, "l": [3]}), o.__setitem__("y", [{"name": "b"}])),
    ),
    (
        "scalars and new keys inside a RawExtension merge",
        Node(
            {
                "type": "object",
                "properties": {"parameters": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension"}},
            }
        ),
        {"parameters": {"a": 1, "keep": True}},
        {"parameters": {"a": 2, "b": {"x": [1]}}},
        lambda o: o["parameters"].update({"a": 2, "b": {"x": [1]}}),
    ),
    (
        "type change replaces",
        POD,
        pod(),
        {"spec": {"containers": {"weird": True}}},
        lambda o: o["spec"].__setitem__("containers", {"weird": True}),
    ),
]


@pytest.mark.parametrize("name,root,doc,patch,mutate", CASES, ids=[x[0] for x in CASES])
def test_strategic_merge(name, root, doc, patch, mutate):
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    expected = copy.deepcopy(doc)
    mutate(expected)
    assert smp(doc, patch, root) == expected
    assert doc == doc_before and patch == patch_before


# -- errors in upstream form -------------------------------------------------------------

ERRORS = [
    (
        "list item missing its merge key",
        DEPLOYMENT,
        deployment([c("a")]),
        {"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}},
        500,
        "",
        "map: map[image:nginx] does not contain declared merge key: name",
    ),
    (
        "volume missing its merge key",
        POD,
        pod(volumes=[{"name": "v", "emptyDir": {}}]),
        {"spec": {"volumes": [{"hostPath": {"path": "/var/lib/kubelet/pods"}}]}},
        500,
        "",
        "map: map[hostPath:map[path:/var/lib/kubelet/pods]] does not contain declared merge key: name",
    ),
    (
        "live item missing its merge key",
        POD,
        pod(imagePullSecrets=[{}]),
        {"spec": {"imagePullSecrets": [{"name": "s"}]}},
        500,
        "",
        "map: map[] does not contain declared merge key: name",
    ),
    (
        "$patch: merge in a map",
        POD,
        {"metadata": {"labels": {"x": "y"}}},
        {"metadata": {"labels": {"$patch": "merge", "a": "b"}}},
        500,
        "",
        "unknown patch type: merge in map: map[$patch:merge a:b]",
    ),
    (
        "$patch: merge in a list",
        POD,
        pod(),
        {"spec": {"containers": [{"$patch": "merge", "name": "main"}]}},
        500,
        "",
        "merging lists cannot yet be specified in the patch",
    ),
    (
        "unknown $patch value",
        POD,
        pod(),
        {"spec": {"containers": [{"$patch": "frob", "name": "main"}]}},
        500,
        "",
        "unknown patch type: frob in map: map[$patch:frob name:main]",
    ),
    (
        "$retainKeys not covering the patch",
        DEPLOYMENT,
        deployment([c("a")], strategy={"type": "Recreate"}),
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}},
        400,
        "BadRequest",
        "invalid patch format of retainKeys",
    ),
    (
        "$retainKeys not a list",
        DEPLOYMENT,
        deployment([c("a")], strategy={"type": "Recreate"}),
        {"spec": {"strategy": {"$retainKeys": "type"}}},
        400,
        "BadRequest",
        "invalid patch format of retainKeys",
    ),
    (
        "malformed $deleteFromPrimitiveList key",
        POD,
        pod(),
        {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a.io/f"]}},
        400,
        "BadRequest",
        "invalid patch format of primitive list",
    ),
    (
        "malformed $setElementOrder key",
        POD,
        pod(),
        {"metadata": {"$setElementOrderX": ["a.io/f"]}},
        400,
        "BadRequest",
        "invalid patch format of setElementOrder list",
    ),
    (
        "$setElementOrder not a list",
        POD,
        pod(),
        {"metadata": {"$setElementOrder/finalizers": "a.io/f"}},
        500,
        "",
        "expected a []interface {}, but received a string",
    ),
    (
        "$setElementOrder not matching the patch",
        DEPLOYMENT,
        deployment([c("a"), c("b")]),
        {
            "spec": {
                "template": {
                    "spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [c("b", image="x")]}
                }
            }
        },
        500,
        "",
        "The order in patch list:\n[map[image:x name:b]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n",
    ),
    (
        "map-of-struct values cannot be merged (upstream quirk)",
        Node(
            {
                "type": "object",
                "properties": {
                    "attributes": {
                        "type": "object",
                        "additionalProperties": {"type": "object", "properties": {"string": {"type": "string"}}},
                    }
                },
            }
        ),
        {"attributes": {"model": {"string": "a"}}},
        {"attributes": {"model": {"string": "b"}}},
        500,
        "",
        "merging an object in json but data type is not struct, instead is: map",
    ),
    (
        "nested maps inside a RawExtension cannot be merged (upstream quirk)",
        Node(
            {
                "type": "object",
                "properties": {"parameters": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension"}},
            }
        ),
        {"parameters": {"driver": {"a": 1}}},
        {"parameters": {"driver": {"b": 2}}},
        500,
        "",
        'unable to find api field in struct RawExtension for the json field "driver"',
    ),
    (
        "list element types differ",
        POD,
        pod(),
        {"metadata": {"finalizers": [1]}},
        500,
        "",
        "list element types are not identical: [[a.io/f b.io/f] [1]]",
    ),
]


@pytest.mark.parametrize("name,root,doc,patch,code,reason,message", ERRORS, ids=[x[0] for x in ERRORS])
def test_strategic_errors(name, root, doc, patch, code, reason, message):
    with pytest.raises(APIError) as ei:
        smp(doc, patch, root)
    assert (ei.value.code, ei.value.reason, ei.value.message) == (code, reason, message)


def test_lists_of_lists_are_422():
    root = Node(
        {
            "type": "object",
            "properties": {"x": {"type": "array", "x-kubernetes-patch-strategy": "merge", "items": {"type": "array"}}},
        }
    )
    with pytest.raises(APIError) as ei:
        smp({"x": [[1]]}, {"x": [[2]]}, root)
    assert (ei.value.code, ei.value.reason) == (422, "Invalid")
    assert ei.value.message == "the server rejected our request due to an error in our request"


def test_non_object_patch_is_400():
    with pytest.raises(APIError) as ei:
        smp(pod(), [1], POD)  # type: ignore[arg-type]
    assert (ei.value.code, ei.value.message) == (
        400,
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    )


def test_empty_and_null_patch_are_no_ops():
    assert smp(pod(), {}, POD) == pod()
    assert smp(pod(), None, POD) == pod()  # type: ignore[arg-type]
