import copy

import pytest

from mockkube.apiserver.resources.dra_validation import (
    validate_resource_claim,
    validate_resource_claim_status_update,
    validate_resource_claim_template,
    validate_resource_claim_template_update,
    validate_resource_claim_update,
)


def claim(requests=None, constraints=None, config=None, **meta):
    devices = {"requests": requests if requests is not None else [exact("gpu")]}
    if constraints is not None:
        devices["constraints"] = constraints
    if config is not None:
        devices["config"] = config
    return {"metadata": dict({"name": "c", "namespace": "default"}, **meta), "spec": {"devices": devices}}


def exact(name, **kw):
    return {
        "name": name,
        "exactly": dict({"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}, **kw),
    }


def errs_of(obj):
    return [(e.type, e.field) for e in validate_resource_claim(obj)]


def test_valid_claim():
    c = claim(
        [
            exact(
                "gpu",
                selectors=[{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                tolerations=[{"key": "example.com/t", "operator": "Exists", "effect": "NoSchedule"}],
            )
        ]
    )
    assert errs_of(c) == []


@pytest.mark.parametrize(
    "requests,expected",
    [
        ([exact(f"r{i}") for i in range(33)], [("TooMany", "spec.devices.requests")]),
        ([exact("a"), exact("a")], [("Duplicate", "spec.devices.requests[1]")]),
        ([exact("Bad_Name")], [("Invalid", "spec.devices.requests[0].name")]),
        ([{"name": "a"}], [("Required", "spec.devices.requests[0]")]),
        (
            [dict(exact("a"), firstAvailable=[{"name": "s", "deviceClassName": "x", "allocationMode": "All"}])],
            [("Invalid", "spec.devices.requests[0]")],
        ),
        (
            [
                {
                    "name": "a",
                    "firstAvailable": [
                        {"name": f"s{i}", "deviceClassName": "x", "allocationMode": "All"} for i in range(9)
                    ],
                }
            ],
            [("TooMany", "spec.devices.requests[0].firstAvailable")],
        ),
        (
            [{"name": "a", "firstAvailable": [{"name": "s", "deviceClassName": "", "allocationMode": "Foo"}]}],
            [
                ("Required", "spec.devices.requests[0].firstAvailable[0].deviceClassName"),
                ("NotSupported", "spec.devices.requests[0].firstAvailable[0].allocationMode"),
            ],
        ),
        ([exact("a", count=0)], [("Invalid", "spec.devices.requests[0].exactly.count")]),
        ([exact("a", allocationMode="All", count=2)], [("Invalid", "spec.devices.requests[0].exactly.count")]),
        ([exact("a", deviceClassName="Bad")], [("Invalid", "spec.devices.requests[0].exactly.deviceClassName")]),
        ([exact("a", selectors=[{}])], [("Required", "spec.devices.requests[0].exactly.selectors[0].cel")]),
        (
            [
                exact(
                    "a",
                    tolerations=[
                        {"key": "k", "operator": "Exists", "value": "v"},
                        {"operator": "Foo"},
                        {"key": "k", "operator": "Equal", "value": "-x", "effect": "Bad"},
                    ],
                )
            ],
            [
                ("Invalid", "spec.devices.requests[0].exactly.tolerations[0].value"),
                ("NotSupported", "spec.devices.requests[0].exactly.tolerations[1].operator"),
                ("Invalid", "spec.devices.requests[0].exactly.tolerations[2].value"),
                ("NotSupported", "spec.devices.requests[0].exactly.tolerations[2].effect"),
            ],
        ),
        (
            [exact("a", capacity={"requests": {"bw": "1x", "1bad": "1"}})],
            [
                ("Invalid", "spec.devices.requests[0].exactly.capacity.requests[bw]"),
                ("Invalid", "spec.devices.requests[0].exactly.capacity.requests"),
            ],
        ),
    ],
)
def test_requests(requests, expected):
    assert errs_of(claim(requests)) == expected


def test_constraints_and_config_reference_requests():
    reqs = [
        exact("a"),
        {"name": "b", "firstAvailable": [{"name": "s", "deviceClassName": "x", "allocationMode": "All"}]},
    ]
    ok = claim(
        reqs,
        constraints=[{"requests": ["a", "b/s"], "matchAttribute": "example.com/numa"}],
        config=[{"requests": ["a"], "opaque": {"driver": "gpu.example.com", "parameters": {"k": 1}}}],
    )
    assert errs_of(ok) == []
    bad = claim(
        reqs,
        constraints=[{"requests": ["x", "b/t", "a/b/c"], "matchAttribute": "numa"}, {}],
        config=[{"opaque": {"driver": "gpu.example.com", "parameters": [1]}}, {}],
    )
    assert errs_of(bad) == [
        ("Invalid", "spec.devices.constraints[0].requests[0]"),
        ("Invalid", "spec.devices.constraints[0].requests[1]"),
        ("Invalid", "spec.devices.constraints[0].requests[2]"),
        ("Invalid", "spec.devices.constraints[0].matchAttribute"),
        ("Required", "spec.devices.constraints[1]"),
        ("Invalid", "spec.devices.config[0].opaque.parameters"),
        ("Required", "spec.devices.config[1].opaque"),
    ]


def test_cel_compile_error_names_expression():
    errs = validate_resource_claim(claim([exact("a", selectors=[{"cel": {"expression": "device.driver =="}}])]))
    assert [(e.type, e.field) for e in errs] == [
        ("Invalid", "spec.devices.requests[0].exactly.selectors[0].cel.expression")
    ]
    assert errs[0].value == "device.driver =="
    assert errs[0].detail.startswith("compilation failed")


def test_cel_too_long():
    errs = errs_of(claim([exact("a", selectors=[{"cel": {"expression": "true" + " " * 10240}}])]))
    assert errs == [("TooLong", "spec.devices.requests[0].exactly.selectors[0].cel.expression")]


def test_metadata_namespace_required():
    c = claim()
    del c["metadata"]["namespace"]
    assert errs_of(c) == [("Required", "metadata.namespace")]


def test_spec_immutable():
    old = claim(resourceVersion="1")
    new = copy.deepcopy(old)
    new["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    errs = validate_resource_claim_update(new, old)
    assert [(e.type, e.field, e.detail) for e in errs] == [("Invalid", "spec", "field is immutable")]
    assert validate_resource_claim_update(copy.deepcopy(old), old) == []


def allocated(results=None, reserved=None, devices=None):
    c = claim(resourceVersion="2")
    c["status"] = {
        "allocation": {
            "devices": {
                "results": results
                if results is not None
                else [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
            }
        }
    }
    if reserved is not None:
        c["status"]["reservedFor"] = reserved
    if devices is not None:
        c["status"]["devices"] = devices
    return c


POD = {"resource": "pods", "name": "p", "uid": "11111111-1111-1111-1111-111111111111"}


def status_errs(new, old=None):
    old = old or claim(resourceVersion="1")
    return [(e.type, e.field) for e in validate_resource_claim_status_update(new, old)]


def test_status_allocation_and_reserved_for():
    assert status_errs(allocated(reserved=[POD])) == []
    no_alloc = claim(resourceVersion="2")
    no_alloc["status"] = {"reservedFor": [POD]}
    assert status_errs(no_alloc) == [("Forbidden", "status.reservedFor")]
    assert status_errs(allocated(reserved=[POD, POD])) == [("Duplicate", "status.reservedFor[1]")]
    assert status_errs(allocated(reserved=[dict(POD, uid=str(i)) for i in range(257)])) == [
        ("TooMany", "status.reservedFor")
    ]
    assert status_errs(allocated(reserved=[{}])) == [
        ("Required", "status.reservedFor[0].resource"),
        ("Required", "status.reservedFor[0].name"),
        ("Required", "status.reservedFor[0].uid"),
    ]


def test_status_allocation_results_validated_and_then_immutable():
    bad = allocated(results=[{"request": "nope", "driver": "", "pool": "", "device": "D", "shareID": "x"}])
    assert status_errs(bad) == [
        ("Invalid", "status.allocation.devices.results[0].request"),
        ("Required", "status.allocation.devices.results[0].driver"),
        ("Required", "status.allocation.devices.results[0].pool"),
        ("Invalid", "status.allocation.devices.results[0].device"),
        ("Invalid", "status.allocation.devices.results[0].shareID"),
    ]
    old = allocated()
    new = copy.deepcopy(old)
    new["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    assert status_errs(new, old) == [("Invalid", "status.allocation")]


def test_status_devices_must_be_allocated():
    dev = {
        "driver": "gpu.example.com",
        "pool": "node-1",
        "device": "gpu-0",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Ok", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        ],
    }
    assert status_errs(allocated(devices=[dev])) == []
    assert status_errs(allocated(devices=[dict(dev, device="gpu-9")])) == [("Invalid", "status.devices[0]")]
    assert status_errs(allocated(devices=[dev, dev])) == [("Duplicate", "status.devices[1]")]
    bad_cond = dict(dev, conditions=[{"type": "Ready", "status": "Maybe", "reason": "", "lastTransitionTime": ""}])
    assert status_errs(allocated(devices=[bad_cond])) == [
        ("NotSupported", "status.devices[0].conditions[0].status"),
        ("Required", "status.devices[0].conditions[0].lastTransitionTime"),
        ("Required", "status.devices[0].conditions[0].reason"),
    ]
    net = dict(dev, networkData={"ips": ["10.0.0.1/24", "10.0.0.1"]})
    assert status_errs(allocated(devices=[net])) == [("Invalid", "status.devices[0].networkData.ips[1]")]


def test_no_new_reservations_while_deleting():
    old = allocated(reserved=[POD])
    new = copy.deepcopy(old)
    new["metadata"]["deletionTimestamp"] = old["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    new["status"]["reservedFor"].append(dict(POD, uid="22222222-2222-2222-2222-222222222222"))
    assert status_errs(new, old) == [("Forbidden", "status.reservedFor")]


def template(**spec):
    return {"metadata": {"name": "t", "namespace": "default"}, "spec": dict({"spec": claim()["spec"]}, **spec)}


def test_template():
    assert validate_resource_claim_template(template()) == []
    t = template(metadata={"labels": {"a": "-"}})
    t["spec"]["spec"]["devices"]["requests"][0]["name"] = "X"
    assert [(e.type, e.field) for e in validate_resource_claim_template(t)] == [
        ("Invalid", "spec.metadata.labels"),
        ("Invalid", "spec.spec.devices.requests[0].name"),
    ]
    old = template()
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    assert [(e.type, e.field) for e in validate_resource_claim_template_update(new, old)] == [("Invalid", "spec")]
