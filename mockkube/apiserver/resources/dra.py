"""resource.k8s.io: DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice (v1, and
v1beta2 and v1beta1 converted to and from the stored v1 by dra_conversion) and DeviceTaintRule
(v1beta2). Validation and defaulting live in dra_validation/dra_defaults; each strategy here
only names its functions."""

from __future__ import annotations

from typing import Callable

from mockkube.apiserver.resources import dra_conversion as conv
from mockkube.apiserver.resources import dra_defaults as d
from mockkube.apiserver.resources import dra_validation as v
from mockkube.apiserver.resources import feature_drops
from mockkube.apiserver.resources.strategies import ConvertingStrategy, SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

GROUP = "resource.k8s.io"


def _spec(o: dict, key: str) -> str:
    val = (o.get("spec") or {}).get(key)
    if val is None:
        return ""
    return str(val)


ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def _admin_access_paths(obj: dict, subresource: str, template: bool) -> list[str]:
    """Where ``obj`` asks for admin access: requests in the spec, results in the status."""
    if subresource == "status":
        results = (((obj.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        return [
            f"status.allocation.devices.results[{i}].adminAccess"
            for i, r in enumerate(results)
            if isinstance(r, dict) and r.get("adminAccess")
        ]
    spec = (obj.get("spec") or {}).get("spec") if template else obj.get("spec")
    requests = (((spec or {}).get("devices") or {}).get("requests")) or []
    prefix = "spec.spec" if template else "spec"
    return [
        f"{prefix}.devices.requests[{i}].exactly.adminAccess"
        for i, r in enumerate(requests)
        if isinstance(r, dict) and isinstance(r.get("exactly"), dict) and r["exactly"].get("adminAccess")
    ]


def admin_access_errors(obj: dict, namespace: dict | None, subresource: str, template: bool = False) -> list:
    """DRAAdminAccess (GA in v1.36): only namespaces labelled ``resource.kubernetes.io/admin-access:
    "true"`` may ask for admin access (upstream AuthorizedForAdmin, reported at the first request)."""
    paths = _admin_access_paths(obj, subresource, template)
    if not paths:
        return []
    labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
    if labels.get(ADMIN_LABEL) == "true":
        return []
    return [
        fe.forbidden(
            paths[0], f"admin access to devices requires the `{ADMIN_LABEL}: true` label on the containing namespace"
        )
    ]


class _Hooks:
    """Strategy hooks that call the given defaulting and validation functions."""

    def __init__(
        self,
        defaults: Callable,
        validate: Callable,
        validate_update: Callable,
        validate_status_update: Callable | None = None,
        generation: bool = True,
        admin_access: str = "",
        drop: Callable | None = None,
    ) -> None:
        self._defaults = defaults
        self._validate = validate
        self._validate_update = validate_update
        self._validate_status_update = validate_status_update
        self.tracks_generation = generation
        self._admin_access = admin_access  # "claim" or "template": check the namespace label
        self._drop = drop  # feature_drops: the fields of switched-off features

    def drop_disabled(self, new: dict, old: dict | None, gates, subresource: str) -> None:
        if self._drop is not None:
            self._drop(new, old, gates, subresource)

    def namespace_errors(self, obj: dict, namespace: dict | None, subresource: str) -> list:
        if not self._admin_access:
            return []
        return admin_access_errors(obj, namespace, subresource, self._admin_access == "template")

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


class _Converting(ConvertingStrategy):
    """A kind served at v1beta1 or v1beta2: defaulted, validated and stored as v1 (upstream
    validates the internal form, so errors name v1's field paths, ``exactly`` included)."""

    storage_api_version = conv.V1
    converter = conv.DRAConverter()
    # v1beta1's differences (the basic wrapper, exactly) are inside atomic lists (devices,
    # requests): managed fields read the same at every version
    same_field_paths = True

    def storage_default(self, obj: dict, now: str | None = None) -> None:
        self._defaults(obj, now)  # type: ignore[attr-defined]

    def default(self, obj: dict, now: str | None = None) -> None:
        self.default_through_storage(obj, now)


class _PlainAt(_Converting, _Plain):
    pass


class _WithStatusAt(_Converting, _WithStatus):
    pass


# upstream v1.36 serves these kinds at v1beta2 and v1beta1 too (both off by default there:
# beta versions need --runtime-config; see docs/compatibility.md)
OLDER_VERSIONS = ("v1beta2", "v1beta1")


def _older(rt: ResourceType, strategy: Callable[[], Strategy]) -> list[ResourceType]:
    """``rt`` (a v1 kind) declared at each older version, after v1 (components and reset find
    the storage version first for the shared storage key)."""
    out = []
    for version in OLDER_VERSIONS:
        out.append(
            REGISTRY.add(
                ResourceType(
                    rt.group,
                    version,
                    rt.kind,
                    rt.plural,
                    namespaced=rt.namespaced,
                    subresources=rt.subresources,
                    strategy=strategy(),
                    selectable_fields=rt.selectable_fields,
                )
            )
        )
    return out


deviceclasses = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "DeviceClass",
        "deviceclasses",
        namespaced=False,
        strategy=_Plain(
            d.default_device_class,
            v.validate_device_class,
            v.validate_device_class_update,
            drop=feature_drops.device_class,
        ),
    )
)
deviceclasses_older = _older(
    deviceclasses,
    lambda: _PlainAt(
        d.default_device_class,
        v.validate_device_class,
        v.validate_device_class_update,
        drop=feature_drops.device_class,
    ),
)

resourceclaims = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ResourceClaim",
        "resourceclaims",
        namespaced=True,
        subresources=(Subresource("status", "ResourceClaim"),),
        strategy=_WithStatus(
            d.default_resource_claim,
            v.validate_resource_claim,
            v.validate_resource_claim_update,
            v.validate_resource_claim_status_update,
            admin_access="claim",
            drop=feature_drops.claim,
        ),
    )
)
resourceclaims_older = _older(
    resourceclaims,
    lambda: _WithStatusAt(
        d.default_resource_claim,
        v.validate_resource_claim,
        v.validate_resource_claim_update,
        v.validate_resource_claim_status_update,
        admin_access="claim",
        drop=feature_drops.claim,
    ),
)

