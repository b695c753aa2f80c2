"""Partitionable devices: sharedCounters of a pool and the consumesCounters of devices.

A device that consumes counters can be allocated only while every counter it draws from
still has enough left after subtracting what allocated devices (and devices tentatively
picked in this allocation attempt) consume.
"""

from __future__ import annotations

from typing import Callable

from mockkube.dra.pools import DeviceInfo, PoolInfo
from mockkube.dra.qty import Quantity, q


def consumption(device: DeviceInfo) -> list[tuple[str, str, Quantity]]:
    """(counterSet, counter, amount) for every counter the device draws from."""
    out = []
    for dc in device.consumes_counters:
        for name, c in (dc.get("counters") or {}).items():
            out.append((dc.get("counterSet", ""), name, q((c or {}).get("value", "0"))))
    return out


class CounterTracker:
    """Remaining counters per pool during one allocation attempt (cheap to roll back)."""

    def __init__(self, device_consumes: Callable[[DeviceInfo], bool]) -> None:
        # device_consumes(d): True if d is allocated already (its counters are in use)
        self._allocated = device_consumes
        self._available: dict[int, dict[str, dict[str, Quantity]]] = {}

    def _pool_available(self, pool: PoolInfo) -> dict[str, dict[str, Quantity]]:
        avail = self._available.get(id(pool))
        if avail is None:
            avail = {cs: dict(cnt) for cs, cnt in pool.counter_sets.items()}
            for d in pool.devices:
                if d.consumes_counters and self._allocated(d):
                    for cs, name, amount in consumption(d):
                        if cs in avail and name in avail[cs]:
                            avail[cs][name] = avail[cs][name] - amount
            self._available[id(pool)] = avail
        return avail

    def try_consume(self, device: DeviceInfo) -> bool:
        """Take the device's counters if all fit; False (and no change) otherwise."""
        avail = self._pool_available(device.pool)
        needs = consumption(device)
        for cs, name, amount in needs:
            have = avail.get(cs, {}).get(name)
            if have is not None and have.cmp(amount) < 0:
                return False
        for cs, name, amount in needs:
            if name in avail.get(cs, {}):  # unknown counters are not checked (upstream)
                avail[cs][name] = avail[cs][name] - amount
        return True

    def release(self, device: DeviceInfo) -> None:
        avail = self._pool_available(device.pool)
        for cs, name, amount in consumption(device):
            if name in avail.get(cs, {}):
                avail[cs][name] = avail[cs][name] + amount
