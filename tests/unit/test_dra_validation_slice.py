import copy

import pytest

from mockkube.apiserver.resources.dra_validation import validate_resource_slice, validate_resource_slice_update


def slice_(**spec):
    base = {
        "driver": "gpu.example.com",
        "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [{"name": "gpu-0"}],
    }
    base.update(spec)
    return {"metadata": {"name": "node-1-gpu"}, "spec": {k: v for k, v in base.items() if v is not ...}}


def dev(**kw):
    return dict({"name": "gpu-0"}, **kw)


def errs_of(obj):
    return [(e.type, e.field) for e in validate_resource_slice(obj)]


def test_valid_slice():
    assert (
        errs_of(
            slice_(
                devices=[
                    dev(
                        attributes={"model": {"string": "a100"}, "example.com/v": {"version": "1.2.3-rc.1+b"}},
                        capacity={"memory": {"value": "80Gi"}},
                    )
                ]
            )
        )
        == []
    )


@pytest.mark.parametrize(
    "spec,expected",
    [
        ({"nodeName": ...}, [("Required", "spec")]),
        ({"allNodes": True}, [("Invalid", "spec")]),
        ({"nodeName": ""}, [("Invalid", "spec.nodeName"), ("Required", "spec")]),
        ({"nodeName": ..., "allNodes": False}, [("Invalid", "spec.allNodes"), ("Required", "spec")]),
        (
            {
                "nodeName": ...,
                "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}, {}]},
            },
            [
                ("Required", "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values"),
                ("Invalid", "spec.nodeSelector.nodeSelectorTerms"),
            ],
        ),
        ({"nodeName": ..., "perDeviceNodeSelection": True}, [("Required", "spec.devices[0]")]),
        ({"nodeName": "Node_1"}, [("Invalid", "spec.nodeName")]),
    ],
)
def test_node_selection(spec, expected):
    assert errs_of(slice_(**spec)) == expected


def test_exactly_one_message():
    errs = validate_resource_slice(slice_(allNodes=True))
    assert errs[0].value == "{`nodeName`, `allNodes`}"
    assert errs[0].detail.endswith("but multiple fields are set")


def test_per_device_node_selection_rules():
    assert errs_of(slice_(nodeName=..., perDeviceNodeSelection=True, devices=[dev(nodeName="n1")])) == []
    assert errs_of(slice_(devices=[dev(allNodes=True)])) == [("Invalid", "spec.devices[0]")]


@pytest.mark.parametrize(
    "pool,expected",
    [
        ({"name": "", "generation": 0, "resourceSliceCount": 1}, [("Required", "spec.pool.name")]),
        ({"name": "a/b.c", "generation": 0, "resourceSliceCount": 1}, []),
        ({"name": "a//b", "generation": 0, "resourceSliceCount": 1}, [("Invalid", "spec.pool.name")]),
        (
            {"name": "p", "generation": -1, "resourceSliceCount": 0},
            [("Invalid", "spec.pool.resourceSliceCount"), ("Invalid", "spec.pool.generation")],
        ),
    ],
)
def test_pool(pool, expected):
    assert errs_of(slice_(pool=pool)) == expected


def test_driver_name():
    assert errs_of(slice_(driver="")) == [("Required", "spec.driver")]
    assert errs_of(slice_(driver="a" * 64)) == [("TooLong", "spec.driver")]
    assert errs_of(slice_(driver="-bad")) == [("Invalid", "spec.driver")]


def test_device_limits():
    assert errs_of(slice_(devices=[dev(name=f"d{i}") for i in range(128)])) == []
    assert errs_of(slice_(devices=[dev(name=f"d{i}") for i in range(129)])) == [("TooMany", "spec.devices")]
    tainted = [dev(name=f"d{i}", taints=[{"key": "k", "effect": "NoSchedule"}]) for i in range(65)]
    assert errs_of(slice_(devices=tainted)) == [("TooMany", "spec.devices")]
    listy = [dev(name=f"d{i}", attributes={"a": {"ints": [1]}}) for i in range(65)]
    assert errs_of(slice_(devices=listy)) == [("TooMany", "spec.devices")]
    assert errs_of(slice_(devices=[dev(), dev()])) == [("Duplicate", "spec.devices[1]")]


