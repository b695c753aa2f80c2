"""storage.k8s.io/v1: StorageClasses (read by the simulated provisioner), CSIDrivers,
CSINodes and VolumeAttachments, CSIStorageCapacities and VolumeAttributesClasses (stored with
validation)."""

from __future__ import annotations

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

_BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
_RECLAIM = ["Delete", "Retain"]


class StorageClassStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: dict) -> list[fe.FieldError]:
        errs = []
        if not obj.get("provisioner"):
            errs.append(fe.required("provisioner", ""))
        if obj.get("reclaimPolicy") not in _RECLAIM:
            errs.append(fe.not_supported("reclaimPolicy", obj.get("reclaimPolicy"), _RECLAIM))
        if obj.get("volumeBindingMode") not in _BINDING_MODES:
            errs.append(fe.not_supported("volumeBindingMode", obj.get("volumeBindingMode"), _BINDING_MODES))
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = self.validate(new)
        for k in ("parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"):
            if new.get(k) != old.get(k):
                detail = (
                    "updates to parameters are forbidden."
                    if k == "parameters"
                    else "updates to provisioner are forbidden."
                    if k == "provisioner"
                    else "field is immutable"
                )
                errs.append(
                    fe.forbidden(k, detail) if k in ("parameters", "provisioner") else fe.invalid(k, new.get(k), detail)
                )
        return errs


class CSIDriverStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("attachRequired", True)
            spec.setdefault("podInfoOnMount", False)
            spec.setdefault("storageCapacity", False)
            spec.setdefault("requiresRepublish", False)
            spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
            spec.setdefault("volumeLifecycleModes", ["Persistent"])
            spec.setdefault("seLinuxMount", False)


class VolumeAttachmentStrategy(SpecStatusStrategy):
    tracks_generation = False

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        errs = []
        if not spec.get("attacher"):
            errs.append(fe.required("spec.attacher", ""))
        if not spec.get("nodeName"):
            errs.append(fe.required("spec.nodeName", ""))
        src = spec.get("source") or {}
        if bool(src.get("persistentVolumeName")) == bool(src.get("inlineVolumeSpec")):
            errs.append(
                fe.required("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName")
            )
        return errs


MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * (1 << 10)


def validate_provisioner(value: str, path: str) -> list[fe.FieldError]:
    """validateProvisioner: a qualified name (checked lower-cased)."""
    if not value:
        return [fe.required(path, "")]
    return [fe.invalid(path, value.lower(), m) for m in names.qualified_name(value.lower())]


def validate_parameters(params: dict | None, allow_empty: bool, path: str) -> list[fe.FieldError]:
    params = params or {}
    if len(params) > MAX_PARAMETERS:
        return [fe.too_long(path, "", MAX_PARAMETERS)]
    errs = [fe.invalid(path, k, "field can not be empty.") for k in params if not k]
    if sum(len(k) + len(str(v)) for k, v in params.items()) > MAX_PARAMETERS_SIZE:
        errs.append(fe.too_long(path, "", MAX_PARAMETERS_SIZE))
    if not allow_empty and not params:
        errs.append(fe.required(path, "must contain at least one key/value pair"))
    return errs


class VolumeAttributesClassStrategy(Strategy):
    """ValidateVolumeAttributesClass(Update): driverName and parameters are immutable."""

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_provisioner(obj.get("driverName") or "", "driverName") + validate_parameters(
            obj.get("parameters"), False, "parameters"
        )

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = []
        if new.get("driverName") != old.get("driverName"):
            errs.append(fe.forbidden("driverName", "updates to driverName are forbidden."))
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            errs.append(fe.forbidden("parameters", "updates to parameters are forbidden."))
        return errs + self.validate(new)


class CSIStorageCapacityStrategy(Strategy):
    """ValidateCSIStorageCapacity(Update): the GetCapacity inputs (nodeTopology,
    storageClassName) are immutable."""

    def validate(self, obj: dict) -> list[fe.FieldError]:
        from mockkube.machinery.quantity import parse_quantity
        from mockkube.machinery.selectors import label_selector_from_object

        errs: list[fe.FieldError] = []
        topo = obj.get("nodeTopology")
        if topo is not None:
            try:
                label_selector_from_object(topo)
            except Exception as e:  # a SelectorError carrying upstream's message
                errs.append(fe.invalid("nodeTopology", topo, getattr(e, "message", str(e))))
        sc = obj.get("storageClassName") or ""
        errs += [fe.invalid("storageClassName", sc, m) for m in names.name_is_dns_subdomain(sc)]
        cap = obj.get("capacity")
        if cap is not None:
            try:
                if parse_quantity(cap).sign() < 0:
                    errs.append(fe.invalid("capacity", cap, "must be greater than or equal to 0"))
            except ValueError:
                pass
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = []
        if new.get("nodeTopology") != old.get("nodeTopology"):
            errs.append(fe.invalid("nodeTopology", new.get("nodeTopology"), "field is immutable"))
        if new.get("storageClassName") != old.get("storageClassName"):
            errs.append(fe.invalid("storageClassName", new.get("storageClassName"), "field is immutable"))
        return errs


storageclasses = REGISTRY.add(
    ResourceType(
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        namespaced=False,
        short_names=("sc",),
        strategy=StorageClassStrategy(),
    )
)
csidrivers = REGISTRY.add(
    ResourceType("storage.k8s.io", "v1", "CSIDriver", "csidrivers", namespaced=False, strategy=CSIDriverStrategy())
)
csinodes = REGISTRY.add(ResourceType("storage.k8s.io", "v1", "CSINode", "csinodes", namespaced=False))
volumeattachments = REGISTRY.add(
    ResourceType(
        "storage.k8s.io",
        "v1",
        "VolumeAttachment",
        "volumeattachments",
        namespaced=False,
        subresources=(Subresource("status", "VolumeAttachment"),),
        strategy=VolumeAttachmentStrategy(),
    )
)
csistoragecapacities = REGISTRY.add(
    ResourceType(
        "storage.k8s.io",
        "v1",
        "CSIStorageCapacity",
        "csistoragecapacities",
        namespaced=True,
        strategy=CSIStorageCapacityStrategy(),
    )
)
volumeattributesclasses = REGISTRY.add(
    ResourceType(
        "storage.k8s.io",
        "v1",
        "VolumeAttributesClass",
        "volumeattributesclasses",
        namespaced=False,
        short_names=("vac",),
        strategy=VolumeAttributesClassStrategy(),
    )
)
