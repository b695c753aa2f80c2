"""The kubelet's side of the plugin protocol: per node a ``plugins_registry`` directory
watched for ``<driver>-reg.sock`` sockets, registration as upstream's pluginwatcher and
DRA handler do it (GetInfo 1 s, dial 10 s, NotifyRegistrationStatus 5 s, the first of the
plugin's versions the kubelet supports), and one grpc.aio client per registered DRA
plugin (NodePrepareResources / NodeUnprepareResources with a 45 s timeout, the
v1alpha1.DRAResourceHealth stream, connection monitoring).

The directories of all nodes live under one root (``<root>/<node>/plugins_registry`` and
``<root>/<node>/plugins``), watched by one inotify watcher (watchfiles) plus an explicit
rescan, so a thousand idle nodes cost no threads and no polling.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mockkube.generated import pluginapi
from mockkube.generated.pluginapi import DRA_PLUGIN_TYPE, DRA_VERSION_NAMES

if TYPE_CHECKING:  # imported where a plugin is dialled: simulated drivers never need gRPC
    import grpc

log = logging.getLogger("mockkube.kubelet.plugins")

REGISTRY = "plugins_registry"
KUBELET_DIR = "/var/lib/kubelet"  # a node's, as its pods see it: <root>/<node> here
PLUGINS = "plugins"
GET_INFO_TIMEOUT = 1.0
DIAL_TIMEOUT = 10.0
NOTIFY_TIMEOUT = 5.0
CALL_TIMEOUT = 45.0


def health_name(code: int) -> str:
    """A health stream's enum value as the kubelet writes it in pod status."""
    pb2 = pluginapi.health_pb2
    return {pb2.HEALTHY: "Healthy", pb2.UNHEALTHY: "Unhealthy", pb2.UNKNOWN: "Unknown"}.get(code, "Unknown")


class Hooks(Protocol):
    """What the kubelet does when plugins come, go and report health."""

    def plugin_registered(self, node: str, driver: str) -> None: ...

    def plugin_unusable(self, node: str, driver: str) -> None: ...

    def device_health(self, node: str, driver: str, devices: list[tuple[str, str, str, str]] | None) -> None:
        """``devices``: (pool, device, health, message); None: forget the driver's health."""


def is_registration_socket(path: Path) -> bool:
    """As the pluginwatcher: no dot-files, only unix sockets."""
    if path.name.startswith("."):
        return False
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


@dataclass
class DRAPluginClient:
    """A registered DRA plugin instance on one node."""

    node: str
    driver: str
    socket: str  # the registration socket it came from
    endpoint: str
    version: str
    channel: grpc.aio.Channel
    tasks: list[asyncio.Task] = field(default_factory=list)
    usable: bool = True
    sig: tuple = ()  # (inode, ctime) of the socket it registered from

    def _stub(self):
        pb2, stubs = pluginapi.DRA_VERSIONS[self.version]
        return pb2, stubs.DRAPluginStub(self.channel)

    async def prepare(self, claims: list[dict]) -> dict[str, "list[dict] | str"]:
        """NodePrepareResources: per claim uid, the devices or the plugin's error string.
        Raises grpc.aio.AioRpcError for a failed call."""
        pb2, stub = self._stub()
        resp = await stub.NodePrepareResources(
            pb2.NodePrepareResourcesRequest(
                claims=[pb2.Claim(namespace=c["namespace"], uid=c["uid"], name=c["name"]) for c in claims]
            ),
            timeout=CALL_TIMEOUT,
        )
        out: dict[str, list[dict] | str] = {}
        for uid, r in resp.claims.items():
            if r.error:
                out[uid] = r.error
                continue
            out[uid] = [
                {
                    "requestNames": list(d.request_names),
                    "pool": d.pool_name,
                    "device": d.device_name,
                    "cdiDeviceIDs": list(d.cdi_device_ids),
                    "shareID": d.share_id if "share_id" in d.DESCRIPTOR.fields_by_name else "",
                }
                for d in r.devices
            ]
        return out

    async def unprepare(self, claims: list[dict]) -> dict[str, str]:
        pb2, stub = self._stub()
        resp = await stub.NodeUnprepareResources(
            pb2.NodeUnprepareResourcesRequest(
                claims=[pb2.Claim(namespace=c["namespace"], uid=c["uid"], name=c["name"]) for c in claims]
            ),
            timeout=CALL_TIMEOUT,
        )
        return {uid: r.error for uid, r in resp.claims.items()}

    async def close(self) -> None:
        for t in self.tasks:
            t.cancel()
        await self.channel.close()


