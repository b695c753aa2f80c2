"""resource.k8s.io: DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice (v1)
and DeviceTaintRule (v1beta2). Validation and defaulting live in dra_validation/dra_defaults."""

from __future__ import annotations


from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource
from mockkube.resources import dra_defaults as d
from mockkube.resources import dra_validation as v
from mockkube.resources.strategies import SpecStatusStrategy

GROUP = "resource.k8s.io"


def _spec(o: dict, key: str) -> str:
    val = (o.get("spec") or {}).get(key)
    if val is None:
        return ""
    return str(val)


class DeviceClassStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        d.default_device_class(obj)

    def validate(self, obj: dict):
        return v.validate_device_class(obj)

    def validate_update(self, new: dict, old: dict):
        return v.validate_device_class_update(new, old)


class ResourceClaimStrategy(SpecStatusStrategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        d.default_resource_claim(obj)

    def validate(self, obj: dict):
        return v.validate_resource_claim(obj)

    def validate_update(self, new: dict, old: dict):
        return v.validate_resource_claim_update(new, old)

    def validate_status_update(self, new: dict, old: dict):
        return v.validate_resource_claim_status_update(new, old)


class ResourceClaimTemplateStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        d.default_resource_claim_template(obj)

    def validate(self, obj: dict):
        return v.validate_resource_claim_template(obj)

    def validate_update(self, new: dict, old: dict):
        return v.validate_resource_claim_template_update(new, old)


class ResourceSliceStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        d.default_resource_slice(obj, now)

    def validate(self, obj: dict):
        return v.validate_resource_slice(obj)

    def validate_update(self, new: dict, old: dict):
        return v.validate_resource_slice_update(new, old)


class DeviceTaintRuleStrategy(SpecStatusStrategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        d.default_device_taint_rule(obj, now)

    def validate(self, obj: dict):
        return v.validate_device_taint_rule(obj)

    def validate_update(self, new: dict, old: dict):
        return v.validate_device_taint_rule_update(new, old)

    def validate_status_update(self, new: dict, old: dict):
        return v.validate_device_taint_rule_status_update(new, old)


deviceclasses = REGISTRY.add(ResourceType(
    GROUP, "v1", "DeviceClass", "deviceclasses", namespaced=False, strategy=DeviceClassStrategy()))

resourceclaims = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceClaim", "resourceclaims", namespaced=True,
    subresources=(Subresource("status", "ResourceClaim"),), strategy=ResourceClaimStrategy()))

resourceclaimtemplates = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", namespaced=True,
    strategy=ResourceClaimTemplateStrategy()))

resourceslices = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceSlice", "resourceslices", namespaced=False, strategy=ResourceSliceStrategy(),
    selectable_fields={"spec.nodeName": lambda o: _spec(o, "nodeName"),
                       "spec.driver": lambda o: _spec(o, "driver")}))

devicetaintrules = REGISTRY.add(ResourceType(
    GROUP, "v1beta2", "DeviceTaintRule", "devicetaintrules", namespaced=False,
    subresources=(Subresource("status", "DeviceTaintRule"),), strategy=DeviceTaintRuleStrategy()))
