"""networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies: stored with
validation (no controller acts on them), as on a cluster without an ingress controller or
network plugin enforcing policies. ServiceCIDRs (the default ``kubernetes`` one is created at
start) and IPAddresses: the Services' ClusterIPs are allocated from the ServiceCIDRs with an
IPAddress per allocated IP (``mockkube/rules/ipallocator.py``)."""

from __future__ import annotations

import ipaddress

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
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


# -- ServiceCIDRs and IPAddresses (pkg/apis/networking/validation) -------------------------

_CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_IMMUTABLE = "field is immutable"


def _cidr_errors(value: str, path: str) -> list[fe.FieldError]:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [fe.invalid(path, value, _CIDR_MSG)]
    return []


def _is_v6(value: str) -> bool:
    try:
        return ipaddress.ip_network(value, strict=False).version == 6
    except ValueError:
        return False


def validate_service_cidr(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    cidrs = spec.get("cidrs") or []
    if not cidrs:
        return [fe.required("spec.cidrs", "at least one CIDR required")]
    if len(cidrs) > 2:
        return [fe.invalid("spec.cidrs", spec, "may only hold up to 2 values")]
    errs: list[fe.FieldError] = []
    for i, c in enumerate(cidrs):
        errs += _cidr_errors(c, f"spec.cidrs[{i}]")
    if len(cidrs) == 2 and _is_v6(cidrs[0]) == _is_v6(cidrs[1]):
        errs.append(
            fe.invalid(
                "spec.cidrs",
                cidrs,
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            )
        )
    return errs


class ServiceCIDRStrategy(SpecStatusStrategy):
    def initial_status(self, obj: dict) -> dict:
        return {}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_service_cidr(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        o, n = (old.get("spec") or {}).get("cidrs") or [], (new.get("spec") or {}).get("cidrs") or []
        if len(o) == len(n):
            return [fe.invalid(f"spec.cidrs[{i}]", n[i], _IMMUTABLE) for i in range(len(o)) if o[i] != n[i]]
        if len(o) == 1 and len(n) == 2:  # a second family may be added (issues.k8s.io/131261)
            errs = [fe.invalid("spec.cidrs[0]", n[0], _IMMUTABLE)] if n[0] != o[0] else []
            return errs + _cidr_errors(n[1], "spec.cidrs[1]")
        return [fe.invalid("spec.cidrs", n, _IMMUTABLE)]

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs: list[fe.FieldError] = []
        for i, c in enumerate((new.get("status") or {}).get("conditions") or []):
            p = f"status.conditions[{i}]"
            if not c.get("type"):
                errs.append(fe.required(f"{p}.type", ""))
            if c.get("status") not in ("True", "False", "Unknown"):
                errs.append(fe.not_supported(f"{p}.status", c.get("status", ""), ["False", "True", "Unknown"]))
            if not c.get("lastTransitionTime"):
                errs.append(fe.required(f"{p}.lastTransitionTime", "must be set"))
        return errs


def ip_address_name(name: str, prefix: bool = False) -> list[str]:
    """ValidateIPAddressName: the canonical text of an IP address (no generated names)."""
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return [f'ParseAddr("{name}"): unable to parse IP']
    return [] if str(ip) == name else ["must be a canonical format IP address"]


def _path_segment(value: str, path: str) -> list[fe.FieldError]:
    return [fe.invalid(path, value, m) for m in names.name_is_path_segment(value)]


def validate_ip_address(obj: dict) -> list[fe.FieldError]:
    ref = (obj.get("spec") or {}).get("parentRef")
    if ref is None:
        return [fe.required("spec.parentRef", "")]
    p = "spec.parentRef"
    errs: list[fe.FieldError] = []
    if ref.get("group"):
        errs += [fe.invalid(f"{p}.group", ref["group"], m) for m in names.dns1123_subdomain(ref["group"])]
    for k in ("resource", "name"):
        errs += [fe.required(f"{p}.{k}", "")] if not ref.get(k) else _path_segment(ref[k], f"{p}.{k}")
    if ref.get("namespace"):
        errs += _path_segment(ref["namespace"], f"{p}.namespace")
    return errs


class IPAddressStrategy(Strategy):
    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_ip_address(obj)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        ref = (new.get("spec") or {}).get("parentRef")
        if ref != (old.get("spec") or {}).get("parentRef"):
            return [fe.invalid("spec.parentRef", ref, _IMMUTABLE)]
        return []


servicecidrs = REGISTRY.add(
    ResourceType(
        "networking.k8s.io",
        "v1",
        "ServiceCIDR",
        "servicecidrs",
        namespaced=False,
        subresources=(Subresource("status", "ServiceCIDR"),),
        strategy=ServiceCIDRStrategy(),
    )
)
ipaddresses = REGISTRY.add(
    ResourceType(
        "networking.k8s.io",
        "v1",
        "IPAddress",
        "ipaddresses",
        namespaced=False,
        short_names=("ip",),
        strategy=IPAddressStrategy(),
        name_validator=ip_address_name,
    )
)
