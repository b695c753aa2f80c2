"""AllocatedState: what is already taken, from claims' status.allocation plus in-flight
reservations (the scheduler adds a result at Reserve and removes it at Unreserve).

Devices allocated with adminAccess are not counted (they do not exclude other users).
Results with a shareID are shares of an allowMultipleAllocations device: they add their
consumedCapacity to the device's tally instead of taking the device exclusively.
"""

from __future__ import annotations

from typing import Iterable

from mockkube.dra.pools import DeviceID, qualify
from mockkube.dra.qty import Quantity, q


class AllocatedState:
    """Mutable tally; `version` changes on every add/remove (for callers' caches)."""

    __slots__ = ("devices", "capacity", "share_ids", "version")

    def __init__(self) -> None:
        self.devices: dict[DeviceID, int] = {}
        self.capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.share_ids: dict[tuple[DeviceID, str], int] = {}
        self.version = 0

    @classmethod
    def from_claims(cls, claims: Iterable[dict]) -> "AllocatedState":
        state = cls()
        for claim in claims:
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                state.add(allocation)
        return state

    def copy(self) -> "AllocatedState":
        other = AllocatedState()
        other.devices = dict(self.devices)
        other.capacity = {k: dict(v) for k, v in self.capacity.items()}
        other.share_ids = dict(self.share_ids)
        other.version = self.version
        return other

    def _apply(self, allocation: dict, sign: int) -> None:
        for r in (allocation.get("devices") or {}).get("results") or ():
            if r.get("adminAccess"):
                continue
            did: DeviceID = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            share = r.get("shareID")
            if share:
                key = (did, share)
                n = self.share_ids.get(key, 0) + sign
                if n > 0:
                    self.share_ids[key] = n
                else:
                    self.share_ids.pop(key, None)
                tally = self.capacity.setdefault(did, {})
                for name, value in (r.get("consumedCapacity") or {}).items():
                    fq = qualify(name, did[0])
                    amount = q(value) * sign
                    tally[fq] = tally[fq] + amount if fq in tally else amount
                if not any(k[0] == did for k in self.share_ids):
                    self.capacity.pop(did, None)
                continue
            n = self.devices.get(did, 0) + sign
            if n > 0:
                self.devices[did] = n
            else:
                self.devices.pop(did, None)
        self.version += 1

    def add(self, allocation: dict) -> None:
        """Count an allocation (status.allocation shape) as taken."""
        self._apply(allocation, 1)

    def remove(self, allocation: dict) -> None:
        """Undo `add` for the same allocation."""
        self._apply(allocation, -1)

    def in_use(self, did: DeviceID) -> bool:
        return did in self.devices

    def shared_in_use(self, did: DeviceID) -> bool:
        return did in self.capacity
