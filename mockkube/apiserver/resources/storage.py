"""storage.k8s.io/v1: StorageClasses (read by the simulated provisioner), CSIDrivers,
CSINodes and VolumeAttachments (stored with validation)."""

from __future__ import annotations

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
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
