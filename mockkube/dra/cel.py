"""The DRA side of CEL: the `device` variable for ResourceSlice devices.

The engine itself is API machinery (mockkube.cel); DRA code imports the engine's
`compile_expression` and `CELError` through this module so callers keep one import.
"""

from __future__ import annotations

from typing import Any

from mockkube.cel import lib
from mockkube.cel.engine import CELError, CompiledExpression, DefaultEmptyMap, compile_expression
from mockkube.cel.lib import Semver

__all__ = ["CELError", "CompiledExpression", "compile_expression", "device_env"]


def _attribute_value(name: str, value: dict, list_attrs: bool = False) -> Any:
    """The CEL value of one attribute, as upstream's getAttributeValue: with
    DRAListTypeAttributes on, list values (checked first) are CEL lists; with it off they
    fall through to "unsupported attribute value", which stops scheduling until the slices
    change rather than scheduling on a misread attribute."""
    if list_attrs:
        for key in ("ints", "bools", "strings"):
            if value.get(key) is not None:
                return list(value[key])
        if value.get("versions") is not None:
            out = []
            for v in value["versions"]:
                try:
                    out.append(Semver.parse(v))
                except ValueError:
                    return _BadAttribute(f"attribute {name}: parse semantic version: {v}")
            return out
    if "int" in value:
        return int(value["int"])
    if "bool" in value:
        return bool(value["bool"])
    if "string" in value:
        return value["string"]
    if "version" in value:
        try:
            return Semver.parse(value["version"])
        except ValueError:
            return _BadAttribute(f"attribute {name}: parse semantic version: {value['version']}")
    return _BadAttribute(f"attribute {name}: unsupported attribute value")


class _BadAttribute:
    """Placeholder for an attribute upstream cannot convert; reading it is an error."""

    def __init__(self, message: str) -> None:
        self.message = message


def device_env(driver: str, device: dict, list_attrs: bool = False) -> dict:
    """The `device` variable for a ResourceSlice device entry (v1 shape: attributes and
    capacity directly on the device). Unqualified names live in the driver's domain.
    ``list_attrs``: the DRAListTypeAttributes feature gate."""
    attrs: dict[str, dict[str, Any]] = DefaultEmptyMap()
    for name, value in (device.get("attributes") or {}).items():
        domain, sep, short = name.partition("/")
        if not sep:
            domain, short = driver, name
        v = _attribute_value(name, value or {}, list_attrs)
        if isinstance(v, _BadAttribute):
            raise CELError(v.message)
        attrs.setdefault(domain, {})[short] = v
    caps: dict[str, dict[str, Any]] = DefaultEmptyMap()
    for name, value in (device.get("capacity") or {}).items():
        domain, sep, short = name.partition("/")
        if not sep:
            domain, short = driver, name
        caps.setdefault(domain, {})[short] = lib.quantity_parse((value or {}).get("value", "0"))
    return {
        "driver": driver,
        "attributes": attrs,
        "capacity": caps,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations", False)),
    }