resourceclaimtemplates = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        namespaced=True,
        strategy=_Plain(
            d.default_resource_claim_template,
            v.validate_resource_claim_template,
            v.validate_resource_claim_template_update,
            generation=False,
            admin_access="template",
            drop=feature_drops.claim_template,
        ),
    )
)
resourceclaimtemplates_older = _older(
    resourceclaimtemplates,
    lambda: _PlainAt(
        d.default_resource_claim_template,
        v.validate_resource_claim_template,
        v.validate_resource_claim_template_update,
        generation=False,
        admin_access="template",
        drop=feature_drops.claim_template,
    ),
)

resourceslices = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ResourceSlice",
        "resourceslices",
        namespaced=False,
        strategy=_Plain(
            d.default_resource_slice,
            v.validate_resource_slice,
            v.validate_resource_slice_update,
            drop=feature_drops.resource_slice,
        ),
        selectable_fields={
            "spec.nodeName": lambda o: _spec(o, "nodeName"),
            "spec.driver": lambda o: _spec(o, "driver"),
        },
    )
)
resourceslices_older = _older(
    resourceslices,
    lambda: _PlainAt(
        d.default_resource_slice,
        v.validate_resource_slice,
        v.validate_resource_slice_update,
        drop=feature_drops.resource_slice,
    ),
)

devicetaintrules = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1beta2",
        "DeviceTaintRule",
        "devicetaintrules",
        namespaced=False,
        subresources=(Subresource("status", "DeviceTaintRule"),),
        strategy=_WithStatus(
            d.default_device_taint_rule,
            v.validate_device_taint_rule,
            v.validate_device_taint_rule_update,
            v.validate_device_taint_rule_status_update,
        ),
        feature_gate="DRADeviceTaintRules",  # and resource.k8s.io/v1beta2, off by default in v1.36
    )
)
