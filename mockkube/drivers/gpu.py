"""gpu.example.com: GPUs with model/uuid/driverVersion/pcieRoot/numa attributes and memory
capacity; optionally MIG-like partitions through sharedCounters, or memory as consumable
capacity shared by several claims (allowMultipleAllocations)."""

from __future__ import annotations

import hashlib
from typing import Any

from mockkube.drivers.base import Driver, PoolSlices, attr, chunk
from mockkube.machinery.quantity import parse_quantity

# (profile name, fraction of memory in 1/8ths, compute slices of 7, how many fit)
_PARTITIONS = (("1g", 1, 1, 7), ("3g", 4, 3, 2))


def gpu_uuid(node: str, index: int) -> str:
    h = hashlib.sha1(f"{node}/{index}".encode()).hexdigest()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class GPUDriver(Driver):
    name = "gpu.example.com"
    cdi_kind = "gpu"

    def node_pool(self, node: Any, config: dict) -> PoolSlices | None:
        count = int(config.get("count", 2))
        if count == 0:
            return None
        model = config.get("model", "LATEST-GPU-MODEL")
        memory = str(config.get("memory", "80Gi"))
        version = config.get("driverVersion", "550.54.15")
        numa = int(config.get("numaNodes", 2))
        devices: list[dict] = []
        counter_sets: list[dict] = []
        mem_bytes = parse_quantity(memory).value()
        for i in range(count):
            base = {
                "attributes": {
                    "model": attr(model),
                    "uuid": attr(gpu_uuid(node.name, i)),
                    "index": attr(i),
                    "driverVersion": {"version": version},
                    "numa": attr(i * numa // count),
                    "resource.kubernetes.io/pcieRoot": attr(f"pci0000:{(i * numa // count):02x}"),
                },
                "capacity": {"memory": {"value": memory}},
            }
            if config.get("consumableMemory"):
                base["allowMultipleAllocations"] = True
                base["capacity"] = {
                    "memory": {
                        "value": memory,
                        "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
                    }
                }
                devices.append(dict(base, name=f"gpu-{i}"))
                continue
            if not config.get("partitions"):
                devices.append(dict(base, name=f"gpu-{i}"))
                continue
            cs = f"gpu-{i}-counters"
            counter_sets.append({"name": cs, "counters": {"memory": {"value": memory}, "slices": {"value": "7"}}})
            whole = dict(base, name=f"gpu-{i}")
            whole["consumesCounters"] = [
                {"counterSet": cs, "counters": {"memory": {"value": memory}, "slices": {"value": "7"}}}
            ]
            devices.append(whole)
            for prof, eighths, slices, n in _PARTITIONS:
                part_mem = str(mem_bytes * eighths // 8)
                for j in range(n):
                    d = {
                        "name": f"gpu-{i}-{prof}-{j}",
                        "attributes": dict(base["attributes"], profile=attr(prof), parent=attr(f"gpu-{i}")),
                        "capacity": {"memory": {"value": part_mem}},
                        "consumesCounters": [
                            {
                                "counterSet": cs,
                                "counters": {"memory": {"value": part_mem}, "slices": {"value": str(slices)}},
                            }
                        ],
                    }
                    devices.append(d)
        specs = [{"nodeName": node.name, "devices": part} for part in chunk(devices)]
        specs += [{"nodeName": node.name, "sharedCounters": part} for part in chunk(counter_sets, 8) if part]
        return PoolSlices(node.name, specs)
