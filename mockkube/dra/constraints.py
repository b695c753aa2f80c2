"""Claim constraints: matchAttribute (all devices of the named requests share a value) and
distinctAttribute (no two share a value). Both are monotonic, so the search can stop as
soon as one refuses a device.

With DRAListTypeAttributes on (the device views say so: ``DeviceInfo.list_attrs``), values
compare as sets, a scalar being a one-element set, as v1.36's allocator does: match means
the devices' sets have a common element (a non-empty intersection of all of them),
distinct means every two are disjoint. Elements of different types (a string and a
version, say) never meet; an attribute with no value of a known type satisfies neither.
"""

from __future__ import annotations

from mockkube.dra.pools import DeviceInfo

_SCALARS = ("int", "bool", "string", "version")
_LISTS = ("ints", "bools", "strings", "versions")


def as_set(value: dict) -> frozenset | None:
    """An attribute value as a set of (type, value), or None for no value of a known type
    (upstream's attributeAsSet). Lists are checked first, as the CEL conversion does."""
    for kind, key in zip(_SCALARS, _LISTS):
        items = value.get(key)
        if items is not None:
            return frozenset((kind, v) for v in items)
    for kind in _SCALARS:
        if value.get(kind) is not None:
            return frozenset(((kind, value[kind]),))
    return None


class _Constraint:
    def __init__(self, requests: list[str] | None, attribute: str) -> None:
        self.requests = set(requests or ())
        self.attribute = attribute

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)


class MatchAttribute(_Constraint):
    def __init__(self, requests: list[str] | None, attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: dict | None = None
        self.count = 0
        # list mode: per device added, in order: (device, its set, the intersection so far)
        self.sets: list[tuple[int, frozenset, frozenset]] = []

    def add(self, base: str, sub: str, device: DeviceInfo) -> bool:
        if not self.applies(base, sub):
            return True
        value = device.attribute(self.attribute)
        if value is None:
            return False
        if device.list_attrs:
            values = as_set(value)
            if values is None:
                return False
            common = values if not self.sets else self.sets[-1][2] & values
            if not common:
                return False
            self.sets.append((id(device), values, common))
            return True
        if self.count == 0:
            self.value = value
        elif value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, device: DeviceInfo) -> None:
        if not self.applies(base, sub):
            return
        if not device.list_attrs:
            self.count -= 1
            return
        at = next((i for i in range(len(self.sets) - 1, -1, -1) if self.sets[i][0] == id(device)), None)
        if at is None:
            return
        rest = self.sets[at + 1 :]
        del self.sets[at:]
        for key, values, _ in rest:  # not the last one added: redo the intersections after it
            common = values if not self.sets else self.sets[-1][2] & values
            self.sets.append((key, values, common))


class DistinctAttribute(_Constraint):
    def __init__(self, requests: list[str] | None, attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[tuple[int, dict]] = []

    def add(self, base: str, sub: str, device: DeviceInfo) -> bool:
        if not self.applies(base, sub):
            return True
        value = device.attribute(self.attribute)
        if value is None:
            return False
        if device.list_attrs:
            values = as_set(value)
            if values is None or any(not values.isdisjoint(as_set(v) or ()) for _, v in self.values):
                return False
        elif any(v == value for _, v in self.values):
            return False
        self.values.append((id(device), value))
        return True

    def remove(self, base: str, sub: str, device: DeviceInfo) -> None:
        if self.applies(base, sub):
            for i in range(len(self.values) - 1, -1, -1):
                if self.values[i][0] == id(device):
                    del self.values[i]
                    return


def build(spec_constraints: list[dict] | None) -> list[_Constraint] | str:
    """Fresh constraint trackers for one claim, or an error message for an unknown kind."""
    out: list[_Constraint] = []
    for i, c in enumerate(spec_constraints or ()):
        if c.get("matchAttribute"):
            out.append(MatchAttribute(c.get("requests"), c["matchAttribute"]))
        elif c.get("distinctAttribute"):
            out.append(DistinctAttribute(c.get("requests"), c["distinctAttribute"]))
        else:
            return f"constraint #{i}: empty constraint (unsupported constraint type?)"
    return out
