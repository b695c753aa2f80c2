"""Discovery documents: /version, legacy /api, /apis, per-group and per-version lists, and
aggregated discovery v2 (only with its exact Content-Type; see the client contract §1)."""

from __future__ import annotations

import json
import platform

from mockkube.machinery.registry import Registry, ResourceType
from mockkube.machinery.version import KUBE_VERSION, MOCKKUBE_VERSION

AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


# preferred version first; resource.k8s.io serves v1 (and v1beta2 for DeviceTaintRule)
_VERSION_ORDER = {"resource.k8s.io": ["v1", "v1beta2", "v1beta1", "v1alpha3"], "autoscaling": ["v2", "v1"]}


def version_info() -> dict:
    return {
        "major": "1",
        "minor": "36",
        "emulationMajor": "1",
        "emulationMinor": "36",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "35",
        "gitVersion": f"{KUBE_VERSION}-mockkube.{MOCKKUBE_VERSION}",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z",
        "goVersion": f"python{platform.python_version()}",
        "compiler": "mockkube",
        "platform": "linux/amd64",
    }


def wants_aggregated(accept: str | None) -> bool:
    if not accept:
        return False
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if (
            params.get("as") == "APIGroupDiscoveryList"
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") == "v2"
        ):
            return True
    return False


def _verbs(rt: ResourceType) -> list[str]:
    return sorted(rt.verbs)


def _sub_name(rt: ResourceType, sub) -> str:
    return f"{rt.plural}/{sub.name}"


def resource_list(reg: Registry, group: str, version: str) -> dict:
    """The legacy APIResourceList of one group-version (helm and kstatus read these)."""
    gv = f"{group}/{version}" if group else version
    out = []
    for rt in reg.in_group_version(group, version):
        entry = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": _verbs(rt),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        if _stored(rt):  # only a storage that has a storage version (StorageVersionProvider) gives one
            entry["storageVersionHash"] = _hash(rt)
        out.append(entry)
        for sub in rt.subresources:
            se = {
                "name": _sub_name(rt, sub),
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": sub.kind,
                "verbs": sorted(sub.verbs),
            }
            if sub.group:
                se["group"] = sub.group
                se["version"] = sub.version
            out.append(se)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


def _stored(rt: ResourceType) -> bool:
    return not getattr(rt.strategy, "virtual", False)  # reviews, bindings, componentstatuses


def _hash(rt: ResourceType) -> str:
    import base64
    import hashlib

    # a built-in resource served at several versions has one hash, its storage version's
    stored = (getattr(rt.strategy, "storage_api_version", "") if rt.schema is None else "") or rt.api_version
    group, _, version = stored.rpartition("/")
    h = hashlib.sha256(f"{group}/{version}/{rt.kind}".encode()).digest()
    return base64.b64encode(h[:8]).decode()


def _groups(reg: Registry) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for g, v in reg.group_versions():
        groups.setdefault(g, [])
        if v not in groups[g]:
            groups[g].append(v)
    for g, order in _VERSION_ORDER.items():
        if g in groups:
            groups[g].sort(key=lambda v: order.index(v) if v in order else 99)
    custom: dict[str, dict[str, int]] = {}
    for rt in reg.all():
        if rt.schema is not None:  # a custom resource: kube-aware version order, as upstream sorts CRD versions
            custom.setdefault(rt.group, {})[rt.version] = rt.version_priority
    for g, prio in custom.items():
        if g in groups:
            groups[g].sort(key=lambda v: prio.get(v, 99))
    return groups


def api_versions() -> dict:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def api_group(reg: Registry, group: str) -> dict | None:
    versions = _groups(reg).get(group)
    if not versions or not group:
        return None
    vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs, "preferredVersion": vs[0]}


def api_group_list(reg: Registry) -> dict:
    groups = [api_group(reg, g) for g in _groups(reg) if g]
    for g in groups:
        g.pop("kind")
        g.pop("apiVersion")
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def root_paths(reg: Registry, served: list[str]) -> dict:
    """``GET /`` (and ``/index.html``): genericapiserver's ``routes.Index``, the sorted union of
    the listed paths: every API root, group and group-version (``/apis/`` as the aggregator
    lists it), ``/openapi/v3/`` (a prefix handler) and the other plain paths in ``served``."""
    paths = {"/api", "/api/v1", "/apis", "/apis/", "/openapi/v3/"}
    for g, versions in _groups(reg).items():
        if g:
            paths.add(f"/apis/{g}")
            paths.update(f"/apis/{g}/{v}" for v in versions)
    paths.update(served)
    return {"paths": sorted(paths)}


def _agg_resource(rt: ResourceType) -> dict:
    r = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": _verbs(rt),
    }
    if rt.short_names:
        r["shortNames"] = list(rt.short_names)
    if rt.categories:
        r["categories"] = list(rt.categories)
    subs = []
    for sub in rt.subresources:
        subs.append(
            {
                "subresource": sub.name,
                "responseKind": {
                    "group": sub.group or rt.group,
                    "version": sub.version or rt.version,
                    "kind": sub.kind,
                },
                "verbs": sorted(sub.verbs),
            }
        )
    if subs:
        r["subresources"] = subs
    return r


def aggregated(reg: Registry, core: bool) -> dict:
    """APIGroupDiscoveryList for /api (core) or /apis (named groups)."""
    items = []
    for g, versions in _groups(reg).items():
        if (g == "") != core:
            continue
        vs = []
        for v in versions:
            vs.append(
                {
                    "version": v,
                    "freshness": "Current",
                    "resources": [_agg_resource(rt) for rt in reg.in_group_version(g, v)],
                }
            )
        items.append({"metadata": {"name": g, "creationTimestamp": None}, "versions": vs})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def dumps(doc: dict) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()
