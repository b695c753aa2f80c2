"""The plugin side of the kubelet's DRA gRPC protocol, as upstream's kubeletplugin helper
(k8s.io/dynamic-resource-allocation/kubeletplugin) serves it: a registration socket
``<registry>/<driver>-reg.sock`` (pluginregistration.Registration), a DRA socket
``<plugins>/<driver>/dra.sock`` (DRAPlugin v1 and/or v1beta1, and
v1alpha1.DRAResourceHealth), stale sockets removed before listening and on a clean stop.

``mockkube driver run`` serves the built-in drivers through it; tests and driver authors
can use it as a stand-in for their own binary. Everything is grpc.aio: nothing blocks
the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Sequence

import grpc

from mockkube.generated.pluginapi import DRA_PLUGIN_TYPE, DRA_VERSIONS, health_grpc, health_pb2, reg_grpc, reg_pb2

log = logging.getLogger("mockkube.kubeletplugin")


@dataclass
class PreparedDevice:
    """One device of a NodePrepareResources answer."""

    request_names: list[str]
    pool_name: str
    device_name: str
    cdi_device_ids: list[str] = field(default_factory=list)
    share_id: str | None = None


# claim {namespace, uid, name} -> devices, or an error string for that claim
PrepareFn = Callable[[dict], Awaitable["list[PreparedDevice] | str"]]
UnprepareFn = Callable[[dict], Awaitable[str]]

HEALTH = {"Healthy": 1, "Unhealthy": 2, "Unknown": 0}


class KubeletPlugin:
    """Serve one driver's kubelet plugin on a node's registry and plugins directories."""

    def __init__(
        self,
        driver: str,
        registry_dir: str | Path,
        plugins_dir: str | Path,
        prepare: PrepareFn,
        unprepare: UnprepareFn,
        versions: Sequence[str] = ("v1.DRAPlugin", "v1beta1.DRAPlugin"),
        health: bool = True,
        uid: str = "",
    ) -> None:
        self.driver = driver
        name = f"{driver}-{uid}-reg.sock" if uid else f"{driver}-reg.sock"
        self.reg_socket = Path(registry_dir) / name
        self.dra_socket = Path(plugins_dir) / driver / "dra.sock"
        self.prepare_fn, self.unprepare_fn = prepare, unprepare
        self.versions = list(versions)
        self.health_enabled = health
        self.registered = asyncio.Event()
        self.registration_error = ""
        self.calls: list[tuple[str, str]] = []  # (method, version) as served, for tests
        self._health: dict[tuple[str, str], tuple[int, str, int]] = {}
        self._watchers: list[asyncio.Queue] = []
        self._servers: list[grpc.aio.Server] = []

    # -- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        """Listen on the DRA socket first, then on the registration socket (the kubelet
        dials the endpoint as soon as it sees the registration socket)."""
        self.dra_socket.parent.mkdir(parents=True, exist_ok=True)
        self.reg_socket.parent.mkdir(parents=True, exist_ok=True)
        dra = grpc.aio.server()
        for version in self.versions:
            if version not in DRA_VERSIONS:
                continue  # advertised only (tests of version negotiation)
            pb2, stubs = DRA_VERSIONS[version]
            getattr(stubs, "add_DRAPluginServicer_to_server")(_DRAServicer(self, version, pb2), dra)
        if self.health_enabled:
            health_grpc.add_DRAResourceHealthServicer_to_server(_HealthServicer(self), dra)
        await self._listen(dra, self.dra_socket)
        reg = grpc.aio.server()
        reg_grpc.add_RegistrationServicer_to_server(_RegistrationServicer(self), reg)
        await self._listen(reg, self.reg_socket)

    async def _listen(self, server: grpc.aio.Server, path: Path) -> None:
        _remove(path)  # a stale socket of a crashed predecessor
        server.add_insecure_port(f"unix:{path}")
        await server.start()
        self._servers.append(server)

    async def stop(self) -> None:
        """A clean stop: the registration socket disappears first, then the servers."""
        _remove(self.reg_socket)
        for q in self._watchers:
            q.put_nowait(None)
        for s in reversed(self._servers):
            await s.stop(0.5)
        self._servers.clear()
        _remove(self.dra_socket)

    # -- health ---------------------------------------------------------------------
    def set_health(self, pool: str, device: str, health: str, message: str = "", timeout: int = 0) -> None:
        """Report a device's health ('Healthy', 'Unhealthy', 'Unknown') to every watching kubelet."""
        self._health[(pool, device)] = (HEALTH[health], message, timeout)
        msg = self._health_response([(pool, device)])
        for q in self._watchers:
            q.put_nowait(msg)

    def _health_response(self, keys: list[tuple[str, str]]) -> health_pb2.NodeWatchResourcesResponse:
        now = int(time.time())
        return health_pb2.NodeWatchResourcesResponse(
            devices=[
                health_pb2.DeviceHealth(
                    device=health_pb2.DeviceIdentifier(pool_name=p, device_name=d),
                    health=self._health[(p, d)][0],
                    last_updated_time=now,
                    message=self._health[(p, d)][1],
                    health_check_timeout_seconds=self._health[(p, d)][2],
                )
                for p, d in keys
            ]
        )


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class _RegistrationServicer(reg_grpc.RegistrationServicer):
    def __init__(self, plugin: KubeletPlugin) -> None:
        self.plugin = plugin

    async def GetInfo(self, request, context):  # noqa: N802 - gRPC method name
        p = self.plugin
        return reg_pb2.PluginInfo(
            type=DRA_PLUGIN_TYPE, name=p.driver, endpoint=str(p.dra_socket.absolute()), supported_versions=p.versions
        )

    async def NotifyRegistrationStatus(self, request, context):  # noqa: N802
        p = self.plugin
        if request.plugin_registered:
            p.registration_error = ""
            p.registered.set()
        else:
            p.registration_error = request.error
            p.registered.clear()
            log.warning("%s: kubelet refused the registration: %s", p.driver, request.error)
        return reg_pb2.RegistrationStatusResponse()


