"""resource.Quantity from k8s.io/apimachinery/pkg/api/resource, exactly.

A quantity is an exact decimal ``mantissa * 10**exponent`` (never a float) plus the format
it was written in. Parsing rounds up to nano precision, and ``canonical()`` gives the string
kube-apiserver writes back (``"1.5Gi"`` -> ``"1536Mi"``, ``"0.5"`` -> ``"500m"``), including
upstream's habit of keeping the input verbatim when it was already canonical
(so ``"+1Gi"`` stays ``"+1Gi"``). Clients diff against that string, so it must match.
"""

from __future__ import annotations

import re
from functools import total_ordering

DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
BINARY_SI = "BinarySI"  # 12Mi
DECIMAL_SI = "DecimalSI"  # 12M

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_MAX_INT64 = (1 << 63) - 1
_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_BY_POW = {v // 10: k for k, v in _BIN_SUFFIXES.items()}
_SUFFIX_CHARS = set("eEinumkKMGTP")
_DIGITS = set("0123456789")
_INT_RE = re.compile(r"[+-]?[0-9]+")
# Exact arithmetic needs 10**gap; refuse absurd gaps instead of hanging the server.
_MAX_EXP_GAP = 4096


def _normalize(m: int, e: int) -> tuple[int, int]:
    if m == 0:
        return 0, 0
    while m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def _ceil_div_abs(m: int, d: int) -> int:
    """|m| / d rounded up, with m's sign (inf.RoundUp: away from zero)."""
    q = -(-abs(m) // d)
    return q if m >= 0 else -q


def _digits(m: int) -> int:
    return len(str(abs(m)))


@total_ordering
class Quantity:
    """An immutable resource quantity; compare, add, subtract and multiply by ints exactly."""

    __slots__ = ("_m", "_e", "format", "_s")

    def __init__(self, mantissa: int, exponent: int = 0, format: str = DECIMAL_SI, s: str | None = None) -> None:
        self._m, self._e = _normalize(mantissa, exponent)
        self.format = format
        self._s = s  # the input string, when upstream would keep it verbatim

    # -- constructors (resource.NewQuantity / NewMilliQuantity / NewScaledQuantity) --
    @classmethod
    def from_int(cls, value: int, format: str = DECIMAL_SI) -> "Quantity":
        return cls(value, 0, format)

    @classmethod
    def from_milli(cls, value: int, format: str = DECIMAL_SI) -> "Quantity":
        return cls(value, -3, format)

    @classmethod
    def from_scaled(cls, value: int, scale: int) -> "Quantity":
        return cls(value, scale, DECIMAL_SI)

    # -- inspection --
    def is_zero(self) -> bool:
        return self._m == 0

    def sign(self) -> int:
        return (self._m > 0) - (self._m < 0)

    def as_exact(self) -> tuple[int, int]:
        """(mantissa, exponent) with the mantissa free of trailing zeros."""
        return self._m, self._e

    def _scaled(self, scale: int) -> int:
        """ScaledValue: the value in units of 10**scale, rounded away from zero."""
        shift = self._e - scale
        if shift >= 0:
            if shift > _MAX_EXP_GAP:
                raise OverflowError("quantity too large")
            return self._m * 10**shift
        if -shift > _digits(self._m) + 1:
            return self.sign()  # |value| < one unit: rounds away from zero to +-1
        return _ceil_div_abs(self._m, 10**-shift)

    def value(self) -> int:
        """Value(): the integer value, rounded up (away from zero)."""
        return self._scaled(0)

    def milli_value(self) -> int:
        """MilliValue(): the value in thousandths, rounded up (away from zero)."""
        return self._scaled(-3)

    def scaled_value(self, scale: int) -> int:
        return self._scaled(scale)

    def __float__(self) -> float:
        return float(f"{self._m}e{self._e}")

    # -- comparison --
    def _cmp(self, other: "Quantity") -> int:
        a, b = self.sign(), other.sign()
        if a != b or a == 0:
            return (a > b) - (a < b)
        # same non-zero sign: compare magnitudes by order first, then align (gap is bounded)
        oa, ob = _digits(self._m) + self._e, _digits(other._m) + other._e
        if oa != ob:
            return a if oa > ob else -a
        e = min(self._e, other._e)
        x, y = self._m * 10 ** (self._e - e), other._m * 10 ** (other._e - e)
        return (x > y) - (x < y)

    def cmp(self, other: "Quantity") -> int:
        return self._cmp(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._m == other._m and self._e == other._e

    def __lt__(self, other: "Quantity") -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) < 0

    def __hash__(self) -> int:
        return hash((self._m, self._e))

    # -- arithmetic (format rules of Quantity.Add/Sub/Mul/Neg) --
    def _aligned(self, other: "Quantity") -> tuple[int, int, int]:
        if other._m == 0:
            return self._m, 0, self._e
        if self._m == 0:
            return 0, other._m, other._e
        e = min(self._e, other._e)
        if max(self._e, other._e) - e > _MAX_EXP_GAP:
            raise OverflowError("quantities too far apart to add exactly")
        return self._m * 10 ** (self._e - e), other._m * 10 ** (other._e - e), e

    def __add__(self, other: "Quantity") -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        x, y, e = self._aligned(other)
        fmt = other.format if self.is_zero() else self.format
        return Quantity(x + y, e, fmt)

    def __radd__(self, other: object) -> "Quantity":
        if other == 0:  # sum()
            return Quantity(self._m, self._e, self.format)
        return NotImplemented

    def __sub__(self, other: "Quantity") -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        x, y, e = self._aligned(other)
        fmt = other.format if self.is_zero() else self.format
        return Quantity(x - y, e, fmt)

    def __mul__(self, n: int) -> "Quantity":
        if not isinstance(n, int) or isinstance(n, bool):
            return NotImplemented
        return Quantity(self._m * n, self._e, self.format)

    __rmul__ = __mul__

    def __neg__(self) -> "Quantity":
        return Quantity(-self._m, self._e, self.format)

    def __bool__(self) -> bool:
        return self._m != 0

    # -- serialisation --
    def canonical(self) -> str:
        """Quantity.String(): what kube-apiserver serialises."""
        if self._s is not None:
            return self._s
        if self._m == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if Quantity(abs(self._m), self._e) < _KI or self._e < 0:  # in (-1024, 1024), or not an integer
                fmt = DECIMAL_SI
        elif fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
            fmt = DECIMAL_EXPONENT
        if fmt == BINARY_SI:
            v = self._m * 10**self._e
            pow1024, mag = 0, abs(v)
            while mag >= 1024 and mag % 1024 == 0:
                mag //= 1024
                pow1024 += 1
            # upstream looks the suffix up and silently drops it when there is none
            return str(mag if v > 0 else -mag) + _BIN_BY_POW.get(pow1024, "")
        m, e = self._m, self._e
        while e % 3:
            m *= 10
            e -= 1
        if fmt == DECIMAL_SI:
            return f"{m}{_DEC_BY_EXP.get(e, '')}"
        return f"{m}" if e == 0 else f"{m}e{e}"

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({self.canonical()!r}, {self.format})"


_KI = Quantity(1024)
_MAX_ALLOWED = Quantity(_MAX_INT64)


def _split(s: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix); ValueError on bad shape."""
    positive, pos, end = True, 0, len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] == "+"
        pos += 1
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return positive, s, s[start:], "", ""
    num = s[start:pos] or "0"
    denom = ""
    if s[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[dstart:pos]
        if pos >= end:
            return positive, s, num, denom, ""
    value = s[:pos]
    sstart = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ValueError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, s[sstart:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """suffixer.interpret: (base, exponent, format); ValueError for an unknown suffix."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _INT_RE.fullmatch(suffix[1:]):
        exp = int(suffix[1:])
        if -(1 << 63) <= exp <= _MAX_INT64:
            return 10, ((exp + (1 << 31)) % (1 << 32)) - (1 << 31), DECIMAL_EXPONENT  # Go's int32()
    raise ValueError(ERR_SUFFIX)


def parse_quantity(value: str | int | float) -> Quantity:
    """resource.ParseQuantity (a JSON number is read as its text, as UnmarshalJSON does).

    Raises ValueError carrying upstream's message.
    """
    if isinstance(value, bool):
        s = "true" if value else "false"
    elif isinstance(value, int):
        s = str(value)
    elif isinstance(value, float):
        s = repr(value)
    elif isinstance(value, str):
        s = value
    else:
        raise ValueError(ERR_FORMAT_WRONG)
    if not s:
        raise ValueError(ERR_FORMAT_WRONG)
    if s == "0":
        return Quantity(0, 0, DECIMAL_SI, "0")
    positive, val, num, denom, suf = _split(s)
    base, exponent, fmt = _interpret(suf)

    # Fast path (int64Amount): the result keeps the input string when already canonical.
    if fmt == BINARY_SI:
        mantissa = 1 << exponent if exponent >= 0 and not denom else 1
        precision = 15 - len(num) - (exponent * 3 // 10) - 1 if exponent >= 0 and not denom else -1
        scale = 0
    else:
        mantissa, scale = 1, exponent
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            v = int(shifted)
            result = v * mantissa
            if result <= _MAX_INT64:
                if not positive:
                    result = -result
                if fmt == BINARY_SI:
                    keep = exponent % 10 == 0 and (v & 0x07) != 0
                else:
                    keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(result, scale, fmt, s if keep else None)

    # Slow path (inf.Dec): exact decimal, rounded up to nano precision.
    digits = val.lstrip("+-")
    ip, _, fp = digits.partition(".")
    if not (ip + fp) or not (ip + fp).isdigit():
        raise ValueError(ERR_NUMERIC)
    m, e = int(ip + fp), -len(fp)
    if base == 10:
        e += exponent
    else:
        m <<= exponent
    m, e = _normalize(m, e)
    if m and e < -9:
        gap = -9 - e
        m = 1 if gap > _digits(m) + 1 else -(-m // 10**gap)
        e = -9
    if fmt == BINARY_SI:
        if Quantity(m, e) > _MAX_ALLOWED:
            m, e = _MAX_INT64, 0
        elif m and e < 0 and _digits(m) + e <= 0:  # 0 < amount < 1
            fmt = DECIMAL_SI
    return Quantity(m if positive else -m, e, fmt)


def canonicalize(value: str | int | float) -> str:
    """The string kube-apiserver stores for a quantity written as ``value``."""
    return parse_quantity(value).canonical()
