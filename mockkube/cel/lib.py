"""Runtime values of the Kubernetes CEL libraries used by DRA: semver and quantity.

Quantities come from `mockkube.machinery.quantity` (imported lazily so this module has no
import-order coupling); semantic versions follow semver 2.0 as blang/semver does.
"""

from __future__ import annotations

import re
from functools import total_ordering
from typing import Any


class CELRuntimeError(Exception):
    """Evaluation error; `message` uses cel-go's wording (e.g. "no such key: x")."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


@total_ordering
class Semver:
    """A parsed semantic version; equality and order ignore build metadata (semver 2.0)."""

    __slots__ = ("major", "minor", "patch", "pre", "build")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple = (), build: str = "") -> None:
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> "Semver":
        if normalize:
            text = _normalize_semver(text)
        m = _SEMVER_RE.match(text)
        if not m:
            raise ValueError(f"invalid semver: {text}")
        pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split(".")) if m.group(4) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, m.group(5) or "")

    def _key(self) -> tuple:
        # A version without prerelease sorts after any prerelease of the same triple;
        # numeric identifiers sort before alphanumeric ones.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 1 if not self.pre else 0, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: "Semver") -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + self.build
        return s

    __repr__ = __str__


def _normalize_semver(text: str) -> str:
    """Kubernetes' semver(s, true): strip a leading "v", pad missing minor/patch, drop leading zeros."""
    text = text[1:] if text.startswith("v") else text
    core, sep, rest = re.split(r"([-+])", text, maxsplit=1) + ["", ""] if re.search(r"[-+]", text) else (text, "", "")
    parts = core.split(".")
    if len(parts) > 3 or not all(p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + sep + rest


def _semver_error(text: str) -> str:
    """blang/semver's Parse error for the version core (what Kubernetes' semver() reports)."""
    if not text:
        return "Version string empty"
    parts = text.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    patch = re.split(r"[-+]", parts[2], maxsplit=1)[0]
    for what, num in (("Major", parts[0]), ("Minor", parts[1]), ("Patch", patch)):
        if not num.isdigit() or not num.isascii():
            return f'Invalid character(s) found in {what.lower()} number "{num}"'
        if len(num) > 1 and num[0] == "0":
            return f'{what} number must not contain leading zeroes "{num}"'
    return "could not parse semver: " + text


def semver_parse(text: Any, normalize: bool = False) -> Semver:
    try:
        return Semver.parse(text, normalize)
    except ValueError:
        raise CELRuntimeError(_semver_error(_normalize_semver(text) if normalize else text)) from None


def is_semver(text: Any, normalize: bool = False) -> bool:
    try:
        Semver.parse(text, normalize)
        return True
    except ValueError:
        return False


def _quantity_module() -> Any:
    from mockkube.machinery import quantity  # lazy: written by another module owner

    return quantity


def quantity_class() -> type:
    return _quantity_module().Quantity


_QUANTITY_SHAPE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")


def quantity_parse(text: Any) -> Any:
    try:
        return _quantity_module().parse_quantity(text)
    except Exception:  # noqa: BLE001 - any parse failure is one of the CEL errors below
        if isinstance(text, str) and _QUANTITY_SHAPE.match(text):
            raise CELRuntimeError("unable to parse quantity's suffix") from None  # resource.ErrSuffix
        raise CELRuntimeError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ) from None


def is_quantity(text: Any) -> bool:
    try:
        _quantity_module().parse_quantity(text)
        return True
    except Exception:  # noqa: BLE001
        return False


def quantity_cmp(a: Any, b: Any) -> int:
    """compareTo for quantities (Quantity.cmp) and semvers (total ordering)."""
    if hasattr(a, "cmp"):
        return a.cmp(b)
    return (a > b) - (a < b)
