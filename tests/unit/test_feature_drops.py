"""upstream's dropDisabled...Fields rules (mockkube/apiserver/resources/feature_drops.py):
a switched-off feature's fields go on create and stay on update only where the old object
already used them."""

from __future__ import annotations

import copy

import pytest

from mockkube.apiserver.resources import feature_drops as fd
from mockkube.config.features import DEPENDENCIES, FeatureGates

ON = FeatureGates({"DRANodeAllocatableResources": True})


def off(*names: str) -> FeatureGates:
    """These gates off, with every gate that depends on them (kube-apiserver refuses a
    dependent gate left on)."""
    gone = set(names)
    while True:
        more = {g for g, on in DEPENDENCIES.items() if gone & set(on)} - gone
        if not more:
            return FeatureGates({n: False for n in gone})
        gone |= more


def slice_with(**device_fields) -> dict:
    return {"spec": {"driver": "d", "devices": [{"name": "dev-0", **device_fields}]}}


SLICE_CASES = [
    ("DRADeviceTaints", {"taints": [{"key": "k", "effect": "NoSchedule"}]}),
    ("DRAPartitionableDevices", {"consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]}),
    ("DRADeviceBindingConditions", {"bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}),
    ("DRAResourceClaimDeviceStatus", {"bindsToNode": True}),  # binding conditions need both gates
    ("DRAConsumableCapacity", {"allowMultipleAllocations": True}),
    ("DRANodeAllocatableResources", {"nodeAllocatableResourceMappings": [{"resourceName": "cpu"}]}),
]


@pytest.mark.parametrize("gate, fields", SLICE_CASES, ids=[c[0] for c in SLICE_CASES])
def test_slice_fields_dropped_on_create_kept_on_update_in_use(gate, fields):
    new = slice_with(**copy.deepcopy(fields))
    fd.resource_slice(new, None, off(gate))
    assert new["spec"]["devices"][0] == {"name": "dev-0"}
    kept = slice_with(**copy.deepcopy(fields))
    fd.resource_slice(kept, slice_with(**copy.deepcopy(fields)), off(gate))
    assert kept == slice_with(**fields)
    added = slice_with(**copy.deepcopy(fields))
    fd.resource_slice(added, slice_with(), off(gate))  # not in use before: dropped on update too
    assert added["spec"]["devices"][0] == {"name": "dev-0"}
    on = slice_with(**copy.deepcopy(fields))
    fd.resource_slice(on, None, ON)
    assert on == slice_with(**fields)


def test_slice_partitionable_spec_fields_and_capacity_policy():
    new = {
        "spec": {
            "sharedCounters": [{"name": "s"}],
            "perDeviceNodeSelection": True,
            "devices": [{"name": "d", "nodeName": "n", "capacity": {"mem": {"value": "1", "requestPolicy": {}}}}],
        }
    }
    fd.resource_slice(new, None, off("DRAPartitionableDevices", "DRAConsumableCapacity"))
    assert new == {"spec": {"devices": [{"name": "d", "capacity": {"mem": {"value": "1"}}}]}}


def claim(**exactly) -> dict:
    return {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c", **exactly}}]}}}


def test_claim_spec_rules():
    new = claim(tolerations=[{"key": "k"}], capacity={"requests": {"mem": "1"}})
    fd.claim(new, None, off("DRADeviceTaints", "DRAConsumableCapacity"))
    assert new == claim()
    prio = {
        "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}]}}
    }
    fd.claim(prio, None, off("DRAPrioritizedList"))
    assert prio == {"spec": {"devices": {"requests": [{"name": "r"}]}}}  # then validation rejects it, as upstream
    # distinctAttribute stays: upstream's loop clears a copy of each constraint
    distinct = {"spec": {"devices": {"requests": [], "constraints": [{"distinctAttribute": "a"}]}}}
    fd.claim(distinct, None, off("DRAConsumableCapacity"))
    assert distinct["spec"]["devices"]["constraints"] == [{"distinctAttribute": "a"}]


def test_claim_template_rules_apply_to_spec_spec():
    new = {"spec": {"spec": claim(tolerations=[{"key": "k"}])["spec"]}}
    fd.claim_template(new, None, off("DRADeviceTaints"))
    assert new == {"spec": {"spec": claim()["spec"]}}


def test_claim_status_rules():
    status = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "r",
                        "device": "d",
                        "shareID": "x",
                        "consumedCapacity": {"mem": "1"},
                        "bindingConditions": ["ready"],
                        "bindingFailureConditions": ["failed"],
                    }
                ]
            }
        },
        "devices": [{"driver": "d", "pool": "p", "device": "d", "shareID": "x"}],
    }
    old = claim()
    new = dict(claim(), status=copy.deepcopy(status))
    fd.claim(new, old, off("DRAConsumableCapacity", "DRADeviceBindingConditions"), "status")
    assert new["status"]["allocation"]["devices"]["results"] == [{"request": "r", "device": "d"}]
    assert new["status"]["devices"] == [{"driver": "d", "pool": "p", "device": "d"}]
    new = dict(claim(), status=copy.deepcopy(status))
    fd.claim(new, old, off("DRAResourceClaimDeviceStatus"), "status")
    assert "devices" not in new["status"]
    in_use = dict(claim(), status=copy.deepcopy(status))
    new = dict(claim(), status=copy.deepcopy(status))
    fd.claim(new, in_use, off("DRAResourceClaimDeviceStatus", "DRAConsumableCapacity"), "status")
    assert new["status"] == status


