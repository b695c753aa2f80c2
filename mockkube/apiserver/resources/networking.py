"""networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies: stored with
validation (no controller acts on them), as on a cluster without an ingress controller or
network plugin enforcing policies."""

from __future__ import annotations

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource

_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_POLICY_TYPES = ["Egress", "Ingress"]


def _backend_errors(b: dict, path: str) -> list[fe.FieldError]:
    svc, res = b.get("service"), b.get("resource")
    if svc and res:
        return [fe.invalid(path, b, "cannot set both service and resource backends")]
    if not svc and not res:
        return [fe.invalid(path, b, "resource or service backend is required")]
    if svc:
        port = svc.get("port") or {}
        if port.get("name") and port.get("number"):
            return [fe.invalid(f"{path}.service.port", port, "cannot set both port name & port number")]
        if not port.get("name") and not port.get("number"):
            return [fe.required(f"{path}.service.port", "port name or number is required")]
    return []


def validate_ingress(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs: list[fe.FieldError] = []
    if not spec.get("defaultBackend") and not spec.get("rules"):
        errs.append(fe.invalid("spec", spec, "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend"):
        errs += _backend_errors(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(spec.get("rules") or []):
        http = (rule or {}).get("http")
        if http is None:
            continue
        for j, p in enumerate(http.get("paths") or []):
            pp = f"spec.rules[{i}].http.paths[{j}]"
            pt = p.get("pathType")
            if pt is None:
                errs.append(fe.required(f"{pp}.pathType", "pathType must be specified"))
            elif pt not in _PATH_TYPES:
                errs.append(fe.not_supported(f"{pp}.pathType", pt, _PATH_TYPES))
            elif pt in ("Exact", "Prefix") and not str(p.get("path", "")).startswith("/"):
                errs.append(fe.invalid(f"{pp}.path", p.get("path", ""), "must be an absolute path"))
            errs += _backend_errors(p.get("backend") or {}, f"{pp}.backend")
    return errs


class IngressStrategy(SpecStatusStrategy):
    def initial_status(self, obj: dict) -> dict:
        return {"loadBalancer": {}}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_ingress(obj)


class IngressClassStrategy(Strategy):
    tracks_generation = True

    def validate(self, obj: dict) -> list[fe.FieldError]:
        ctrl = (obj.get("spec") or {}).get("controller")
        return [fe.required("spec.controller", "")] if not ctrl else []

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = self.validate(new)
        if (new.get("spec") or {}).get("controller") != (old.get("spec") or {}).get("controller"):
            errs.append(fe.invalid("spec.controller", (new.get("spec") or {}).get("controller"), "field is immutable"))
        return errs


class NetworkPolicyStrategy(Strategy):
    tracks_generation = True

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if not spec.get("policyTypes"):
            types = ["Ingress"] + (["Egress"] if spec.get("egress") else [])
            spec["policyTypes"] = types
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for rule in spec.get(direction) or []:
                for p in (rule or {}).get("ports") or []:
                    if isinstance(p, dict):
                        p.setdefault("protocol", "TCP")

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        errs = [
            fe.not_supported(f"spec.policyTypes[{i}]", t, _POLICY_TYPES)
            for i, t in enumerate(spec.get("policyTypes") or [])
            if t not in _POLICY_TYPES
        ]
        if spec.get("podSelector") is None:
            errs.append(fe.required("spec.podSelector", ""))
        return errs


ingresses = REGISTRY.add(
    ResourceType(
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        namespaced=True,
        short_names=("ing",),
        subresources=(Subresource("status", "Ingress"),),
        strategy=IngressStrategy(),
    )
)
ingressclasses = REGISTRY.add(
    ResourceType(
        "networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False, strategy=IngressClassStrategy()
    )
)
networkpolicies = REGISTRY.add(
    ResourceType(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        namespaced=True,
        short_names=("netpol",),
        strategy=NetworkPolicyStrategy(),
    )
)
