"""apiregistration.k8s.io/v1 APIServices: stored with validation; the server lists one
``Local`` APIService per served group-version, as kube-apiserver's autoregister
controller creates them on a fresh cluster."""

from __future__ import annotations

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource

# kube-apiserver's apiVersionPriorities (group -> group priority, version priority)
_GROUP_PRIORITY = {
    "": (18000, 1),
    "apiextensions.k8s.io": (16700, 15),
    "admissionregistration.k8s.io": (16700, 15),
    "apps": (17800, 15),
    "authentication.k8s.io": (17700, 15),
    "authorization.k8s.io": (17600, 15),
    "autoscaling": (17500, 15),
    "batch": (17400, 15),
    "certificates.k8s.io": (17300, 15),
    "networking.k8s.io": (17200, 15),
    "policy": (17100, 15),
    "rbac.authorization.k8s.io": (17000, 15),
    "storage.k8s.io": (16800, 15),
    "coordination.k8s.io": (16500, 15),
    "node.k8s.io": (16300, 15),
    "discovery.k8s.io": (16200, 15),
    "flowcontrol.apiserver.k8s.io": (16100, 15),
    "scheduling.k8s.io": (16600, 15),
    "events.k8s.io": (17750, 15),
    "resource.k8s.io": (15900, 15),
    "apiregistration.k8s.io": (18000, 15),
}


def local_apiservices(group_versions: list[tuple[str, str]]) -> list[dict]:
    """The Local APIServices a fresh cluster lists for the served group-versions."""
    out = []
    for group, version in group_versions:
        gp, vp = _GROUP_PRIORITY.get(group, (15000, 15))
        if group == "resource.k8s.io" and version != "v1":
            vp = 9
        if group == "autoscaling" and version == "v2":
            vp = 30  # upstream's {autoscaling, v2}: {17500, 30}, above v1's 15
        out.append(
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {
                    "name": f"{version}.{group}" if group else version,
                    "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                },
                "spec": {"group": group, "version": version, "groupPriorityMinimum": gp, "versionPriority": vp},
            }
        )
    return out


class APIServiceStrategy(SpecStatusStrategy):
    tracks_generation = False
    reset_status_on_create = False

    def validate(self, obj: dict) -> list[fe.FieldError]:
        spec = obj.get("spec") or {}
        name = obj.get("metadata", {}).get("name", "")
        errs: list[fe.FieldError] = []
        version, group = spec.get("version", ""), spec.get("group", "")
        want = f"{version}.{group}" if group else version
        if name != want:
            errs.append(fe.invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: "{want}"'))
        if not version:
            errs.append(fe.required("spec.version", ""))
        if not 0 < int(spec.get("groupPriorityMinimum") or 0) <= 20000:
            errs.append(
                fe.invalid(
                    "spec.groupPriorityMinimum",
                    spec.get("groupPriorityMinimum", 0),
                    "must be positive and less than 20000",
                )
            )
        if not 0 < int(spec.get("versionPriority") or 0) <= 1000:
            errs.append(
                fe.invalid(
                    "spec.versionPriority", spec.get("versionPriority", 0), "must be positive and less than 1000"
                )
            )
        if spec.get("service") is None:
            if spec.get("caBundle"):
                errs.append(fe.invalid("spec.caBundle", "", "local APIServices may not have a caBundle"))
        elif not spec.get("insecureSkipTLSVerify") and not spec.get("caBundle"):
            errs.append(fe.required("spec.caBundle", "must be specified when insecureSkipTLSVerify is false"))
        return errs


apiservices = REGISTRY.add(
    ResourceType(
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "apiservices",
        namespaced=False,
        categories=("api-extensions",),
        subresources=(Subresource("status", "APIService"),),
        strategy=APIServiceStrategy(),
    )
)
