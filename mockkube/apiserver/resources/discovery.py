"""discovery.k8s.io/v1 EndpointSlices (kept by the endpointslice controller)."""

from __future__ import annotations

from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]


class EndpointSliceStrategy(Strategy):
    tracks_generation = True

    def validate(self, obj: dict) -> list[fe.FieldError]:
        t = obj.get("addressType")
        if t is None:
            return [fe.required("addressType", "")]
        errs = [] if t in _ADDRESS_TYPES else [fe.not_supported("addressType", t, _ADDRESS_TYPES)]
        for i, ep in enumerate(obj.get("endpoints") or []):
            if not (ep or {}).get("addresses"):
                errs.append(fe.required(f"endpoints[{i}].addresses", "must contain at least 1 address"))
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = self.validate(new)
        if new.get("addressType") != old.get("addressType"):
            errs.append(fe.invalid("addressType", new.get("addressType"), "field is immutable"))
        return errs


endpointslices = REGISTRY.add(
    ResourceType(
        "discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", namespaced=True, strategy=EndpointSliceStrategy()
    )
)
