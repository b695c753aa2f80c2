"""resource.k8s.io: DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice (v1)
and DeviceTaintRule (v1beta2). Validation and defaulting live in dra_validation/dra_defaults;
each strategy here only names its functions."""

from __future__ import annotations

from typing import Callable

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


class _Hooks:
    """Strategy hooks that call the given defaulting and validation functions."""

    def __init__(self, defaults: Callable, validate: Callable, validate_update: Callable,
                 validate_status_update: Callable | None = None, generation: bool = True) -> None:
        self._defaults = defaults
        self._validate = validate
        self._validate_update = validate_update
        self._validate_status_update = validate_status_update
        self.tracks_generation = generation

    def default(self, obj: dict, now: str | None = None) -> None:
        self._defaults(obj, now)

    def validate(self, obj: dict):
        return self._validate(obj)

    def validate_update(self, new: dict, old: dict):
        return self._validate_update(new, old)

    def validate_status_update(self, new: dict, old: dict):
        return self._validate_status_update(new, old) if self._validate_status_update else []


class _Plain(_Hooks, Strategy):
    pass


class _WithStatus(_Hooks, SpecStatusStrategy):
    pass


deviceclasses = REGISTRY.add(ResourceType(
    GROUP, "v1", "DeviceClass", "deviceclasses", namespaced=False,
    strategy=_Plain(d.default_device_class, v.validate_device_class, v.validate_device_class_update)))

resourceclaims = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceClaim", "resourceclaims", namespaced=True,
    subresources=(Subresource("status", "ResourceClaim"),),
    strategy=_WithStatus(d.default_resource_claim, v.validate_resource_claim,
                       v.validate_resource_claim_update, v.validate_resource_claim_status_update)))

resourceclaimtemplates = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", namespaced=True,
    strategy=_Plain(d.default_resource_claim_template, v.validate_resource_claim_template,
                       v.validate_resource_claim_template_update, generation=False)))

resourceslices = REGISTRY.add(ResourceType(
    GROUP, "v1", "ResourceSlice", "resourceslices", namespaced=False,
    strategy=_Plain(d.default_resource_slice, v.validate_resource_slice,
                       v.validate_resource_slice_update),
    selectable_fields={"spec.nodeName": lambda o: _spec(o, "nodeName"),
                       "spec.driver": lambda o: _spec(o, "driver")}))

devicetaintrules = REGISTRY.add(ResourceType(
    GROUP, "v1beta2", "DeviceTaintRule", "devicetaintrules", namespaced=False,
    subresources=(Subresource("status", "DeviceTaintRule"),),
    strategy=_WithStatus(d.default_device_taint_rule, v.validate_device_taint_rule,
                       v.validate_device_taint_rule_update, v.validate_device_taint_rule_status_update)))
