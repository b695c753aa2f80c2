"""Feature gates and runtime-config, as kube-apiserver's ``--feature-gates`` and
``--runtime-config`` set them.

One ``FeatureGates`` per cluster: the API server (fields dropped, resources served), the
scheduler, controllers and kubelets all ask it, so a switched-off feature is off
everywhere at once. ``SPECS`` holds v1.36's defaults; it is generated from upstream's
versioned feature list (issue 26: the table below is the skeleton the generator replaces).
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping


class FeatureGateError(ValueError):
    """A bad ``--feature-gates`` or ``--runtime-config`` value: a start-up error."""


@dataclass(frozen=True)
class FeatureSpec:
    """One gate at v1.36: its default, its stage (ALPHA, BETA, GA, DEPRECATED) and whether
    it is locked to its default."""

    default: bool
    stage: str
    locked: bool = False


# name -> spec at v1.36 (skeleton; to be generated from upstream)
SPECS: dict[str, FeatureSpec] = {
    "DRAAdminAccess": FeatureSpec(True, "BETA"),
    "DRAConsumableCapacity": FeatureSpec(False, "ALPHA"),
    "DRADeviceBindingConditions": FeatureSpec(False, "ALPHA"),
    "DRADeviceTaints": FeatureSpec(False, "ALPHA"),
    "DRAExtendedResource": FeatureSpec(False, "ALPHA"),
    "DRANodeAllocatableResources": FeatureSpec(False, "ALPHA"),
    "DRAPartitionableDevices": FeatureSpec(False, "ALPHA"),
    "DRAPrioritizedList": FeatureSpec(True, "BETA"),
    "DRAWorkloadResourceClaims": FeatureSpec(False, "ALPHA"),
    "DynamicResourceAllocation": FeatureSpec(True, "GA", locked=True),
    "GangScheduling": FeatureSpec(False, "ALPHA"),
    "GenericWorkload": FeatureSpec(False, "ALPHA"),
}


def parse_gate_list(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as component-base's flag reads it (spaces around items allowed)."""
    out: dict[str, bool] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        low = value.lower()
        if low not in ("true", "false", "1", "0", "t", "f"):
            raise FeatureGateError(
                f"invalid value of {name}={value}, err: strconv.ParseBool: parsing {value!r}: invalid syntax"
            )
        out[name] = low in ("true", "1", "t")
    return out


class FeatureGates:
    """The cluster's gates: v1.36's defaults with the user's overrides on top."""

    def __init__(self, overrides: Mapping[str, bool] | None = None, specs: Mapping[str, FeatureSpec] = SPECS) -> None:
        self.specs = specs
        self.overrides: dict[str, bool] = {}
        for name, value in (overrides or {}).items():
            spec = specs.get(name)
            if spec is None:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if spec.locked and bool(value) != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {str(bool(value)).lower()}, feature is locked to {str(spec.default).lower()}"
                )
            self.overrides[name] = bool(value)

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        return cls(parse_gate_list(text))

    def enabled(self, name: str) -> bool:
        """Whether ``name`` is on; an unknown name is a programming error (KeyError)."""
        if name in self.overrides:
            return self.overrides[name]
        return self.specs[name].default

    def merged(self, overrides: Mapping[str, bool]) -> FeatureGates:
        """These gates with more overrides on top (later settings win)."""
        return FeatureGates({**self.overrides, **overrides}, self.specs)

    def items(self) -> Iterable[tuple[str, bool]]:
        return ((name, self.enabled(name)) for name in sorted(self.specs))

    def __repr__(self) -> str:
        return f"FeatureGates({self.overrides!r})"