def test_attributes_and_capacities_combined_limit():
    attrs = {f"a{i}": {"int": i} for i in range(20)}
    caps = {f"c{i}": {"value": "1"} for i in range(13)}
    errs = validate_resource_slice(slice_(devices=[dev(attributes=attrs, capacity=caps)]))
    assert [(e.type, e.field, e.value) for e in errs] == [("Invalid", "spec.devices[0]", 33)]
    assert errs[0].detail == "the total number of attributes and capacities must not exceed 32"


@pytest.mark.parametrize(
    "attrs,expected",
    [
        ({"x": {}}, [("Invalid", "spec.devices[0].attributes[x]")]),
        ({"x": {"int": 1, "bool": True}}, [("Invalid", "spec.devices[0].attributes[x]")]),
        ({"x": {"version": "1.0"}}, [("Invalid", "spec.devices[0].attributes[x].version")]),
        ({"x": {"string": "s" * 65}}, [("TooLong", "spec.devices[0].attributes[x].string")]),
        ({"x": {"strings": []}}, [("Invalid", "spec.devices[0].attributes[x].strings")]),
        ({"1x": {"int": 1}}, [("Invalid", "spec.devices[0].attributes")]),
        ({"a" * 33: {"int": 1}}, [("TooLong", "spec.devices[0].attributes")]),
        ({"/x": {"int": 1}}, [("Invalid", "spec.devices[0].attributes")]),
        ({"a/b/c": {"int": 1}}, [("Invalid", "spec.devices[0].attributes")]),
        ({"example.com/ok_1": {"bool": False}}, []),
    ],
)
def test_attributes(attrs, expected):
    assert errs_of(slice_(devices=[dev(attributes=attrs)])) == expected


