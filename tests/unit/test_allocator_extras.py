from _dra_builders import DRIVER, NOW, dclass, dev, node, picked, slice_

from mockkube.dra.allocator import Allocator
from mockkube.dra.extended import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    extended_resource_claim,
    extended_resource_claim_status,
    extended_resource_classes,
)
from mockkube.dra.node_allocatable import claim_status, node_allocatable_demand
from mockkube.dra.state import AllocatedState


def pod(containers, init=()):
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"},
        "spec": {"initContainers": list(init), "containers": list(containers)},
    }


def container(name, **requests):
    return {
        "name": name,
        "resources": {"requests": {k.replace("__", "/").replace("_", "."): v for k, v in requests.items()}},
    }


# -- KEP-5004


def test_extended_resource_class_mapping_explicit_and_implicit():
    old = dclass("gpu-old", extendedResourceName="example.com/gpu")
    old["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    new = dclass("gpu-new", extendedResourceName="example.com/gpu")
    new["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    m = extended_resource_classes([old, new])
    assert m["example.com/gpu"] == "gpu-new"
    assert m["deviceclass.resource.kubernetes.io/gpu-old"] == "gpu-old"


def test_extended_resource_claim_requests_and_mappings():
    classes = [dclass("gpu", extendedResourceName="example.com/gpu")]
    p = pod(
        [container("a", cpu="1"), container("b", example_com__gpu="2")],
        init=[container("init", **{"deviceclass.resource.kubernetes.io/gpu": "1"})],
    )
    c, mappings = extended_resource_claim(p, classes)
    assert c["metadata"]["generateName"] == "p-extended-resources-"
    assert c["metadata"]["annotations"] == {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert c["metadata"]["ownerReferences"][0]["uid"] == "pod-uid"
    assert c["spec"]["devices"]["requests"] == [
        {
            "name": "container-0-request-0",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        },
        {
            "name": "container-2-request-0",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        },
    ]
    assert mappings[1] == {
        "containerName": "b",
        "resourceName": "example.com/gpu",
        "requestName": "container-2-request-0",
    }
    assert (
        extended_resource_claim_status("p-extended-resources-x", mappings)["resourceClaimName"]
        == "p-extended-resources-x"
    )


def test_extended_resource_from_device_plugin_node_is_not_dra():
    classes = [dclass("gpu", extendedResourceName="example.com/gpu")]
    p = pod([container("b", example_com__gpu="1")])
    n = {"metadata": {"name": "n1"}, "status": {"allocatable": {"example.com/gpu": "4"}}}
    assert extended_resource_claim(p, classes, n) == (None, [])
    assert extended_resource_claim(pod([container("a", cpu="1")]), classes)[0] is None


def test_extended_resource_claim_allocates():
    classes = [dclass("gpu", extendedResourceName="example.com/gpu")]
    c, _ = extended_resource_claim(pod([container("b", example_com__gpu="2")]), classes)
    out = Allocator([slice_("s", [dev("g0"), dev("g1")])], classes).allocate([c], node(), AllocatedState(), NOW)
    assert picked(out) == ["g0", "g1"]


# -- KEP-5517


def cpu_slice():
    cores = []
    for i in range(2):
        d = dev(f"core-{i}")
        d["nodeAllocatableResourceMappings"] = {
            "cpu": {"allocationMultiplier": "2"},
            "memory": {"allocationMultiplier": "1Gi"},
        }
        cores.append(d)
    shared = dev("cpus")
    shared["allowMultipleAllocations"] = True
    shared["capacity"] = {"dra.example.com/cpu": {"value": "64"}}
    shared["nodeAllocatableResourceMappings"] = {"cpu": {"capacityKey": "dra.example.com/cpu"}}
    return slice_("s", cores + [shared])


def result(device, **extra):
    return {"request": "r", "driver": DRIVER, "pool": "n1", "device": device, **extra}


def test_node_allocatable_demand_per_device_multiplier():
    demand = node_allocatable_demand({"devices": {"results": [result("core-0"), result("core-1")]}}, [cpu_slice()])
    assert {k: v.canonical() for k, v in demand.items()} == {"cpu": "4", "memory": "2Gi"}


def test_node_allocatable_demand_from_consumed_capacity():
    alloc = {"devices": {"results": [result("cpus", shareID="x", consumedCapacity={"dra.example.com/cpu": "8"})]}}
    assert node_allocatable_demand(alloc, [cpu_slice()])["cpu"].canonical() == "8"
    exclusive = {"devices": {"results": [result("cpus")]}}
    assert node_allocatable_demand(exclusive, [cpu_slice()])["cpu"].canonical() == "64"


def test_node_allocatable_demand_ignores_admin_access_and_unknown_devices():
    alloc = {"devices": {"results": [result("core-0", adminAccess=True), result("gone")]}}
    assert node_allocatable_demand(alloc, [cpu_slice()]) == {}


def test_node_allocatable_claim_status():
    demand = node_allocatable_demand({"devices": {"results": [result("core-0")]}}, [cpu_slice()])
    # containers in pod order (upstream appends them as it walks the pod), each once
    assert claim_status("c", ["b", "a", "a"], demand) == {
        "resourceClaimName": "c",
        "containers": ["b", "a"],
        "resources": {"cpu": "2", "memory": "1Gi"},
    }


# -- AllocatedState


def test_allocated_state_from_claims_and_shares():
    claims = [
        {"status": {"allocation": {"devices": {"results": [result("g0")]}}}},
        {
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            result("nic", shareID="s1", consumedCapacity={"bandwidth": "4G"}),
                            result("nic", shareID="s2", consumedCapacity={"bandwidth": "2G"}),
                        ]
                    }
                }
            }
        },
        {"status": {}},
    ]
    state = AllocatedState.from_claims(claims)
    assert state.in_use((DRIVER, "n1", "g0")) and not state.in_use((DRIVER, "n1", "nic"))
    assert state.capacity[(DRIVER, "n1", "nic")][f"{DRIVER}/bandwidth"].canonical() == "6G"
    state.remove(claims[1]["status"]["allocation"])
    assert not state.shared_in_use((DRIVER, "n1", "nic"))
