"""The driver plugin interface every simulated DRA driver implements.

A driver is two things, as upstream: a kubelet plugin per node (publishes that node's
ResourceSlices, prepares and unprepares claims, returns CDI device IDs) and, for
network-attached devices, a cluster-level part (pools shared by several nodes). Drivers
never write to the API themselves: ``publish``/``publish_shared`` return the desired
slices and the publisher reconciles them (pure in, objects out).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SLICE_MAX_DEVICES = 64  # the limit for slices with taints/counters: keep every slice valid


@dataclass
class PoolSlices:
    """The desired content of one pool: a list of slice specs without ``pool``/``driver``.

    Each spec carries exactly one of nodeName/nodeSelector/allNodes and either
    ``devices`` or ``sharedCounters``.
    """

    pool: str
    specs: list[dict] = field(default_factory=list)


@dataclass
class Prepared:
    """What NodePrepareResources returned for one allocation result."""

    request: str
    pool: str
    device: str
    cdi_device_ids: list[str]


class Driver:
    """Base class: override ``node_pool`` (and ``shared_pools`` for fabric devices)."""

    name = "driver.example.com"
    cdi_kind = "device"  # CDI ids are "<name>/<cdi_kind>=<device>"

    def __init__(self, settings: dict | None = None) -> None:
        self.settings = dict(settings or {})
        # (pool, device) -> taint effect, for devices reported unhealthy
        self.unhealthy: dict[tuple[str, str], str] = {}
        self.prepared: dict[str, list[Prepared]] = {}  # claim uid -> devices

    # -- publishing -------------------------------------------------------------
    def node_pool(self, node: Any, config: dict) -> PoolSlices | None:
        """The node-local pool for ``node`` (a NodeSpec) given its profile ``config``."""
        return None

    def shared_pools(self, fabric: list[dict]) -> list[PoolSlices]:
        """Pools not tied to one node (network-attached devices)."""
        return []

    def publish(self, node: Any, config: dict) -> list[dict]:
        """Full ResourceSlice specs for the node's pool (generation left to the publisher)."""
        ps = self.node_pool(node, config)
        return self._specs(ps) if ps else []

    def _specs(self, ps: PoolSlices) -> list[dict]:
        out = []
        for spec in ps.specs:
            s = {"driver": self.name, "pool": {"name": ps.pool, "generation": 0, "resourceSliceCount": len(ps.specs)}}
            s.update(spec)
            for d in s.get("devices") or ():
                effect = self.unhealthy.get((ps.pool, d["name"]))
                if effect:
                    d["taints"] = [{"key": f"{self.name}/unhealthy", "value": "true", "effect": effect}]
            out.append(s)
        return out

    # -- kubelet plugin ---------------------------------------------------------
    def cdi_id(self, device: str) -> str:
        return f"{self.name}/{self.cdi_kind}={device}"

    def prepare(self, claim: dict, pod: dict) -> list[Prepared]:
        """NodePrepareResources for this driver's results in ``claim``; idempotent."""
        uid = claim["metadata"]["uid"]
        if uid in self.prepared:
            return self.prepared[uid]
        out = []
        for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ():
            if r.get("driver") != self.name:
                continue
            self.check_prepare(r)
            out.append(
                Prepared(
                    r.get("request", ""), r.get("pool", ""), r.get("device", ""), [self.cdi_id(r.get("device", ""))]
                )
            )
        self.prepared[uid] = out
        return out

    def check_prepare(self, result: dict) -> None:
        """Raise RuntimeError when a device cannot be prepared (e.g. it is unhealthy)."""

    def unprepare(self, claim_uid: str) -> None:
        self.prepared.pop(claim_uid, None)

    # -- health -----------------------------------------------------------------
    def health_effect(self) -> str:
        return self.settings.get("healthTaintEffect", "NoSchedule")

    def set_health(self, pool: str, device: str, healthy: bool, effect: str | None = None) -> bool:
        """Mark a device (un)healthy; True when that changed what the driver publishes."""
        key = (pool, device)
        if healthy:
            return self.unhealthy.pop(key, None) is not None
        eff = effect or self.health_effect()
        if self.unhealthy.get(key) == eff:
            return False
        self.unhealthy[key] = eff
        return True

    def device_classes(self) -> list[dict]:
        """The DeviceClasses a profile creates for this driver."""
        return [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": self.name},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{self.name}"'}}]},
            }
        ]


def chunk(devices: list[dict], size: int = SLICE_MAX_DEVICES) -> list[list[dict]]:
    return [devices[i : i + size] for i in range(0, len(devices), size)] or [[]]


def attr(value: Any) -> dict:
    """A DeviceAttribute from a Python value."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": str(value)}
