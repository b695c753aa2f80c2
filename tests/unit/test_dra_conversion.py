"""resource.k8s.io conversion v1 <-> v1beta1/v1beta2 (mockkube.apiserver.resources.dra_conversion).

"Every field" is taken from the served OpenAPI definitions rather than written by hand: a
generator fills every property the schema has for a kind at a version (one item per list,
one key per map), so a field added upstream and regenerated into openapi/ is covered at
once. Each such object goes to the other version and back unchanged, and its converted form
uses only fields that version's schema knows."""

from __future__ import annotations

import pytest

from mockkube.apiserver.resources import dra_conversion as conv
from mockkube.machinery import schema

KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
DEFS = schema.definitions()


def _def(version: str, name: str) -> dict:
    return DEFS[f"io.k8s.api.resource.{version}.{name}"]


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[-1]]
    if "allOf" in node and len(node["allOf"]) == 1:
        return _resolve(node["allOf"][0])
    return node


def _types(node: dict) -> set[str]:
    t = node.get("type")
    if isinstance(t, list):
        return set(t) - {"null"}
    return {t} if t else set()


def _fill(node: dict, path: str) -> object:
    """A value for every property under ``node`` (a plausible one: strings name their path)."""
    node = _resolve(node)
    if "oneOf" in node:  # Quantity, IntOrString
        return "1Gi"
    types = _types(node)
    if node.get("format") == "date-time":
        return "2026-01-02T03:04:05Z"
    if "object" in types or "properties" in node:
        props = node.get("properties")
        if props is None:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return {"example.com/key": _fill(extra, path + ".key")}
            return {"opaque": {"nested": [1, "two"]}}  # RawExtension and the like
        return {k: _fill(v, f"{path}.{k}") for k, v in props.items() if k not in ("apiVersion", "kind", "metadata")}
    if "array" in types:
        return [_fill(node.get("items") or {}, path + "[]")]
    if "boolean" in types:
        return True
    if "integer" in types:
        return 3
    if "number" in types:
        return 1.5
    return path.rsplit(".", 1)[-1] or "x"


def _full(version: str, kind: str) -> dict:
    obj = _fill(_def(version, kind), kind)
    assert isinstance(obj, dict)
    obj.update(
        {
            "apiVersion": f"resource.k8s.io/{version}",
            "kind": kind,
            "metadata": {"name": "full", "annotations": {"a": "b"}, "labels": {"c": "d"}},
        }
    )
    return obj


def _unknown(obj: object, node: dict, path: str = "") -> list[str]:
    """Paths in ``obj`` that ``node`` (a schema) does not describe."""
    node = _resolve(node)
    if isinstance(obj, dict):
        props = node.get("properties")
        if props is None:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return [p for k, v in obj.items() for p in _unknown(v, extra, f"{path}.{k}")]
            return []
        out = []
        for k, v in obj.items():
            if k not in props:
                out.append(f"{path}.{k}")
            else:
                out += _unknown(v, props[k], f"{path}.{k}")
        return out
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _unknown(v, node.get("items") or {}, f"{path}[{i}]")]
    return []


def _paths(obj: object, prefix: str = "") -> set[str]:
    if isinstance(obj, dict):
        return {p for k, v in obj.items() for p in _paths(v, f"{prefix}.{k}")} or {prefix}
    if isinstance(obj, list):
        return {p for v in obj for p in _paths(v, prefix + "[]")} or {prefix}
    return {prefix}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_full_v1_object_round_trips(kind, version):
    v1 = _full("v1", kind)
    other = conv.convert(v1, f"resource.k8s.io/{version}")
    assert other["apiVersion"] == f"resource.k8s.io/{version}"
    assert _unknown(other, _def(version, kind)) == []
    assert conv.convert(other, conv.V1) == v1
    assert v1 == _full("v1", kind)  # the input is left alone


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_full_older_object_round_trips(kind, version):
    old = _full(version, kind)
    v1 = conv.convert(old, conv.V1)
    assert _unknown(v1, _def("v1", kind)) == []
    assert conv.convert(v1, f"resource.k8s.io/{version}") == old


def test_generated_objects_cover_the_differences():
    """The generator reaches the fields the conversion moves (so the tests above test them)."""
    s = _paths(_full("v1beta1", "ResourceSlice"))
    for f in conv.BASIC_FIELDS:
        assert f".spec.devices[].basic.{f}" in {p[: len(f".spec.devices[].basic.{f}")] for p in s}, f
    c = _paths(_full("v1beta1", "ResourceClaim"))
    for f in conv.EXACT_FIELDS:
        assert any(p.startswith(f".spec.devices.requests[].{f}") for p in c), f
    t = _paths(_full("v1", "ResourceClaimTemplate"))
    assert any(p.startswith(".spec.spec.devices.requests[].exactly.deviceClassName") for p in t)


