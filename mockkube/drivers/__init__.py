"""Simulated DRA drivers and the driver plugin interface (``base.Driver``)."""

from __future__ import annotations

from mockkube.drivers.base import Driver, Prepared
from mockkube.drivers.cpu import CPUDriver
from mockkube.drivers.fpga import FPGADriver
from mockkube.drivers.gpu import GPUDriver

BUILTIN: dict[str, type[Driver]] = {d.name: d for d in (GPUDriver, FPGADriver, CPUDriver)}


def make(name: str, settings: dict | None = None) -> Driver:
    """A driver instance by name (``gpu.example.com``...)."""
    try:
        return BUILTIN[name](settings)
    except KeyError:
        raise KeyError(f"unknown driver {name!r}; built in: {', '.join(sorted(BUILTIN))}") from None


__all__ = ["BUILTIN", "Driver", "Prepared", "make"]