class _DRAServicer:
    """NodePrepareResources / NodeUnprepareResources for one API version."""

    def __init__(self, plugin: KubeletPlugin, version: str, pb2) -> None:
        self.plugin, self.version, self.pb2 = plugin, version, pb2

    async def NodePrepareResources(self, request, context):  # noqa: N802
        self.plugin.calls.append(("NodePrepareResources", self.version))
        out = self.pb2.NodePrepareResourcesResponse()
        for c in request.claims:
            res = await self.plugin.prepare_fn({"namespace": c.namespace, "uid": c.uid, "name": c.name})
            if isinstance(res, str):
                out.claims[c.uid].error = res
                continue
            for d in res:
                dev = out.claims[c.uid].devices.add(
                    request_names=d.request_names,
                    pool_name=d.pool_name,
                    device_name=d.device_name,
                    cdi_device_ids=d.cdi_device_ids,
                )
                if d.share_id and hasattr(dev, "share_id"):
                    dev.share_id = d.share_id
            out.claims[c.uid].SetInParent()
        return out

    async def NodeUnprepareResources(self, request, context):  # noqa: N802
        self.plugin.calls.append(("NodeUnprepareResources", self.version))
        out = self.pb2.NodeUnprepareResourcesResponse()
        for c in request.claims:
            err = await self.plugin.unprepare_fn({"namespace": c.namespace, "uid": c.uid, "name": c.name})
            out.claims[c.uid].error = err or ""
        return out


class _HealthServicer(health_grpc.DRAResourceHealthServicer):
    def __init__(self, plugin: KubeletPlugin) -> None:
        self.plugin = plugin

    async def NodeWatchResources(self, request, context):  # noqa: N802
        q: asyncio.Queue = asyncio.Queue()
        p = self.plugin
        p._watchers.append(q)
        try:
            if p._health:
                yield p._health_response(sorted(p._health))
            while True:
                msg = await q.get()
                if msg is None:
                    return
                yield msg
        finally:
            p._watchers.remove(q)
