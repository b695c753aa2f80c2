"""resource.k8s.io conversion between v1 (the storage version) and v1beta1/v1beta2, on the
JSON form, as upstream's ``pkg/apis/resource/v1beta1/conversion.go`` and the generated
conversions do it through the internal types.

v1beta2 has v1's shape for every kind. v1beta1 differs in two places:

* a ResourceSlice device keeps its fields in a ``basic`` object (``devices[].basic.attributes``
  where v1 has ``devices[].attributes``); v1 to v1beta1 always writes ``basic``, even empty;
  the pool's ``spec.nodeName``/``spec.allNodes`` are plain values there (empty and false are
  unset), pointers in v1;
* a claim's request holds ``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
  ``adminAccess``, ``tolerations`` and ``capacity`` itself, where v1 wraps them in
  ``exactly``; a v1beta1 request with any of them set gets an ``exactly`` (whether or not it
  also has ``firstAvailable``: validation reports that), and v1beta1 always carries
  ``deviceClassName`` (no omitempty upstream), empty for a ``firstAvailable`` request.

Pure: dicts in, new dicts out (the input is never changed).
"""

from __future__ import annotations

from typing import Any

from mockkube.machinery.meta import clone

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
VERSIONS = (V1, V1BETA2, V1BETA1)

# v1beta1 BasicDevice's fields, in upstream's field order (v1's Device has them flat after name)
BASIC_FIELDS = (
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
    "nodeAllocatableResourceMappings",
)
# v1 ExactDeviceRequest's fields, in upstream's order; v1beta1 has them on the request itself
EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")
# v1beta1 DeviceRequest's field order
_V1BETA1_REQUEST_ORDER = (
    "name",
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "firstAvailable",
    "tolerations",
    "capacity",
)


def _kept(key: str, value: Any) -> bool:
    """Whether a request field survives Go's encoding (allocationMode and count are omitempty
    plain values; the rest are pointers or lists, kept unless null)."""
    if value is None:
        return False
    return not (key in ("allocationMode", "count") and value in ("", 0))


# -- ResourceSlice -------------------------------------------------------------------------


def _device_to_v1(d: Any) -> Any:
    if not isinstance(d, dict):
        return d
    out: dict = {}
    if "name" in d:
        out["name"] = d["name"]
    basic = d.get("basic")
    if isinstance(basic, dict):
        for k in BASIC_FIELDS:
            if k in basic and not (k in ("attributes", "capacity") and not basic[k]):
                out[k] = basic[k]
        for k, v in basic.items():  # anything newer than this table: carried over as is
            if k not in BASIC_FIELDS and k not in out:
                out[k] = v
    return out


def _device_from_v1(d: Any) -> Any:
    if not isinstance(d, dict):
        return d
    out: dict = {}
    if "name" in d:
        out["name"] = d["name"]
    basic: dict = {}
    for k in BASIC_FIELDS:
        if k in d and not (k in ("attributes", "capacity") and not d[k]):
            basic[k] = d[k]
    for k, v in d.items():
        if k != "name" and k not in BASIC_FIELDS:
            basic[k] = v
    out["basic"] = basic
    return out


