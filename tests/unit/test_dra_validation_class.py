import copy

import pytest

from mockkube.apiserver.resources.dra_validation import (
    validate_device_class,
    validate_device_class_update,
    validate_device_taint_rule,
    validate_device_taint_rule_status_update,
    validate_device_taint_rule_update,
)


def dc(**spec):
    return {"metadata": {"name": "gpu.example.com"}, "spec": spec}


def errs_of(obj):
    return [(e.type, e.field) for e in validate_device_class(obj)]


@pytest.mark.parametrize(
    "spec,expected",
    [
        ({}, []),
        ({"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}, []),
        (
            {"selectors": [{"cel": {"expression": "device.driver = "}}]},
            [("Invalid", "spec.selectors[0].cel.expression")],
        ),
        ({"selectors": [{}]}, [("Required", "spec.selectors[0].cel")]),
        ({"selectors": [{"cel": {"expression": "true"}}] * 33}, [("TooMany", "spec.selectors")]),
        ({"config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}, []),
        (
            {"config": [{"opaque": {"driver": "", "parameters": None}}]},
            [("Required", "spec.config[0].opaque.driver"), ("Required", "spec.config[0].opaque.parameters")],
        ),
        (
            {"config": [{"opaque": {"driver": "d.io", "parameters": {"x": "y" * 10240}}}]},
            [("TooLong", "spec.config[0].opaque.parameters")],
        ),
        ({"extendedResourceName": "example.com/gpu"}, []),
        ({"extendedResourceName": "gpu"}, [("Invalid", "spec.extendedResourceName")]),
    ],
)
def test_device_class(spec, expected):
    assert errs_of(dc(**spec)) == expected


def test_device_class_name_and_namespace():
    obj = dc()
    obj["metadata"] = {"name": "Bad", "namespace": "x"}
    assert errs_of(obj) == [("Invalid", "metadata.name"), ("Forbidden", "metadata.namespace")]


def test_device_class_update_treats_unchanged_selectors_as_stored():
    old = dc(selectors=[{"cel": {"expression": "device.driver = "}}])
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    assert validate_device_class_update(new, old) == []
    new["spec"]["selectors"].append({"cel": {"expression": "true"}})
    assert [(e.type, e.field) for e in validate_device_class_update(new, old)] == [
        ("Invalid", "spec.selectors[0].cel.expression")
    ]


def rule(**spec):
    return {
        "metadata": {"name": "r"},
        "spec": dict({"taint": {"key": "example.com/bad", "effect": "NoExecute"}}, **spec),
    }


def test_device_taint_rule():
    assert (
        validate_device_taint_rule(rule(deviceSelector={"driver": "gpu.example.com", "pool": "p", "device": "d"})) == []
    )
    bad = rule(
        deviceSelector={"driver": "", "pool": "", "device": "D"}, taint={"key": "", "effect": "PreferNoSchedule"}
    )
    assert [(e.type, e.field) for e in validate_device_taint_rule(bad)] == [
        ("Required", "spec.deviceSelector.driver"),
        ("Required", "spec.deviceSelector.pool"),
        ("Invalid", "spec.deviceSelector.device"),
        ("Invalid", "spec.taint.key"),
        ("Invalid", "spec.taint.key"),
        ("NotSupported", "spec.taint.effect"),
    ]


def test_device_taint_rule_update_and_status():
    old = rule()
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["spec"]["taint"]["effect"] = "Bogus"
    assert [(e.type, e.field) for e in validate_device_taint_rule_update(new, old)] == [
        ("NotSupported", "spec.taint.effect")
    ]
    new = copy.deepcopy(old)
    new["status"] = {
        "conditions": [
            {
                "type": "EvictionInProgress",
                "status": "True",
                "reason": "R",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ]
        * 9
    }
    errs = [(e.type, e.field) for e in validate_device_taint_rule_status_update(new, old)]
    assert ("TooMany", "status.conditions") in errs
    assert ("Duplicate", "status.conditions[1].type") in errs