def test_basic_wrapper():
    v1 = {
        "apiVersion": conv.V1,
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "n1",
            "devices": [
                {"name": "plain"},
                {
                    "name": "gpu",
                    "attributes": {"model": {"string": "a100"}},
                    "capacity": {"memory": {"value": "40Gi"}},
                    "taints": [{"key": "k", "effect": "NoSchedule"}],
                },
            ],
        },
    }
    b1 = conv.convert(v1, conv.V1BETA1)
    assert b1["spec"]["devices"] == [
        {"name": "plain", "basic": {}},  # upstream always writes basic
        {
            "name": "gpu",
            "basic": {
                "attributes": {"model": {"string": "a100"}},
                "capacity": {"memory": {"value": "40Gi"}},
                "taints": [{"key": "k", "effect": "NoSchedule"}],
            },
        },
    ]
    assert conv.convert(b1, conv.V1) == v1
    # a v1beta1 device without basic is a device with nothing but its name
    b1["spec"]["devices"][0] = {"name": "plain"}
    assert conv.convert(b1, conv.V1)["spec"]["devices"][0] == {"name": "plain"}


def test_pool_node_fields_are_plain_values_in_v1beta1():
    b1 = {
        "apiVersion": conv.V1BETA1,
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "d", "nodeName": "", "allNodes": False, "devices": []},
    }
    assert conv.convert(b1, conv.V1)["spec"] == {"driver": "d", "devices": []}
    v1 = {**b1, "apiVersion": conv.V1, "spec": {"driver": "d", "allNodes": True}}
    assert conv.convert(v1, conv.V1BETA1)["spec"] == {"driver": "d", "allNodes": True}


def _claim(version: str, requests: list) -> dict:
    return {
        "apiVersion": version,
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": requests}},
    }


def test_request_fields_move_into_exactly():
    b1 = _claim(
        conv.V1BETA1,
        [
            {
                "name": "gpu",
                "deviceClassName": "gpu.example.com",
                "selectors": [{"cel": {"expression": "true"}}],
                "allocationMode": "ExactCount",
                "count": 2,
                "adminAccess": False,
                "tolerations": [{"operator": "Exists"}],
                "capacity": {"requests": {"memory": "1Gi"}},
            },
            {"name": "either", "deviceClassName": "", "firstAvailable": [{"name": "a", "deviceClassName": "x"}]},
        ],
    )
    v1 = conv.convert(b1, conv.V1)
    assert v1["spec"]["devices"]["requests"] == [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.example.com",
                "selectors": [{"cel": {"expression": "true"}}],
                "allocationMode": "ExactCount",
                "count": 2,
                "adminAccess": False,
                "tolerations": [{"operator": "Exists"}],
                "capacity": {"requests": {"memory": "1Gi"}},
            },
        },
        {"name": "either", "firstAvailable": [{"name": "a", "deviceClassName": "x"}]},
    ]
    assert conv.convert(v1, conv.V1BETA1) == b1


def test_any_main_field_makes_exactly():
    """As upstream's hasAnyMainRequestFieldsSet: an empty selector list counts, an empty
    class name or a zero count does not; validation then names exactly's fields."""
    v1 = conv.convert(_claim(conv.V1BETA1, [{"name": "r", "selectors": []}]), conv.V1)
    assert v1["spec"]["devices"]["requests"] == [{"name": "r", "exactly": {"deviceClassName": "", "selectors": []}}]
    v1 = conv.convert(_claim(conv.V1BETA1, [{"name": "r", "deviceClassName": "", "count": 0}]), conv.V1)
    assert v1["spec"]["devices"]["requests"] == [{"name": "r"}]


def test_v1beta2_and_device_class_change_only_the_version():
    for kind in KINDS:
        v1 = _full("v1", kind)
        b2 = conv.convert(v1, conv.V1BETA2)
        assert {**b2, "apiVersion": conv.V1} == v1
    dc = _full("v1", "DeviceClass")
    assert {**conv.convert(dc, conv.V1BETA1), "apiVersion": conv.V1} == dc


def test_converter_interface():
    c = conv.DRAConverter()
    objs = [_full("v1", "ResourceSlice"), _full("v1beta1", "ResourceSlice")]
    out = c.convert(objs, conv.V1BETA1)
    assert [o["apiVersion"] for o in out] == [conv.V1BETA1, conv.V1BETA1]
    assert out[1] is objs[1]  # already at that version: not copied
    assert all("basic" in d for d in out[0]["spec"]["devices"])