class PluginWatcher:
    """Registration of the plugins of every node under ``root``."""

    def __init__(self, root: Path, hooks: Hooks, supported: tuple[str, ...] = DRA_VERSION_NAMES) -> None:
        self.root = root
        self.hooks = hooks
        self.supported = supported
        self.nodes: set[str] = set()
        self.by_socket: dict[str, DRAPluginClient] = {}
        self.pending: set[str] = set()
        self._task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self._busy: set[asyncio.Task] = set()

    # -- directories --------------------------------------------------------------
    def registry_dir(self, node: str) -> Path:
        return self.root / node / REGISTRY

    def plugins_dir(self, node: str) -> Path:
        return self.root / node / PLUGINS

    def add_node(self, node: str) -> None:
        self.registry_dir(node).mkdir(parents=True, exist_ok=True)
        self.plugins_dir(node).mkdir(parents=True, exist_ok=True)
        self.nodes.add(node)
        if self._task is not None:
            self.rescan(node)

    def remove_node(self, node: str) -> None:
        """The node's kubelet stops: it forgets its plugins (the sockets stay)."""
        self.nodes.discard(node)
        for path, c in list(self.by_socket.items()):
            if c.node == node:
                self._spawn(self._drop(path, notify=False))

    def plugins(self, node: str) -> dict[str, DRAPluginClient]:
        """The usable plugin per driver on ``node`` (the newest registration wins)."""
        out: dict[str, DRAPluginClient] = {}
        for c in self.by_socket.values():
            if c.node == node and c.usable:
                out[c.driver] = c
        return out

    # -- watching ---------------------------------------------------------------------
    async def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._task = asyncio.get_running_loop().create_task(self._watch())
        for node in sorted(self.nodes):
            self.rescan(node)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        for t in list(self._busy):
            t.cancel()
        for c in list(self.by_socket.values()):
            await c.close()
        self.by_socket.clear()

    def rescan(self, node: str) -> None:
        """Compare the node's registry directory with what is registered (explicit scan)."""
        d = self.registry_dir(node)
        present: dict[str, tuple] = {}
        try:
            with os.scandir(d) as it:
                for e in it:
                    p = Path(e.path)
                    if is_registration_socket(p):
                        st = os.stat(p)
                        present[str(p)] = (st.st_ino, st.st_ctime_ns)
        except FileNotFoundError:
            pass
        for path, c in list(self.by_socket.items()):
            if c.node == node and present.get(path) != c.sig:
                self._spawn(self._drop(path, replaced=path in present))
        for path, sig in present.items():
            known = self.by_socket.get(path)
            if (known is None or known.sig != sig) and path not in self.pending:
                self.pending.add(path)
                self._spawn(self._register(node, path, sig))

    async def settle(self, node: str) -> None:
        """Rescan ``node`` and wait until the registrations it started have ended."""
        self.rescan(node)
        while any(p.startswith(str(self.registry_dir(node))) for p in self.pending):
            await asyncio.gather(*list(self._busy), return_exceptions=True)

    async def _watch(self) -> None:
        try:
            import watchfiles
        except ImportError:  # pragma: no cover - a dependency; polling fallback
            watchfiles = None
        if watchfiles is not None:
            try:
                async for changes in watchfiles.awatch(
                    self.root, stop_event=self._stop, watch_filter=None, debounce=100, step=10, recursive=True
                ):
                    touched = set()
                    for _, path in changes:
                        p = Path(path)
                        if p.parent.name == REGISTRY and p.parent.parent.name in self.nodes:
                            touched.add(p.parent.parent.name)
                    for node in touched:
                        self.rescan(node)
                return
            except Exception as e:  # e.g. inotify limits: fall back to a modest rescan interval
                log.warning("watching %s failed (%s); rescanning every second", self.root, e)
        while not self._stop.is_set():
            for node in list(self.nodes):
                self.rescan(node)
            await asyncio.sleep(1.0)

    def _spawn(self, coro) -> None:
        t = asyncio.get_running_loop().create_task(coro)
        self._busy.add(t)
        t.add_done_callback(self._busy.discard)

    # -- registration -----------------------------------------------------------------
    async def _register(self, node: str, path: str, sig: tuple = ()) -> None:
        try:
            await self._register_once(node, path, sig)
        except Exception as e:  # the next change of the directory retries
            log.warning("node %s: plugin registration from %s failed: %s", node, path, e)
        finally:
            self.pending.discard(path)

    async def _register_once(self, node: str, path: str, sig: tuple) -> None:
        import grpc

        async with grpc.aio.insecure_channel(f"unix:{path}") as ch:
            reg = pluginapi.reg_grpc.RegistrationStub(ch)
            info = await reg.GetInfo(pluginapi.reg_pb2.InfoRequest(), timeout=GET_INFO_TIMEOUT)
            err = self._validate(info)
            if err:
                await reg.NotifyRegistrationStatus(
                    pluginapi.reg_pb2.RegistrationStatus(plugin_registered=False, error=err), timeout=NOTIFY_TIMEOUT
                )
                log.warning("node %s: plugin %s refused: %s", node, info.name, err)
                return
            version = next(v for v in info.supported_versions if v in self.supported)
            endpoint = self._on_host(node, info.endpoint)
            channel = grpc.aio.insecure_channel(endpoint if endpoint.startswith("unix:") else f"unix:{endpoint}")
            try:
                await asyncio.wait_for(channel.channel_ready(), DIAL_TIMEOUT)
            except Exception:
                await channel.close()
                err = f"failed to connect to DRA plugin {info.name} at {endpoint}"
                await reg.NotifyRegistrationStatus(
                    pluginapi.reg_pb2.RegistrationStatus(plugin_registered=False, error=err), timeout=NOTIFY_TIMEOUT
                )
                raise
            if node not in self.nodes or not os.path.exists(path):
                await channel.close()
                return
            old = self.by_socket.pop(path, None)
            if old is not None:
                await old.close()
            client = DRAPluginClient(node, info.name, path, endpoint, version, channel, sig=sig)
            self.by_socket[path] = client
            loop = asyncio.get_running_loop()
            client.tasks = [loop.create_task(self._monitor(client)), loop.create_task(self._health(client))]
            await reg.NotifyRegistrationStatus(
                pluginapi.reg_pb2.RegistrationStatus(plugin_registered=True), timeout=NOTIFY_TIMEOUT
            )
        log.info("node %s: registered DRA plugin %s (%s) at %s", node, info.name, version, endpoint)
        self.hooks.plugin_registered(node, info.name)

    def _on_host(self, node: str, endpoint: str) -> str:
        """A plugin in a pod names its socket as the pod sees it, under the node's
        /var/lib/kubelet (a hostPath volume): that is the node's directory here."""
        path = endpoint[len("unix:") :] if endpoint.startswith("unix:") else endpoint
        if path.startswith(KUBELET_DIR + "/"):
            return str(self.root / node / path[len(KUBELET_DIR) + 1 :])
        return endpoint

    def _validate(self, info: pluginapi.reg_pb2.PluginInfo) -> str:
        if info.type != DRA_PLUGIN_TYPE:
            return f"plugin type {info.type!r} is not supported by this kubelet (only {DRA_PLUGIN_TYPE})"
        if not info.name:
            return "plugin name is empty"
        if not info.endpoint:
            return f"DRA plugin {info.name}: endpoint is empty"
        if not any(v in self.supported for v in info.supported_versions):
            return (
                f"none of the versions supported by the plugin ({', '.join(info.supported_versions)}) "
                f"are supported by the kubelet ({', '.join(self.supported)})"
            )
        return ""

    async def _drop(self, path: str, notify: bool = True, replaced: bool = False) -> None:
        c = self.by_socket.get(path)
        if c is None or (replaced and path in self.pending):
            return
        del self.by_socket[path]
        await c.close()
        log.info("node %s: DRA plugin %s deregistered", c.node, c.driver)
        if notify:
            self.hooks.device_health(c.node, c.driver, None)
            if c.driver not in self.plugins(c.node):
                self.hooks.plugin_unusable(c.node, c.driver)

    async def _monitor(self, c: DRAPluginClient) -> None:
        """A plugin whose connection fails is unusable until it reconnects."""
        import grpc

        state = c.channel.get_state(try_to_connect=True)
        while True:
            await c.channel.wait_for_state_change(state)
            state = c.channel.get_state(try_to_connect=True)
            if state in (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN) and c.usable:
                c.usable = False
                if c.driver not in self.plugins(c.node):
                    self.hooks.plugin_unusable(c.node, c.driver)
            elif state == grpc.ChannelConnectivity.READY and not c.usable:
                c.usable = True
                self.hooks.plugin_registered(c.node, c.driver)

    async def _health(self, c: DRAPluginClient) -> None:
        """Follow the plugin's NodeWatchResources stream while it is registered."""
        import grpc

        stub = pluginapi.health_grpc.DRAResourceHealthStub(c.channel)
        while True:
            try:
                async for resp in stub.NodeWatchResources(pluginapi.health_pb2.NodeWatchResourcesRequest()):
                    self.hooks.device_health(
                        c.node,
                        c.driver,
                        [
                            (d.device.pool_name, d.device.device_name, health_name(d.health), d.message)
                            for d in resp.devices
                        ],
                    )
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                    return  # the plugin does not report health
            self.hooks.device_health(c.node, c.driver, None)  # upstream clears on stream exit
            await c.channel.channel_ready()
