"""Go-style durations ("1m30s", "250ms") as profiles, flags and the clock API take them."""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")


def parse_duration(value: Any) -> float:
    """'1m30s' / '250ms' / 2 -> seconds."""
    if value is None or value == "":
        return 0.0
    if isinstance(value, (int, float)):
        return float(value)
    total, pos = 0.0, 0
    text = str(value).strip()
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            raise ValueError(f"invalid duration {value!r}")
        total += float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"invalid duration {value!r}") from None
    return total
