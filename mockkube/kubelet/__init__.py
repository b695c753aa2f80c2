"""Node simulation: cluster profiles, kubelet simulators, DRA drivers, node lifecycle.

``start(server)`` (a COMPONENTS entry) brings up the cluster described by
``server.cluster`` (a profile path; None = the built-in demo profile).
``apply_profile(server, profile)`` adds or updates nodes and drivers of a running server.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from mockkube.config.profile import Profile, ProfileError, load_profile
from mockkube.kubelet import runtime as runtimes  # noqa: F401 - imported first, so it never shadows a name defined here later
from mockkube.kubelet.cluster import ClusterRuntime, runtime_for

if TYPE_CHECKING:
    from mockkube.server.server import Server


class _Component:
    def __init__(self, runtime: ClusterRuntime) -> None:
        self.runtime = runtime

    def resync(self) -> None:
        self.runtime.resync()

    def idle(self) -> bool:
        return self.runtime.kubelet.idle() and self.runtime.lifecycle.idle()

    async def stop(self) -> None:
        await self.runtime.stop()


async def start(server: "Server") -> list:
    az = getattr(server.store, "authorizer", None)
    if az is not None and "Node" not in az.modes and "AlwaysAllow" not in az.modes:
        logging.getLogger("mockkube.kubelet").warning(
            "--authorization-mode=%s has no Node: the simulated kubelets (system:node:<name>) may do nothing, "
            "as upstream's (the system:node ClusterRoleBinding has no subjects); kubeadm runs Node,RBAC",
            ",".join(az.modes),
        )
    rt = ClusterRuntime(server)
    await rt.start(getattr(server, "profile", None) or load_profile(server.cluster))
    return [_Component(rt)]


def cluster_of(server: "Server") -> ClusterRuntime:
    """The node simulation of ``server``. (Not named ``runtime``: the subpackage
    mockkube.kubelet.runtime, once imported, takes that name in this package.)"""
    rt = runtime_for(server.resources)
    if rt is None:
        raise RuntimeError("the node simulation is not running on this server (mockkube.kubelet not started)")
    return rt


def apply_profile(server: "Server", profile: "str | Path | dict | Profile") -> dict:
    """Apply a profile (dict, YAML text, file path) to a running server; returns a summary."""
    return cluster_of(server).apply(load_profile(profile))


__all__ = ["ClusterRuntime", "Profile", "ProfileError", "apply_profile", "runtime", "start"]
