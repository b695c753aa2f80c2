"""The in-process actors a cluster runs beside the API (controllers, scheduler, kubelets,
drivers). Each is a client of the store; each has ``async stop()``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockkube.server import Server


async def start_all(server: "Server") -> list:
    started: list = []
    return started
