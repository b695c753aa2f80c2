"""core/v1 kinds around pods: PersistentVolumeClaims and PersistentVolumes (the storage
controller binds and provisions them), Endpoints (kept by the endpoints controller),
LimitRanges (applied by the LimitRanger admission step on pods) and PodTemplates."""

from __future__ import annotations

from mockkube.apiserver.resources import pod_defaults
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.quantity import parse_quantity
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_VOLUME_MODES = ["Block", "Filesystem"]
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


def _access_mode_errors(spec: dict, path: str) -> list[fe.FieldError]:
    modes = spec.get("accessModes") or []
    if not modes:
        return [fe.required(f"{path}.accessModes", "at least 1 access mode is required")]
    errs = [fe.not_supported(f"{path}.accessModes", m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(fe.forbidden(f"{path}.accessModes", "may not use ReadWriteOncePod with other access modes"))
    return errs


def _storage_errors(res_list: dict | None, path: str, what: str) -> list[fe.FieldError]:
    value = (res_list or {}).get("storage")
    if value is None:
        return [fe.required(f"{path}[storage]", "")]
    try:
        q = parse_quantity(value)
    except Exception:
        return [fe.invalid(f"{path}[storage]", value, "must be a valid quantity")]
    if q.sign() <= 0:
        return [fe.invalid(f"{path}[storage]", value, f"must be greater than zero")]
    return []


def validate_pvc(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs = _access_mode_errors(spec, "spec")
    errs += _storage_errors((spec.get("resources") or {}).get("requests"), "spec.resources", "request")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(fe.not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return errs


class PVCStrategy(SpecStatusStrategy):
    tracks_generation = False

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")

    def admit(self, obj: dict, old: dict | None, res) -> None:
        if old is not None:
            return
        # StorageObjectInUseProtection and DefaultStorageClass admission
        fins = obj["metadata"].setdefault("finalizers", [])
        if PVC_PROTECTION not in fins:
            fins.append(PVC_PROTECTION)
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("storageClassName") is None:
            default = default_storage_class(res)
            if default:
                spec["storageClassName"] = default

    def initial_status(self, obj: dict) -> dict:
        return {"phase": "Pending"}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_pvc(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = validate_pvc(new)
        ns, os_ = dict(new.get("spec") or {}), dict(old.get("spec") or {})
        # a bound claim may grow; the binder fills volumeName and a class may be set once
        for k in ("resources", "volumeAttributesClassName"):
            ns.pop(k, None)
            os_.pop(k, None)
        if not os_.get("volumeName"):
            ns.pop("volumeName", None)
            os_.pop("volumeName", None)
        if os_.get("storageClassName") is None:
            ns.pop("storageClassName", None)
            os_.pop("storageClassName", None)
        if ns != os_:
            errs.append(
                fe.forbidden(
                    "spec",
                    "spec is immutable after creation except resources.requests and "
                    "volumeAttributesClassName for bound claims",
                )
            )
        return errs


def default_storage_class(res) -> str:
    """The newest StorageClass annotated as default (DefaultStorageClass admission)."""
    rt = res.registry.get("storage.k8s.io", "v1", "storageclasses")
    best = None
    for e in res.list(rt, None).entries:
        sc = e.obj
        if (sc["metadata"].get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true":
            key = (sc["metadata"].get("creationTimestamp", ""), sc["metadata"]["name"])
            if best is None or key > best:
                best = key
    return best[1] if best else ""


def validate_pv(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs = _access_mode_errors(spec, "spec")
    errs += _storage_errors(spec.get("capacity"), "spec.capacity", "capacity")
    sources = [
        k
        for k in (
            "hostPath",
            "local",
            "csi",
            "nfs",
            "iscsi",
            "fc",
            "awsElasticBlockStore",
            "gcePersistentDisk",
            "azureDisk",
            "azureFile",
            "cephfs",
            "rbd",
            "cinder",
            "flexVolume",
            "glusterfs",
            "portworxVolume",
            "quobyte",
            "scaleIO",
            "storageos",
            "vsphereVolume",
            "photonPersistentDisk",
            "flocker",
        )
        if spec.get(k) is not None
    ]
    if not sources:
        errs.append(fe.required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        errs.append(fe.forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy not in ("Delete", "Recycle", "Retain"):
        errs.append(fe.not_supported("spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"]))
    return errs


class PVStrategy(SpecStatusStrategy):
    tracks_generation = False

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
            spec.setdefault("volumeMode", "Filesystem")

    def admit(self, obj: dict, old: dict | None, res) -> None:
        if old is None:
            fins = obj["metadata"].setdefault("finalizers", [])
            if PV_PROTECTION not in fins:
                fins.append(PV_PROTECTION)

    def initial_status(self, obj: dict) -> dict:
        return {"phase": "Pending"}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_pv(obj)


class EndpointsStrategy(Strategy):
    pass


class LimitRangeStrategy(Strategy):
    def validate(self, obj: dict) -> list[fe.FieldError]:
        errs = []
        for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
            t = item.get("type")
            if t not in ("Container", "Pod", "PersistentVolumeClaim"):
                errs.append(
                    fe.not_supported(f"spec.limits[{i}].type", t, ["Container", "PersistentVolumeClaim", "Pod"])
                )
            for k, v in (item.get("default") or {}).items():
                mx = (item.get("max") or {}).get(k)
                try:
                    if mx is not None and parse_quantity(v) > parse_quantity(mx):
                        errs.append(
                            fe.invalid(
                                f"spec.limits[{i}].default[{k}]", v, f"default value {v} is greater than max value {mx}"
                            )
                        )
                except Exception:
                    errs.append(fe.invalid(f"spec.limits[{i}].default[{k}]", v, "must be a valid quantity"))
        return errs


class PodTemplateStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        tpl = obj.get("template")
        if isinstance(tpl, dict):
            pod_defaults.default_pod_spec(tpl.get("spec"))


def _get(obj: dict, *path: str) -> str:
    cur = obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


persistentvolumeclaims = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        namespaced=True,
        short_names=("pvc",),
        subresources=(Subresource("status", "PersistentVolumeClaim"),),
        strategy=PVCStrategy(),
    )
)

persistentvolumes = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        namespaced=False,
        short_names=("pv",),
        subresources=(Subresource("status", "PersistentVolume"),),
        strategy=PVStrategy(),
    )
)

endpoints = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Endpoints",
        "endpoints",
        namespaced=True,
        singular="endpoints",
        short_names=("ep",),
        strategy=EndpointsStrategy(),
    )
)

limitranges = REGISTRY.add(
    ResourceType(
        "", "v1", "LimitRange", "limitranges", namespaced=True, short_names=("limits",), strategy=LimitRangeStrategy()
    )
)

podtemplates = REGISTRY.add(
    ResourceType("", "v1", "PodTemplate", "podtemplates", namespaced=True, strategy=PodTemplateStrategy())
)