def test_shared_counters_and_consumption():
    sc = [{"name": "gpu-mem", "counters": {"memory": {"value": "80Gi"}}}]
    ok = slice_(devices=..., sharedCounters=sc)
    assert errs_of(ok) == []
    both = slice_(sharedCounters=sc)
    assert errs_of(both) == [("Invalid", "spec")]
    bad = slice_(
        devices=..., sharedCounters=[{"name": "", "counters": {}}, {"name": "x", "counters": {"Bad": {"value": "1"}}}]
    )
    assert errs_of(bad) == [
        ("Required", "spec.sharedCounters[0].name"),
        ("Required", "spec.sharedCounters[0].counters"),
        ("Invalid", "spec.sharedCounters[1].counters"),
    ]
    many = slice_(devices=..., sharedCounters=[{"name": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(9)])
    assert errs_of(many) == [("TooMany", "spec.sharedCounters")]
    cons = [{"counterSet": "a", "counters": {"c": {"value": "1"}}}] * 2
    assert errs_of(slice_(devices=[dev(consumesCounters=cons)])) == [
        ("Duplicate", "spec.devices[0].consumesCounters[1]")
    ]


def test_taints():
    taints = [
        {"key": "example.com/health", "effect": "NoExecute"},
        {"key": "-x", "effect": "Bogus"},
        {"key": "k", "effect": ""},
    ]
    assert errs_of(slice_(devices=[dev(taints=taints)])) == [
        ("Invalid", "spec.devices[0].taints[1].key"),
        ("NotSupported", "spec.devices[0].taints[1].effect"),
        ("Required", "spec.devices[0].taints[2].effect"),
    ]
    assert errs_of(slice_(devices=[dev(taints=[{"key": "k", "effect": "None"}] * 17)])) == [
        ("TooMany", "spec.devices[0].taints")
    ]


def test_binding_conditions():
    ok = dev(bindingConditions=["Attached"], bindingFailureConditions=["Failed"], bindsToNode=True)
    assert errs_of(slice_(devices=[ok])) == []
    assert errs_of(slice_(devices=[dev(bindingConditions=["a"] * 5, bindingFailureConditions=["f"])])) == [
        ("TooMany", "spec.devices[0].bindingConditions"),
        ("Duplicate", "spec.devices[0].bindingConditions[1]"),
        ("Duplicate", "spec.devices[0].bindingConditions[2]"),
        ("Duplicate", "spec.devices[0].bindingConditions[3]"),
        ("Duplicate", "spec.devices[0].bindingConditions[4]"),
    ]
    assert errs_of(slice_(devices=[dev(bindingConditions=["a"])])) == [
        ("Invalid", "spec.devices[0].bindingFailureConditions")
    ]
    assert errs_of(slice_(devices=[dev(bindingConditions=["a"], bindingFailureConditions=["a"])])) == [
        ("Invalid", "spec.devices[0].bindingFailureConditions[0]")
    ]
    assert errs_of(slice_(devices=[dev(bindingConditions=["bad cond"], bindingFailureConditions=["f"])])) == [
        ("Invalid", "spec.devices[0].bindingConditions[0]")
    ]


def cap_dev(policy, value="10", multi=True):
    d = dev(capacity={"bw": {"value": value, "requestPolicy": policy}})
    if multi:
        d["allowMultipleAllocations"] = True
    return d


@pytest.mark.parametrize(
    "policy,expected",
    [
        ({"default": "1", "validRange": {"min": "1", "max": "10", "step": "1"}}, []),
        ({"default": "2", "validValues": ["1", "2", "4"]}, []),
        ({"validValues": ["1"]}, [("Required", "spec.devices[0].capacity[bw].requestPolicy.default")]),
        (
            {"default": "3", "validValues": ["1", "2"]},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validValues")],
        ),
        (
            {"default": "1", "validValues": ["2", "1"]},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validValues[1]")],
        ),
        (
            {"default": "1", "validValues": ["1", "20"]},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validValues[1]")],
        ),
        (
            {"default": "1", "validValues": ["1", "1000m"]},
            [("Duplicate", "spec.devices[0].capacity[bw].requestPolicy.validValues[1]")],
        ),
        (
            {"default": "1", "validValues": ["1"], "validRange": {"min": "1"}},
            [("Forbidden", "spec.devices[0].capacity[bw].requestPolicy")],
        ),
        (
            {"default": "1", "validRange": {}},
            [("Required", "spec.devices[0].capacity[bw].requestPolicy.validRange.min")],
        ),
        (
            {"default": "0", "validRange": {"min": "1"}},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validRange.default")],
        ),
        (
            {"default": "2", "validRange": {"min": "1", "step": "2"}},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validRange.step")],
        ),
        (
            {"default": "1", "validRange": {"min": "1", "max": "20"}},
            [("Invalid", "spec.devices[0].capacity[bw].requestPolicy.validRange.max")],
        ),
    ],
)
def test_request_policy(policy, expected):
    assert errs_of(slice_(devices=[cap_dev(policy)])) == expected


def test_request_policy_needs_multi_allocation():
    errs = validate_resource_slice(slice_(devices=[cap_dev({"default": "1"}, multi=False)]))
    assert [(e.type, e.field, e.detail) for e in errs] == [
        ("Forbidden", "spec.devices[0].capacity[bw].requestPolicy", "allowMultipleAllocations must be true")
    ]


def test_bad_quantity():
    assert errs_of(slice_(devices=[dev(capacity={"m": {"value": "1x"}})])) == [
        ("Invalid", "spec.devices[0].capacity[m].value")
    ]


@pytest.mark.parametrize(
    "mappings,expected",
    [
        ({"cpu": {"allocationMultiplier": "2"}}, []),
        ({"memory": {"capacityKey": "mem", "allocationMultiplier": "1"}}, []),
        ({"hugepages-2Mi": {}}, []),
        ({"ephemeral-storage": {"allocationMultiplier": "10Gi"}}, []),
        ({"example.com/gpu": {}}, [("Invalid", "spec.devices[0].nodeAllocatableResourceMappings[example.com/gpu]")]),
        (
            {"cpu": {"capacityKey": "nope"}},
            [("NotFound", "spec.devices[0].nodeAllocatableResourceMappings[cpu].capacityKey")],
        ),
        (
            {"cpu": {"allocationMultiplier": "0"}},
            [("Invalid", "spec.devices[0].nodeAllocatableResourceMappings[cpu].allocationMultiplier")],
        ),
    ],
)
def test_node_allocatable_mappings(mappings, expected):
    d = dev(capacity={"mem": {"value": "1Gi"}}, nodeAllocatableResourceMappings=mappings)
    assert errs_of(slice_(devices=[d])) == expected


def test_metadata_checked():
    obj = slice_()
    obj["metadata"] = {"name": "Bad", "namespace": "x"}
    assert errs_of(obj) == [("Invalid", "metadata.name"), ("Forbidden", "metadata.namespace")]


def test_update_immutables():
    old = slice_()
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["spec"]["driver"] = "other.example.com"
    new["spec"]["pool"]["name"] = "pool-b"
    new["spec"]["nodeName"] = "node-2"
    assert [(e.type, e.field) for e in validate_resource_slice_update(new, old)] == [
        ("Invalid", "spec.pool.name"),
        ("Invalid", "spec.driver"),
        ("Invalid", "spec.nodeName"),
    ]
