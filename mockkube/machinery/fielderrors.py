"""Field errors in the shape of k8s.io/apimachinery/pkg/util/validation/field.

Validation code collects these; the HTTP layer turns a list of them into one 422
Invalid Status whose ``details.causes`` name each bad field, exactly as upstream does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# field.ErrorType -> (cause reason, message prefix)
_TYPES = {
    "NotFound": ("FieldValueNotFound", "Not found"),
    "Required": ("FieldValueRequired", "Required value"),
    "Duplicate": ("FieldValueDuplicate", "Duplicate value"),
    "Invalid": ("FieldValueInvalid", "Invalid value"),
    "NotSupported": ("FieldValueNotSupported", "Unsupported value"),
    "Forbidden": ("FieldValueForbidden", "Forbidden"),
    "TooLong": ("FieldValueTooLong", "Too long"),
    "TooMany": ("FieldValueTooMany", "Too many"),
    "Internal": ("InternalError", "Internal error"),
    "TypeInvalid": ("FieldValueTypeInvalid", "Invalid value"),
}

_OMIT = object()


def _fmt_value(value: Any) -> str:
    """Render a bad value the way field.Error does (%q for strings, %v otherwise)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


@dataclass
class FieldError:
    type: str
    field: str
    value: Any = _OMIT
    detail: str = ""

    @property
    def reason(self) -> str:
        return _TYPES[self.type][0]

    def body(self) -> str:
        """The message without the field path (what goes into a Status cause)."""
        prefix = _TYPES[self.type][1]
        if self.type in ("Required", "Forbidden", "TooLong", "Internal") and self.value is _OMIT:
            s = prefix
        elif self.type == "TooMany" and self.value is _OMIT:
            s = prefix
        elif self.value is _OMIT:
            s = prefix
        else:
            s = f"{prefix}: {_fmt_value(self.value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def to_cause(self) -> dict:
        return {"reason": self.reason, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError("Required", field, detail=detail)


def invalid(field: str, value: Any, detail: str = "") -> FieldError:
    return FieldError("Invalid", field, value, detail)


def not_supported(field: str, value: Any, valid: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in valid) if valid else ""
    return FieldError("NotSupported", field, value, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError("Forbidden", field, detail=detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError("Duplicate", field, value)


def not_found(field: str, value: Any) -> FieldError:
    return FieldError("NotFound", field, value)


def too_long(field: str, value: Any, max_len: int) -> FieldError:
    """field.TooLong: upstream omits the (possibly huge) value from the message."""
    return FieldError("TooLong", field, detail=f"may not be more than {max_len} bytes")


def too_many(field: str, actual: int, max_items: int) -> FieldError:
    if actual >= 0:
        return FieldError("TooMany", field, actual, f"must have at most {max_items} items")
    return FieldError("TooMany", field, detail=f"must have at most {max_items} items")


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError("TypeInvalid", field, value, detail)


def internal(field: str, detail: str) -> FieldError:
    return FieldError("Internal", field, detail=detail)


class Path:
    """A field path builder: Path("spec").child("devices").index(0) -> spec.devices[0]."""

    __slots__ = ("_s",)

    def __init__(self, s: str = "") -> None:
        self._s = s

    def child(self, *names: str) -> "Path":
        s = self._s
        for n in names:
            s = f"{s}.{n}" if s else n
        return Path(s)

    def index(self, i: int) -> "Path":
        return Path(f"{self._s}[{i}]")

    def key(self, k: str) -> "Path":
        return Path(f"{self._s}[{k}]")

    def __str__(self) -> str:
        return self._s

    def __repr__(self) -> str:
        return f"Path({self._s!r})"
