"""cpu.example.com: node CPUs as DRA devices in the three KEP-5517 shapes, each with
``nodeAllocatableResourceMappings`` so the scheduler and kubelet count them against the
node's allocatable cpu (and memory):

- ``cores``: one device per physical core (allocationMultiplier = threads per core);
- ``pool``: one device per socket whose cpu and memory are consumable capacity;
- ``partitions``: NUMA nodes and L3 caches drawing on one shared cpu counter set.
"""

from __future__ import annotations

from typing import Any

from mockkube.drivers.base import Driver, PoolSlices, attr, chunk

CPU_KEY = "cpu.example.com/cpu"
MEM_KEY = "cpu.example.com/memory"


class CPUDriver(Driver):
    name = "cpu.example.com"
    cdi_kind = "cpu"

    def node_pool(self, node: Any, config: dict) -> PoolSlices | None:
        shape = config.get("shape", "cores")
        sockets = int(config.get("sockets", 1))
        cores = int(config.get("coresPerSocket", 8))
        threads = int(config.get("threadsPerCore", 2))
        numa = int(config.get("numaPerSocket", 1))
        mem = str(config.get("memoryPerSocket", "64Gi"))
        devices: list[dict] = []
        counters: list[dict] = []
        if shape == "cores":
            for s in range(sockets):
                for c in range(cores):
                    devices.append(
                        {
                            "name": f"cpu-{s}-{c}",
                            "attributes": {
                                "socket": attr(s),
                                "numaNode": attr(s * numa + c * numa // cores),
                                "core": attr(s * cores + c),
                                "type": attr("core"),
                            },
                            "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": str(threads)}},
                        }
                    )
        elif shape == "pool":
            for s in range(sockets):
                devices.append(
                    {
                        "name": f"socket-{s}",
                        "allowMultipleAllocations": True,
                        "attributes": {"socket": attr(s), "type": attr("socket")},
                        "capacity": {CPU_KEY: {"value": str(cores * threads)}, MEM_KEY: {"value": mem}},
                        "nodeAllocatableResourceMappings": {
                            "cpu": {"capacityKey": CPU_KEY},
                            "memory": {"capacityKey": MEM_KEY},
                        },
                    }
                )
        else:
            total = sockets * cores * threads
            counters.append({"name": "node-cpu-counters", "counters": {"cpu": {"value": str(total)}}})
            per_numa = cores * threads // numa
            per_l3 = max(per_numa // 2, 1)
            for s in range(sockets):
                for n in range(numa):
                    nid = s * numa + n
                    devices.append(self._part(f"socket-{s}-numa-{n}", "numa", s, nid, per_numa))
                    for l3 in range(2 if per_numa >= 2 else 1):
                        devices.append(self._part(f"socket-{s}-numa-{n}-l3-{l3}", "l3cache", s, nid, per_l3))
        specs = [{"nodeName": node.name, "devices": part} for part in chunk(devices)]
        if counters:
            specs.append({"nodeName": node.name, "sharedCounters": counters})
        return PoolSlices(node.name, specs)

    @staticmethod
    def _part(name: str, typ: str, socket: int, numa: int, cpus: int) -> dict:
        return {
            "name": name,
            "attributes": {"type": attr(typ), "socket": attr(socket), "numaNode": attr(numa)},
            "capacity": {CPU_KEY: {"value": str(cpus)}},
            "consumesCounters": [{"counterSet": "node-cpu-counters", "counters": {"cpu": {"value": str(cpus)}}}],
            "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": CPU_KEY}},
        }
