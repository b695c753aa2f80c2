"""Thin access to `mockkube.machinery.quantity` for the DRA modules (one import point),
plus the one operation it lacks: multiplying two quantities exactly (KEP-5517)."""

from __future__ import annotations

from typing import Any

from mockkube.machinery.quantity import Quantity, parse_quantity

ZERO = parse_quantity("0")


def q(value: Any) -> Quantity:
    """A Quantity from a wire value ("80Gi", 4) or a Quantity."""
    if isinstance(value, Quantity):
        return value
    return parse_quantity(value)


def mul(a: Quantity, b: Quantity) -> Quantity:
    """Exact product; keeps the format of `a` (the base amount)."""
    am, ae = a.as_exact()
    bm, be = b.as_exact()
    return Quantity(am * bm, ae + be, a.format)


def cmp(a: Quantity, b: Quantity) -> int:
    return a.cmp(b)


__all__ = ["Quantity", "ZERO", "cmp", "mul", "parse_quantity", "q"]
