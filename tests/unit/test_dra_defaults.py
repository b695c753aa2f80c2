from mockkube.apiserver.resources import dra_defaults as d


def test_claim_request_defaults():
    obj = {
        "spec": {
            "devices": {
                "requests": [
                    {"name": "a", "exactly": {"deviceClassName": "c"}},
                    {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
                    {
                        "name": "c",
                        "firstAvailable": [
                            {"name": "s", "deviceClassName": "c"},
                            {"name": "t", "deviceClassName": "c", "count": 3},
                        ],
                    },
                ]
            }
        }
    }
    d.default_resource_claim(obj)
    reqs = obj["spec"]["devices"]["requests"]
    assert reqs[0]["exactly"] == {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}
    assert reqs[1]["exactly"] == {"deviceClassName": "c", "allocationMode": "All"}
    assert reqs[2]["firstAvailable"][0]["count"] == 1
    assert reqs[2]["firstAvailable"][1] == {
        "name": "t",
        "deviceClassName": "c",
        "allocationMode": "ExactCount",
        "count": 3,
    }


def test_template_defaults_and_capacity_canonical():
    obj = {
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "a", "exactly": {"deviceClassName": "c", "capacity": {"requests": {"mem": "1.5Gi"}}}}
                    ]
                }
            }
        }
    }
    d.default_resource_claim_template(obj)
    ex = obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert ex["count"] == 1 and ex["capacity"]["requests"]["mem"] == "1536Mi"


def test_slice_defaults():
    obj = {
        "spec": {
            "devices": [
                {
                    "name": "d",
                    "taints": [
                        {"key": "k", "effect": "NoSchedule"},
                        {"key": "k2", "effect": "None", "timeAdded": "2020-01-01T00:00:00Z"},
                    ],
                    "capacity": {
                        "m": {"value": "0.5", "requestPolicy": {"default": "1000m", "validValues": ["1000m", "2"]}}
                    },
                    "nodeAllocatableResourceMappings": {"cpu": {}, "memory": {"allocationMultiplier": "1024Mi"}},
                }
            ],
            "sharedCounters": None,
        }
    }
    d.default_resource_slice(obj, now="2024-05-01T10:00:00Z")
    dev = obj["spec"]["devices"][0]
    assert dev["taints"][0]["timeAdded"] == "2024-05-01T10:00:00Z"
    assert dev["taints"][1]["timeAdded"] == "2020-01-01T00:00:00Z"
    assert dev["capacity"]["m"] == {"value": "500m", "requestPolicy": {"default": "1", "validValues": ["1", "2"]}}
    assert dev["nodeAllocatableResourceMappings"] == {
        "cpu": {"allocationMultiplier": "1"},
        "memory": {"allocationMultiplier": "1Gi"},
    }


def test_slice_counters_canonical_and_bad_quantity_untouched():
    obj = {"spec": {"sharedCounters": [{"name": "s", "counters": {"a": {"value": "2048Ki"}, "b": {"value": "1x"}}}]}}
    d.default_resource_slice(obj)
    assert obj["spec"]["sharedCounters"][0]["counters"] == {"a": {"value": "2Mi"}, "b": {"value": "1x"}}


def test_taint_rule_time_added():
    obj = {"spec": {"taint": {"key": "k", "effect": "NoExecute"}}}
    d.default_device_taint_rule(obj, now="2024-05-01T10:00:00Z")
    assert obj["spec"]["taint"]["timeAdded"] == "2024-05-01T10:00:00Z"
    untouched = {"spec": {"taint": {"key": "k", "effect": "NoExecute"}}}
    d.default_device_taint_rule(untouched)
    assert "timeAdded" not in untouched["spec"]["taint"]