def _slice_spec(spec: Any, device_fn: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    # v1beta1's pool-level nodeName/allNodes are plain values: "" and false are unset
    if out.get("nodeName") == "":
        out.pop("nodeName")
    if out.get("allNodes") is False:
        out.pop("allNodes")
    devices = out.get("devices")
    if isinstance(devices, list):
        out["devices"] = [device_fn(d) for d in devices]
    return out


def slice_to_v1(obj: dict) -> dict:
    out = clone(obj)
    out["spec"] = _slice_spec(out.get("spec"), _device_to_v1)
    return out


def slice_from_v1(obj: dict) -> dict:
    out = clone(obj)
    out["spec"] = _slice_spec(out.get("spec"), _device_from_v1)
    return out


# -- ResourceClaim / ResourceClaimTemplate ---------------------------------------------------


def _has_exact_fields(r: dict) -> bool:
    """Upstream's hasAnyMainRequestFieldsSet on the decoded v1beta1 request."""
    return (
        bool(r.get("deviceClassName"))
        or r.get("selectors") is not None
        or bool(r.get("allocationMode"))
        or bool(r.get("count"))
        or r.get("adminAccess") is not None
        or r.get("tolerations") is not None
        or r.get("capacity") is not None
    )


def _request_to_v1(r: Any) -> Any:
    if not isinstance(r, dict):
        return r
    out: dict = {}
    if "name" in r:
        out["name"] = r["name"]
    if _has_exact_fields(r):
        exact: dict = {"deviceClassName": r.get("deviceClassName") or ""}
        for k in EXACT_FIELDS[1:]:
            if _kept(k, r.get(k)):
                exact[k] = r[k]
        out["exactly"] = exact
    for k, v in r.items():
        if k not in EXACT_FIELDS and k not in out:
            out[k] = v
    return out


def _request_from_v1(r: Any) -> Any:
    if not isinstance(r, dict):
        return r
    exact = r.get("exactly") if isinstance(r.get("exactly"), dict) else {}
    flat: dict = {k: v for k, v in r.items() if k != "exactly"}
    for k in EXACT_FIELDS:
        if _kept(k, exact.get(k)):
            flat[k] = exact[k]
    flat.setdefault("deviceClassName", "")  # no omitempty in v1beta1
    ordered = {k: flat[k] for k in _V1BETA1_REQUEST_ORDER if k in flat}
    ordered.update({k: v for k, v in flat.items() if k not in ordered})
    return ordered


def _claim_spec(spec: Any, request_fn: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    out = dict(spec)
    out["devices"] = dict(devices)
    out["devices"]["requests"] = [request_fn(r) for r in devices["requests"]]
    return out


def claim_to_v1(obj: dict) -> dict:
    out = clone(obj)
    out["spec"] = _claim_spec(out.get("spec"), _request_to_v1)
    return out


def claim_from_v1(obj: dict) -> dict:
    out = clone(obj)
    out["spec"] = _claim_spec(out.get("spec"), _request_from_v1)
    return out


def _template(obj: dict, request_fn: Any) -> dict:
    out = clone(obj)
    spec = out.get("spec")
    if isinstance(spec, dict) and "spec" in spec:
        spec["spec"] = _claim_spec(spec["spec"], request_fn)
    return out


def template_to_v1(obj: dict) -> dict:
    return _template(obj, _request_to_v1)


def template_from_v1(obj: dict) -> dict:
    return _template(obj, _request_from_v1)


# -- dispatch ----------------------------------------------------------------------------------

_V1BETA1 = {
    "ResourceSlice": (slice_to_v1, slice_from_v1),
    "ResourceClaim": (claim_to_v1, claim_from_v1),
    "ResourceClaimTemplate": (template_to_v1, template_from_v1),
}


def convert(obj: dict, api_version: str) -> dict:
    """``obj`` (a resource.k8s.io object at any served version) as ``api_version``; a new
    object, or ``obj`` itself when it already is at that version."""
    have = obj.get("apiVersion")
    if have == api_version:
        return obj
    kind = obj.get("kind", "")
    out = obj
    if have == V1BETA1 and kind in _V1BETA1:
        out = _V1BETA1[kind][0](obj)
    if api_version == V1BETA1 and kind in _V1BETA1:
        out = _V1BETA1[kind][1](out)
    if out is obj:
        out = clone(obj)
    out["apiVersion"] = api_version
    return out


class DRAConverter:
    """The converter the generic read and write paths call (``convert(objs, api_version)``),
    as autoscaling's HPAConverter: every served version to and from the stored v1."""

    def convert(self, objs: list[dict], api_version: str) -> list[dict]:
        return [convert(o, api_version) for o in objs]
