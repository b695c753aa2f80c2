"""The simulated cluster behind the API: the profile's kubelets, drivers, the fabric
controller and the node lifecycle controller, and the operations that change them at
run time (apply a profile, device health, stop/start a kubelet)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from mockkube import drivers as driver_registry
from mockkube.config.profile import Profile, parse_duration
from mockkube.drivers.base import Driver
from mockkube.drivers.fpga import FabricController, FPGADriver
from mockkube.drivers.publisher import Publisher
from mockkube.kubelet import node as nodes
from mockkube.kubelet.images import lookup
from mockkube.kubelet.manager import KubeletManager
from mockkube.kubelet.nodelifecycle import NodeLifecycleController
from mockkube.kubelet.plugins import PluginWatcher
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.kubelet.runtime.process import ContainerState, ProcessRuntime
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.cluster")

# Resources -> runtime, so HTTP handlers find the cluster of the server they belong to.
_RUNTIMES: dict[int, "ClusterRuntime"] = {}


def runtime_for(resources: object) -> "ClusterRuntime | None":
    return _RUNTIMES.get(id(resources))


def _key(server: object) -> int:
    """A server's runtime is found by its ``resources``; a kubelet shard process has none."""
    return id(getattr(server, "resources", server))


def shard_of(node: str, shards: int) -> int:
    """The kubelet shard (``mockkube kubelets --shard I/M``) that simulates ``node``: a stable
    hash of its name (the same in every process and run)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(node.encode(), digest_size=8).digest(), "big") % shards


# a process pod's hostPaths that are its node's own: (path on the node, directory under ROOT/NODE)
NODE_PATHS = (("/var/lib/kubelet", ""), ("/var/run/cdi", "cdi"), ("/run/cdi", "cdi"), ("/etc/cdi", "cdi"))
FAULT_EXPIRY_INTERVAL = 0.25  # seconds between checks for cluster faults past their end


class ClusterRuntime:
    def __init__(self, server: "Server") -> None:
        self.server = server
        self.clock = server.clock
        self.client = server.client("kubelet")
        self.drivers: dict[str, Driver] = {}
        self.publisher = Publisher(server.client("dra-driver"))
        self.kubelet = KubeletManager(self.client, self.clock, self.drivers)
        self.service_proxy = None  # runtime/services.py, with process nodes
        gates = getattr(server, "feature_gates", None)
        # KEP-5729: a claim reserved for the pod's PodGroup is the pod's to use
        self.kubelet.workload_claims = gates is not None and gates.enabled("DRAWorkloadResourceClaims")
        # `mockkube kubelets --shard I/M`: only the nodes whose shard is I, simulated containers
        # unless the profile asks for processes, and the cluster-wide parts (device classes,
        # the fabric, the control plane, the node lifecycle controller) left to shard 0 or to
        # the server
        self.shard: tuple[int, int] | None = getattr(server, "shard", None)
        self.kubelet.process_when_asked = self.shard is not None
        # a shard's nodes advertise where their kubelet API listens (kubeletserver.py)
        self.kubelet.endpoint = getattr(server, "kubelet_endpoint", None)
        self.lifecycle = NodeLifecycleController(server.client("kube-controller-manager"), self.clock)
        self.fabric: FabricController | None = None
        self.fabric_pools: list[dict] = []
        self.started = False
        self.plugin_root: Path | None = None
        self._temp_root = False
        self.processes: dict[tuple[str, str], subprocess.Popen] = {}  # (node, driver) -> out-of-process plugin
        self._expiry: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the components' loop, once started
        self._proxy_task: asyncio.Task | None = None
        self._attaching: set[asyncio.Task] = set()

    # -- lifecycle ------------------------------------------------------------------
    async def start(self, profile: Profile) -> None:
        self._plugin_setup(profile.kubelet)
        self.apply(profile)
        if profile.control_plane:
            self._control_plane()
        await self.kubelet.start()
        if self.shard is None:
            await self.lifecycle.start()
        self._loop = asyncio.get_running_loop()
        self.server.exec_sandbox = self.exec_sandbox  # exec into simulated containers (streaming.py)
        if self.fabric is not None:
            await self.fabric.start()
        self.started = True
        _RUNTIMES[_key(self.server)] = self
        faults = getattr(self.server, "faults", None)
        metrics = getattr(self.server, "metrics", None)
        if metrics is not None:
            self.kubelet.prepares = metrics.counter(
                "mockkube_claim_prepares_total",
                "ResourceClaims the simulated kubelets prepared (NodePrepareResources), by result (mockkube).",
                ["result"],
            )
        if faults is not None:
            self.kubelet.faults = faults
            faults.on_apply, faults.on_revert = self._apply_fault, self._revert_fault
            self._expiry = asyncio.get_running_loop().call_later(FAULT_EXPIRY_INTERVAL, self._expire_faults)

    async def exec_sandbox(self, pod: dict, container: str) -> "ContainerState | None":
        """(On the API server's loop.) Where an exec into a simulated container runs: a sandbox
        of the process runtime when the pod's node runs processes, else None (mockkube's
        shell). SandboxError when it cannot be made."""
        sim = self.kubelet.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        loop = self._loop
        if sim is None or loop is None:
            return None

        async def make() -> "ContainerState | None":
            if not self.kubelet.runs_processes(sim):
                return None
            procs = self.kubelet.process_runtime()
            return await procs.exec_sandbox(pod, container) if procs is not None else None

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(make(), loop))

    async def _service_proxy(self) -> None:
        """Services for process pods (runtime/services.py), started with the process runtime."""
        if self.service_proxy is not None:
            return
        procs = self.kubelet.process
        if procs is None:
            return
        from mockkube.kubelet.runtime.services import ServiceProxy

        self.service_proxy = ServiceProxy(
            self.server.store, self.server.client("kube-proxy"), procs.refresh_hosts, lambda: procs.api
        )
        procs.service_hosts = self.service_proxy.hosts
        proxy = self.service_proxy
        procs.on_network = lambda uid, pid: self._attach(proxy, uid, pid)
        procs.on_network_end = proxy.detach
        if hasattr(self.server, "service_fallback"):  # admission webhooks reach their Service here
            self.server.service_fallback = lambda ns, name: (
                (proxy.addresses[(ns, name)], 0) if (ns, name) in proxy.addresses else None
            )
        await self.service_proxy.start()
        from mockkube.kubelet.runtime import process

        for uid in list(procs.mine):  # pods whose network came up before the proxy
            pp = process.pod(uid)
            if pp is not None and pp.pause is not None and pp.api_server is not None:
                await proxy.attach(uid, pp.pause.child_pid)

    def _attach(self, proxy, uid: str, pid: int) -> None:
        """A pod's network is up: the Services' listeners in it (a task of this runtime's)."""
        task = asyncio.get_running_loop().create_task(proxy.attach(uid, pid))
        self._attaching.add(task)
        task.add_done_callback(self._attaching.discard)

    def _control_plane(self) -> None:
        """kind's static pods and kube-system add-ons (mockkube/kubelet/controlplane.py)."""
        from mockkube.config.profile import CONTROL_PLANE_NODE
        from mockkube.kubelet import controlplane

        sim = self.kubelet.nodes.get(CONTROL_PLANE_NODE)
        if sim is None or not sim.uid:
            return
        controlplane.install(
            self.server.client("kubeadm"),
            self.client,
            sim.uid,
            nodes.node_ip(sim.spec.index),
            self.server.ca_certificate(),
            self.server.url,
        )

    def _expire_faults(self) -> None:
        """Undo cluster faults past their end time (also done at every clock resync)."""
        faults = self.server.faults
        if len(faults):
            faults.expire()
        self._expiry = asyncio.get_running_loop().call_later(FAULT_EXPIRY_INTERVAL, self._expire_faults)

    # -- injected cluster faults (mockkube/machinery/faults.py) -------------------------------------
    def _apply_fault(self, fault) -> None:
        spec = fault.spec
        if fault.kind in ("node-notready", "kubelet-restart"):
            if spec["node"] not in self.kubelet.nodes:
                raise KeyError(f"node {spec['node']!r} is not simulated")
            self.stop_kubelet(spec["node"])
        elif fault.kind == "device-unhealthy":
            self.set_health(spec["driver"], spec["pool"], spec["device"], False, spec.get("effect"))
        elif fault.kind == "driver-crash":
            proc = self.processes.get((spec["node"], spec["driver"]))
            if proc is None or proc.poll() is not None:
                raise KeyError(
                    f"driver {spec['driver']!r} does not run out of process on node {spec['node']!r} "
                    f"(outOfProcess: true in the profile)"
                )
            proc.kill()

    def _revert_fault(self, fault) -> None:
        spec = fault.spec
        if fault.kind in ("node-notready", "kubelet-restart") and spec["node"] in self.kubelet.nodes:
            self.start_kubelet(spec["node"])
        elif fault.kind == "device-unhealthy":
            try:
                self.set_health(spec["driver"], spec["pool"], spec["device"], True)
            except KeyError:
                pass
        elif fault.kind == "driver-crash":
            sim = self.kubelet.nodes.get(spec["node"])
            proc = self.processes.get((spec["node"], spec["driver"]))
            if proc is not None:
                proc.wait(5)  # killed: reap it
            if sim is not None and spec["driver"] in sim.spec.drivers and self.started:
                self._spawn_driver(spec["node"], spec["driver"], sim.spec.drivers[spec["driver"]])

    async def stop(self) -> None:
        _RUNTIMES.pop(_key(self.server), None)
        faults = getattr(self.server, "faults", None)
        if faults is not None and faults.on_apply == self._apply_fault:
            faults.on_apply = faults.on_revert = None
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self.fabric is not None:
            await self.fabric.stop()
        if self.shard is None:
            await self.lifecycle.stop()
        if self._proxy_task is not None and not self._proxy_task.done():
            self._proxy_task.cancel()
        for task in list(self._attaching):
            task.cancel()
        self._proxy_task = None
        if self.service_proxy is not None:
            await self.service_proxy.stop()
            self.service_proxy = None
            if hasattr(self.server, "service_fallback"):
                self.server.service_fallback = None
        await self.kubelet.stop()
        await self._stop_processes()
        self.started = False

    # -- kubelet plugin sockets ---------------------------------------------------------
    def _plugin_setup(self, cfg: dict) -> None:
        """Every node gets ROOT/NODE/plugins_registry and ROOT/NODE/plugins, watched by its kubelet."""
        if cfg.get("rootDir"):
            self.plugin_root = Path(cfg["rootDir"]).absolute()
        else:  # short: unix socket paths are limited to 107 bytes
            self.plugin_root, self._temp_root = Path(tempfile.mkdtemp(prefix="mockkube-")), True
            # the server removes it when it stops (~0.25 s per 1,000 nodes, beside the shutdown)
            self.server.temp_dirs.append(str(self.plugin_root))
        self.kubelet.plugins = PluginWatcher(self.plugin_root, self.kubelet)
        if "pluginWipingDelay" in cfg:
            self.kubelet.wiping_delay = parse_duration(cfg["pluginWipingDelay"])
        if cfg.get("runToCompletion") is not None:
            self.kubelet.run_to_completion = parse_duration(cfg["runToCompletion"])
        if cfg.get("runPrograms") is not None:
            log.warning("kubelet.runPrograms has no effect: the process runtime (the default) runs every program")
        if cfg.get("runtime"):
            self.kubelet.runtime = cfg["runtime"]
        self._process_runtime(cfg)
        entrypoints = image_map(cfg.get("images") or {})[0]
        self.kubelet.mapped_image = lambda image: lookup(entrypoints, image) is not None
        if cfg.get("healthTaintEffect"):
            self.kubelet.health_taint_effect = cfg["healthTaintEffect"]

    def _process_runtime(self, cfg: dict) -> None:
        """The process runtime the nodes with ``runtime: process`` use, made when a pod first
        needs it (it starts nothing by itself; its module is not imported before)."""
        if self.kubelet.process is not None or self.kubelet.process_factory is not None:
            return
        self.kubelet.process_factory = lambda: self._make_process_runtime(cfg)

    def _make_process_runtime(self, cfg: dict) -> "ProcessRuntime":
        from urllib.parse import urlsplit

        from mockkube.kubelet.runtime.process import ProcessRuntime

        assert self.plugin_root is not None
        plurals = {"ConfigMap": "configmaps", "Secret": "secrets", "ServiceAccount": "serviceaccounts"}

        def lookup(kind: str, namespace: str, name: str) -> dict | None:
            try:
                return self.client.get(self.client.rt(plurals[kind]), namespace, name)
            except errors.APIError:
                return None

        root = self.plugin_root

        def endpoint() -> tuple[str, str, bytes]:
            pods_endpoint = getattr(self.server, "in_cluster_endpoint", None)
            if pods_endpoint is not None:
                return pods_endpoint()
            url = urlsplit(getattr(self.server, "url", "") or "")
            return url.hostname or "10.96.0.1", str(url.port or 443), b""

        def node_path(node: str, path: str) -> str:
            """A node's /var/lib/kubelet is ROOT/NODE (its plugins_registry and plugins), its
            CDI directories ROOT/NODE/cdi; other host paths are the host's."""
            p = os.path.normpath(path) if path else path
            for prefix, target in NODE_PATHS:
                if p == prefix or p.startswith(prefix + "/"):
                    return str(root / node / target) + p[len(prefix) :]
            return path

        images, roots = image_map(cfg.get("images") or {})
        self._proxy_task = asyncio.get_running_loop().create_task(self._service_proxy())  # once it is set
        return ProcessRuntime(
            root / "pods",
            self.clock,
            self.kubelet.queue.add,
            lookup,
            self._token,
            endpoint,
            network=cfg.get("network") or default_network(),
            node_path=node_path,
            cdi_dirs=lambda node: [str(root / node / "cdi")],
            images=images,
            roots=roots,
        )

    def _token(self, pod: dict, audience: str, expiration: int) -> str:
        """A bound ServiceAccount token for the pod, as the kubelet's token manager asks one:
        from the server's token issuer in its process, through the TokenRequest API in a
        kubelet shard's (``token_request``)."""
        tokens = getattr(self.server, "sa_tokens", None)
        request = tokens.request if tokens is not None else getattr(self.server, "token_request", None)
        if request is None:
            return ""
        m = pod["metadata"]
        spec: dict = {
            "expirationSeconds": max(expiration, 600),
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": m["name"], "uid": m["uid"]},
        }
        if audience:
            spec["audiences"] = [audience]
        sa = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        try:
            return request(m.get("namespace", "default"), sa, {"spec": spec})["status"]["token"]
        except Exception as e:  # noqa: BLE001 - no ServiceAccount (yet): the container gets no token
            log.info("pod %s/%s: no ServiceAccount token: %s", m.get("namespace"), m["name"], e)
            return ""

    def plugin_dirs(self, node: str) -> dict:
        """Where a kubelet plugin for ``node`` puts its sockets."""
        w = self.kubelet.plugins
        if node not in self.kubelet.nodes or w is None:
            raise KeyError(node)
        return {
            "node": node,
            "registry": str(w.registry_dir(node)),
            "plugins": str(w.plugins_dir(node)),
            "registered": sorted(w.plugins(node)),
        }

    def _spawn_driver(self, node: str, driver: str, config: dict) -> None:
        """``mockkube driver run`` for a built-in driver running out of process."""
        old = self.processes.get((node, driver))
        if old is not None and old.poll() is None:
            return
        assert self.plugin_root is not None
        kc = self.plugin_root / "kubeconfig"
        if not kc.exists():
            self.server.write_kubeconfig(kc)
        w = self.kubelet.plugins
        log_file = open(self.plugin_root / node / f"{driver}.log", "ab")
        self.processes[(node, driver)] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mockkube",
                "driver",
                "run",
                driver,
                "--node",
                node,
                "--registry",
                str(w.registry_dir(node)),
                "--plugins",
                str(w.plugins_dir(node)),
                "--kubeconfig",
                str(kc),
                "--config",
                json.dumps(config),
                "--settings",
                json.dumps(self.drivers[driver].settings),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
        log_file.close()

    async def _stop_processes(self) -> None:
        for p in self.processes.values():
            if p.poll() is None:
                p.terminate()
        for p in self.processes.values():
            try:
                await asyncio.to_thread(p.wait, 10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                p.kill()
        self.processes.clear()

    # -- profile --------------------------------------------------------------------
    def apply(self, profile: Profile) -> dict:
        """Add or update the profile's drivers, device classes, nodes and slices."""
        for name in profile.drivers():
            settings = profile.driver_settings.get(name, {})
            if name not in self.drivers:
                self.drivers[name] = driver_registry.make(name, settings)
            else:
                self.drivers[name].settings.update(settings)
            if self.drivers[name].settings.get("outOfProcess"):
                self.kubelet.external_drivers.add(name)
        singletons = self.shard is None or self.shard[0] == 0
        if profile.device_classes and singletons:
            self._device_classes(profile.drivers())
        for spec in profile.nodes:
            if self.shard is not None and shard_of(spec.name, self.shard[1]) != self.shard[0]:
                continue  # another shard's
            sim = self.kubelet.register(spec)
            if not sim.uid:
                continue  # its kubelet could not register it (logged)
            owner = nodes.owner_ref(spec.name, sim.uid)
            for dname, cfg in spec.drivers.items():
                if dname in self.kubelet.external_drivers:
                    self._spawn_driver(spec.name, dname, cfg)
                    continue
                specs = self.drivers[dname].publish(spec, cfg)
                if specs:
                    self.publisher.sync(dname, spec.name, specs, owner)
        if profile.control_plane and self.started:  # at start, once the kubelets run
            self._control_plane()
        if profile.fabric and singletons:
            names = {f["pool"] for f in profile.fabric}
            self.fabric_pools = [f for f in self.fabric_pools if f["pool"] not in names] + profile.fabric
            self._publish_fabric()
            self._ensure_fabric()
        return {
            "nodes": [n.name for n in profile.nodes],
            "drivers": profile.drivers(),
            "fabricPools": [f["pool"] for f in profile.fabric],
        }

    def _publish_fabric(self) -> None:
        drv = self.drivers.get(FPGADriver.name)
        if isinstance(drv, FPGADriver):
            for pool, specs in drv.publish_shared(self.fabric_pools):
                self.publisher.sync(drv.name, pool, specs)

    def _ensure_fabric(self) -> None:
        drv = self.drivers.get(FPGADriver.name)
        if self.fabric is None and isinstance(drv, FPGADriver):
            self.fabric = FabricController(
                self.server.client("fpga-fabric-controller"),
                self.clock,
                drv,
                on_fault=lambda pool, dev: self.set_health(drv.name, pool, dev, False),
            )
            if self.started:
                import asyncio

                asyncio.get_running_loop().create_task(self.fabric.start())

    def _device_classes(self, names: list[str]) -> None:
        rt = self.client.rt("deviceclasses", "resource.k8s.io")
        for name in names:
            for dc in self.drivers[name].device_classes():
                if self.client.get(rt, "", dc["metadata"]["name"]) is None:
                    try:
                        self.client.create(rt, dc)
                    except errors.APIError as e:
                        if e.code != 409:
                            raise

    # -- run-time operations ----------------------------------------------------------
    def set_health(self, driver: str, pool: str, device: str, healthy: bool, effect: str | None = None) -> bool:
        """Mark a device (un)healthy; republishes the pool with or without the device taint.
        ``pool`` is the node name for node-local devices."""
        drv = self.drivers.get(driver)
        if drv is None:
            raise KeyError(f"driver {driver!r} is not running")
        if driver in self.kubelet.external_drivers:
            raise KeyError(
                f"driver {driver!r} runs out of process: its kubelet plugin reports device health "
                f"over the DRAResourceHealth stream"
            )
        if not drv.set_health(pool, device, healthy, effect):
            return False
        sim = self.kubelet.nodes.get(pool)
        if sim is not None and driver in sim.spec.drivers:
            self.publisher.sync(
                driver, pool, drv.publish(sim.spec, sim.spec.drivers[driver]), nodes.owner_ref(pool, sim.uid)
            )
        elif isinstance(drv, FPGADriver):
            self._publish_fabric()
        else:
            raise KeyError(f"no pool {pool!r} for driver {driver!r}")
        return True

    def stop_kubelet(self, node: str) -> None:
        self.kubelet.stop_node(node)

    def start_kubelet(self, node: str) -> None:
        self.kubelet.start_node(node)

    def resync(self) -> None:
        """Re-run every time-based check now (tests that advance the injectable clock)."""
        faults = getattr(self.server, "faults", None)
        if faults is not None:
            faults.expire()  # cluster faults past their durationSeconds are undone
        self.kubelet.resync()
        self.lifecycle.resync()
        if self.fabric is not None:
            self.fabric.resync()


def image_map(images: dict) -> tuple[dict[str, list[str]], dict[str, str]]:
    """``kubelet.images`` read once: image -> its entrypoint (a program, a command line, or a
    root filesystem's command), and image -> its root filesystem (a directory)."""
    entrypoints: dict[str, list[str]] = {}
    roots: dict[str, str] = {}
    for image, entry in images.items():
        if isinstance(entry, dict):
            roots[image] = os.path.abspath(entry["root"])
            if entry.get("command"):
                entrypoints[image] = [str(a) for a in entry["command"]]
        elif isinstance(entry, str) and os.path.isdir(entry):
            roots[image] = os.path.abspath(entry)
        else:
            entrypoints[image] = [entry] if isinstance(entry, str) else [str(a) for a in entry]
    return entrypoints, roots


def default_network() -> str:
    """The process runtime's pod network unless ``kubelet.network`` says: a namespace per pod
    where the server may make and enter one (root), else the host's."""
    return "pod" if os.geteuid() == 0 else "host"
