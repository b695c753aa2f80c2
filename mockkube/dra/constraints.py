"""Claim constraints: matchAttribute (all devices of the named requests share a value) and
distinctAttribute (no two share a value). Both are monotonic, so the search can stop as
soon as one refuses a device."""

from __future__ import annotations

from mockkube.dra.pools import DeviceInfo


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

    def add(self, base: str, sub: str, device: DeviceInfo) -> bool:
        if not self.applies(base, sub):
            return True
        value = device.attribute(self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, device: DeviceInfo) -> None:
        if self.applies(base, sub):
            self.count -= 1


class DistinctAttribute(_Constraint):
    def __init__(self, requests: list[str] | None, attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: list[tuple[int, dict]] = []

    def add(self, base: str, sub: str, device: DeviceInfo) -> bool:
        if not self.applies(base, sub):
            return True
        value = device.attribute(self.attribute)
        if value is None or any(v == value for _, v in self.values):
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