def test_device_class_extended_resource_name():
    new = {"spec": {"extendedResourceName": "example.com/gpu"}}
    fd.device_class(new, None, off("DRAExtendedResource"))
    assert new == {"spec": {}}
    kept = {"spec": {"extendedResourceName": "example.com/gpu"}}
    fd.device_class(kept, {"spec": {"extendedResourceName": "example.com/gpu"}}, off("DRAExtendedResource"))
    assert kept["spec"]["extendedResourceName"] == "example.com/gpu"


def test_pod_status_fields():
    status = {
        "phase": "Pending",
        "extendedResourceClaimStatus": {"resourceClaimName": "c", "requestMappings": []},
        "nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "c"}],
    }
    new = {"status": copy.deepcopy(status)}
    fd.pod(new, {"status": {"phase": "Pending"}}, off("DRAExtendedResource", "DRANodeAllocatableResources"), "status")
    assert new == {"status": {"phase": "Pending"}}
    new = {"status": copy.deepcopy(status)}
    fd.pod(new, None, ON)
    assert new == {"status": status}


def _grouped_pod() -> dict:
    return {"spec": {"containers": [{"name": "c"}], "schedulingGroup": {"podGroupName": "gang"}}}


def test_pod_scheduling_group_dropped_with_generic_workload_off_kept_in_use():
    new = _grouped_pod()
    fd.pod(new, None, FeatureGates())  # GenericWorkload: alpha, off by default
    assert "schedulingGroup" not in new["spec"]
    kept = _grouped_pod()
    fd.pod(kept, _grouped_pod(), FeatureGates())
    assert kept == _grouped_pod()
    added = _grouped_pod()
    fd.pod(added, {"spec": {"containers": [{"name": "c"}]}}, FeatureGates())
    assert "schedulingGroup" not in added["spec"]
    on = _grouped_pod()
    fd.pod(on, None, FeatureGates({"GenericWorkload": True}))
    assert on == _grouped_pod()
    status_only = _grouped_pod()  # a status write leaves the spec alone
    fd.pod(status_only, {"spec": {}}, FeatureGates(), "status")
    assert status_only == _grouped_pod()


def test_pod_templates_drop_scheduling_group_as_pods_do():
    job = {"spec": {"template": _grouped_pod()}}
    fd.pod_template(("spec", "template"))(job, None, FeatureGates())
    assert "schedulingGroup" not in job["spec"]["template"]["spec"]
    cron = {"spec": {"jobTemplate": {"spec": {"template": _grouped_pod()}}}}
    old = copy.deepcopy(cron)
    fd.pod_template(("spec", "jobTemplate", "spec", "template"))(cron, old, FeatureGates())
    assert cron == old  # in use before: kept
    on = {"spec": {"template": _grouped_pod()}}
    fd.pod_template(("spec", "template"))(on, None, FeatureGates({"GenericWorkload": True}))
    assert on["spec"]["template"] == _grouped_pod()


def _listed_slice() -> dict:
    return slice_with(attributes={"numa": {"ints": [0, 1]}, "model": {"string": "a100"}, "v": {"versions": ["1.0.0"]}})


def test_list_type_attribute_values_dropped_with_their_gate_off_kept_in_use():
    new = _listed_slice()
    fd.resource_slice(new, None, FeatureGates())  # DRAListTypeAttributes: alpha, off
    assert new["spec"]["devices"][0]["attributes"] == {"numa": {}, "model": {"string": "a100"}, "v": {}}
    kept = _listed_slice()
    fd.resource_slice(kept, _listed_slice(), FeatureGates())
    assert kept == _listed_slice()
    added = _listed_slice()
    fd.resource_slice(added, slice_with(attributes={"model": {"string": "a100"}}), FeatureGates())
    assert added["spec"]["devices"][0]["attributes"]["numa"] == {}
    on = _listed_slice()
    fd.resource_slice(on, None, FeatureGates({"DRAListTypeAttributes": True}))
    assert on == _listed_slice()


def test_group_claims_dropped_with_workload_resource_claims_off_kept_in_use():
    claims = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    pg = {"spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": copy.deepcopy(claims)}}
    only_generic = FeatureGates({"GenericWorkload": True})
    fd.pod_group(pg, None, only_generic)
    assert "resourceClaims" not in pg["spec"]
    kept = {"spec": {"resourceClaims": copy.deepcopy(claims)}}
    fd.pod_group(kept, {"spec": {"resourceClaims": claims}}, only_generic)
    assert kept["spec"]["resourceClaims"] == claims
    w = {"spec": {"podGroupTemplates": [{"name": "a", "resourceClaims": copy.deepcopy(claims)}, {"name": "b"}]}}
    fd.workload(w, None, only_generic)
    assert w["spec"]["podGroupTemplates"] == [{"name": "a"}, {"name": "b"}]
    on = {"spec": {"podGroupTemplates": [{"name": "a", "resourceClaims": copy.deepcopy(claims)}]}}
    fd.workload(on, None, FeatureGates({"GenericWorkload": True, "DRAWorkloadResourceClaims": True}))
    assert on["spec"]["podGroupTemplates"][0]["resourceClaims"] == claims
