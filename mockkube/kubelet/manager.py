"""The kubelet simulators of all nodes, driven by one work queue (one timer heap for
every lease renewal and container transition, so an idle node costs a few objects).

Per node it registers the Node, renews the Lease, admits pods bound to it, prepares
their ResourceClaims through the node's drivers before any container starts, moves pods
through their phases (``lifecycle.compute_status``), unprepares claims when a pod
terminates and completes graceful deletion.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Hashable

from mockkube.client.client import Client, clone
from mockkube.client.informer import Controller, Informer
from mockkube.client.recorder import event_for, recorder_for
from mockkube.config.profile import NodeSpec
from mockkube.dra import workloadclaims as wlc
from mockkube.kubelet import admission, lifecycle
from mockkube.kubelet import node as nodes
from mockkube.kubelet import plugins as pluginwatch
from mockkube.kubelet.images import pod_runs_programs, why_simulated
from mockkube.machinery import errors, meta
from mockkube.machinery.requestcontext import acting_as, set_user

if TYPE_CHECKING:
    from mockkube.drivers.base import Driver, Prepared
    from mockkube.kubelet.runtime.process import ProcessRuntime

log = logging.getLogger("mockkube.kubelet")

TERMINAL = ("Succeeded", "Failed")
DEFAULT_WIPING_DELAY = 30.0  # upstream's defaultWipingDelay
PREPARE_PENDING = "\0pending"  # a NodePrepareResources call is under way


@dataclass
class PreparedClaim:
    namespace: str
    name: str
    uid: str
    pods: set[str] = field(default_factory=set)
    devices: list[tuple[str, "Prepared"]] = field(default_factory=list)  # (driver, prepared)
    remote: set[str] = field(default_factory=set)  # drivers prepared over gRPC


def _container_devices(pod: dict, container: dict, prepared: list[PreparedClaim]) -> list[dict]:
    """The prepared devices one container gets, as the kubelet hands them out: a claim the
    container lists in resources.claims (only the named request, if any), and from the
    KEP-5004 special claim exactly the requests pod.status.extendedResourceClaimStatus
    maps to this container."""
    status = pod.get("status") or {}
    ext = status.get("extendedResourceClaimStatus") or {}
    by_claim = {
        rc.get("resourceClaimName"): rc.get("name")
        for rc in (pod.get("spec") or {}).get("resourceClaims") or ()
        if rc.get("resourceClaimName")
    }
    by_claim.update({s.get("resourceClaimName"): s.get("name") for s in status.get("resourceClaimStatuses") or ()})
    refs: dict[str, set[str] | None] = {}
    for rc in (container.get("resources") or {}).get("claims") or ():
        name = rc.get("name", "")
        if rc.get("request") and refs.get(name, set()) is not None:
            refs.setdefault(name, set()).add(rc["request"])
        else:
            refs[name] = None  # the whole claim
    out = []
    for pc in prepared:
        if pc.name == ext.get("resourceClaimName"):
            wanted: set[str] | None = {
                m.get("requestName", "")
                for m in ext.get("requestMappings") or ()
                if m.get("containerName") == container.get("name")
            }
        elif by_claim.get(pc.name) in refs:
            wanted = refs[by_claim[pc.name]]
        else:
            continue
        devices = [(d, p) for d, p in pc.devices if wanted is None or p.request.split("/")[0] in wanted]
        if not devices:
            continue
        out.append(
            {
                "claimName": pc.name,
                "claimNamespace": pc.namespace,
                "claimResources": [
                    {
                        "driverName": d,
                        "poolName": p.pool,
                        "deviceName": p.device,
                        "cdiDevices": [{"name": i} for i in p.cdi_device_ids],
                    }
                    for d, p in devices
                ],
            }
        )
    return out


@dataclass
class PodRun:
    uid: str
    key: tuple
    admitted_at: float
    pod: dict
    sandbox_at: float | None = None
    ip: str = ""
    claims: list[str] = field(default_factory=list)
    stop_at: float | None = None
    terminal: bool = False
    last_prepare_error: str = ""
    prepare_failures: int = 0


@dataclass
class NodeSim:
    spec: NodeSpec
    running: bool = True
    uid: str = ""
    ip_seq: int = 0
    runs: dict[str, PodRun] = field(default_factory=dict)
    prepared: dict[str, PreparedClaim] = field(default_factory=dict)
    lease: dict | None = None  # the Lease as this kubelet last wrote it (upstream's latestLease)


def _renewed(lease: dict, holder: str, now: float) -> dict:
    """``lease`` renewed at ``now`` by ``holder`` (a copy, without managedFields: a PUT that
    omits them keeps the stored ones)."""
    new = clone(lease)
    new["metadata"].pop("managedFields", None)
    new["spec"]["renewTime"] = meta.rfc3339_micro(now)
    new["spec"]["holderIdentity"] = holder
    new["spec"]["leaseDurationSeconds"] = nodes.LEASE_DURATION
    return new


class KubeletManager(Controller):
    name = "kubelet"

    def __init__(
        self,
        client: Client,
        clock: Callable[[], float],
        drivers: dict[str, "Driver"],
        plugin_root: Path | None = None,
        wiping_delay: float = DEFAULT_WIPING_DELAY,
        health_taint_effect: str = "NoSchedule",
    ) -> None:
        super().__init__()
        self._node_users: dict[str, dict] = {}
        self.client = client
        self.clock = clock
        self.drivers = drivers
        self.wiping_delay = wiping_delay
        self.external_drivers: set[str] = set()  # built-in drivers running out of process
        self.health_taint_effect = health_taint_effect
        self.workload_claims = False  # DRAWorkloadResourceClaims: claims reserved for a PodGroup
        # how long a restartPolicy Never/OnFailure container runs without an exit-after annotation
        self.run_to_completion: float | None = lifecycle.DEFAULT_RUN_TO_COMPLETION
        # kubelet.runtime: the nodes' container runtime unless a node says otherwise; None (the
        # default): the process runtime where this machine can make a sandbox, else simulated
        self.runtime: str | None = None
        # a kubelet shard process (docs/scaling.md): containers run as processes only where the
        # profile asks for it (kubelet.runtime: process), not by default where a sandbox works
        self.process_when_asked = False
        # node -> (address, port) of the kubelet API its kubelet serves (a kubelet shard's:
        # kubeletserver.py), which its Node advertises; None: the API server answers for them
        self.endpoint: Callable[[str], tuple[str, int] | None] | None = None
        self._sandboxes: str | None = None  # why this machine cannot make sandboxes ("": it can), once probed
        self.mapped_image: Callable[[str], bool] = lambda image: False  # kubelet.images gives it an entrypoint
        self.process: "ProcessRuntime | None" = None  # the process runtime (runtime/process.py), once made
        self.process_factory: "Callable[[], ProcessRuntime] | None" = None  # makes it (set by the cluster)
        self.plugins = pluginwatch.PluginWatcher(plugin_root, self) if plugin_root is not None else None
        self.faults = None  # mockkube.machinery.faults.Faults: injected prepare/unprepare failures, slow drivers
        self.prepares = None  # mockkube_claim_prepares_total{result}, set by the cluster runtime
        # (node, claim uid) -> the NodePrepareResources call under way or just finished
        self.ops: dict[tuple[str, str], asyncio.Task] = {}
        self.health: dict[tuple[str, str, str, str], str] = {}  # (node, driver, pool, device) -> health
        self._bg: set[asyncio.Task] = set()
        self.slices_rt = client.rt("resourceslices", "resource.k8s.io")
        # mockkube's device-health taints are DeviceTaintRules: none while they are not served
        served = client.served("devicetaintrules", "resource.k8s.io")
        self.rules_rt = client.rt("devicetaintrules", "resource.k8s.io") if served else None
        self.nodes: dict[str, NodeSim] = {}
        self.by_key: dict[tuple, tuple[str, str]] = {}
        self.waiting: dict[tuple[str, str], set[tuple]] = {}
        self.pods_rt = client.rt("pods")
        self.nodes_rt = client.rt("nodes")
        self.leases_rt = client.rt("leases", "coordination.k8s.io")
        self.claims_rt = client.rt("resourceclaims", "resource.k8s.io")
        self.events_rt = client.rt("events")
        pods = Informer(client.store, self.pods_rt)
        pods.add_handler(self._on_pod)
        claims = Informer(client.store, self.claims_rt)
        claims.add_handler(self._on_claim)
        node_objs = Informer(client.store, self.nodes_rt)
        node_objs.add_handler(self._on_node)
        self.informers += [pods, claims, node_objs]

    async def start(self) -> None:
        await super().start()
        if self.plugins is not None:
            await self.plugins.start()

    async def stop(self) -> None:
        if self.process is not None:
            self.process.stop_all()  # a reset or the server's stop: no container outlives it
        if self.plugins is not None:
            await self.plugins.stop()
        for t in list(self._bg) + list(self.ops.values()):
            t.cancel()
        await super().stop()

    def _spawn(self, coro) -> asyncio.Task:
        t = asyncio.get_running_loop().create_task(coro)
        self._bg.add(t)
        t.add_done_callback(self._bg.discard)
        return t

    def runs_processes(self, sim: NodeSim) -> bool:
        """Whether the node's kubelet runs containers as processes (``kubelet.runtime``)."""
        runtime = sim.spec.runtime or self.runtime
        if self.process_when_asked and runtime != "process":  # a kubelet shard process
            return False
        if runtime is not None:
            return runtime == "process"
        if self._sandboxes is None:  # the default: process, where a sandbox can be made
            from mockkube.kubelet.runtime import sandbox

            self._sandboxes = sandbox.probe()
            if self._sandboxes:
                log.warning(
                    "the process runtime cannot run here (%s): containers are simulated "
                    "(set kubelet.runtime to silence this)",
                    self._sandboxes,
                )
        return not self._sandboxes

    def process_runtime(self) -> "ProcessRuntime | None":
        if self.process is None and self.process_factory is not None:
            self.process = self.process_factory()
        return self.process

    def _processes(self, sim: NodeSim, pod: dict | None = None) -> "ProcessRuntime | None":
        """The process runtime, when it runs this pod: on a node whose kubelet runs
        containers as processes, a pod one of whose containers runs a program of its own (a
        pod with none is simulated; exec into it gets a sandbox)."""
        if not self.runs_processes(sim):
            return None
        if pod is not None and not pod_runs_programs(pod, self.mapped_image):
            return None  # not even made for pods that run nothing (kind's add-ons, large simulations)
        return self.process_runtime()

    # -- nodes ------------------------------------------------------------------
    def register(self, spec: NodeSpec) -> NodeSim:
        """Create or refresh the Node and its Lease now, as the node's kubelet registers itself
        (``system:node:<name>``); start renewing. A kubelet that may not register (RBAC
        without Node authorization) logs it, as upstream's, and its node stays away."""
        sim = self.nodes.get(spec.name) or NodeSim(spec)
        sim.spec, sim.running = spec, True
        self.nodes[spec.name] = sim
        from mockkube.rules.identities import node_user

        try:
            with acting_as(node_user(spec.name)):
                return self._register(sim, spec)
        except errors.APIError as e:
            if e.code != 403:
                raise
            log.error("node %s: unable to register node with API server: %s", spec.name, e.message)
            return sim

    def _register(self, sim: NodeSim, spec: NodeSpec) -> NodeSim:
        now = self.clock()
        endpoint = self.endpoint(spec.name) if self.endpoint is not None else None
        live = self.client.get(self.nodes_rt, "", spec.name)
        if live is None:
            obj = self.client.create(self.nodes_rt, nodes.node_object(spec, now, endpoint))
        else:
            want = nodes.node_object(spec, now, endpoint)
            new = clone(live)
            new["metadata"].setdefault("labels", {}).update(want["metadata"]["labels"])
            new["spec"].update(want["spec"])
            obj = self.client.update(self.nodes_rt, new)
            new = clone(obj)
            new["status"] = nodes.node_status(spec, now, live.get("status"), endpoint)
            obj = self.client.update_status(self.nodes_rt, new)
        sim.uid = obj["metadata"]["uid"]
        if self.plugins is not None:
            self.plugins.add_node(spec.name)
        self._renew(spec.name)
        self.queue.add_after(("status", spec.name), nodes.STATUS_REPORT_INTERVAL)
        return sim

    def stop_node(self, name: str) -> None:
        """The kubelet stops: no more lease renewals or status updates (the Node stays)."""
        if name in self.nodes:
            self.nodes[name].running = False
            if self.plugins is not None:
                self.plugins.remove_node(name)

    def start_node(self, name: str) -> None:
        sim = self.nodes[name]
        sim.running = True
        if self.plugins is not None:
            self.plugins.add_node(name)
            self._spawn(self._wipe_stale(name))
        self.queue.add(("status", name))
        self.queue.add(("lease", name))
        for r in list(sim.runs.values()):
            self.queue.add(r.key)

    def _renew(self, name: str) -> None:
        sim = self.nodes.get(name)
        if sim is None or not sim.running:
            return
        now = self.clock()
        renewed = None
        if sim.lease is not None:
            # as upstream's lease controller: renew the Lease as last written, without a GET
            # (nothing else writes it), so a kubelet shard follows no Leases
            try:
                renewed = self.client.update(self.leases_rt, _renewed(sim.lease, name, now))
            except errors.APIError as e:
                if e.code not in (404, 409):
                    raise
                sim.lease = None  # changed or gone meanwhile: read it again, as ensureLease
        if renewed is None:
            live = self.client.get(self.leases_rt, "kube-node-lease", name)
            if live is None:
                renewed = self.client.create(self.leases_rt, nodes.lease_object(name, sim.uid, now))
            else:
                renewed = self.client.update(self.leases_rt, _renewed(live, name, now))
        sim.lease = renewed
        self.queue.add_after(("lease", name), nodes.RENEW_INTERVAL)

    def _post_status(self, name: str) -> None:
        sim = self.nodes.get(name)
        if sim is None or not sim.running:
            return
        live = self.client.get(self.nodes_rt, "", name)
        if live is not None:
            new = clone(live)
            new["status"] = dict(live.get("status") or {})
            new["status"]["conditions"] = nodes.conditions(
                True, self.clock(), (live.get("status") or {}).get("conditions")
            )
            self.client.update_status(self.nodes_rt, new)
        self.queue.add_after(("status", name), nodes.STATUS_REPORT_INTERVAL)

    # -- informer handlers --------------------------------------------------------
    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        node = (obj.get("spec") or {}).get("nodeName")
        if node and node in self.nodes:
            self.queue.add(("pod", obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))

    def _on_node(self, typ: str, obj: dict, prev: dict | None) -> None:
        """A deleted Node takes its process pods' containers with it (the machine is gone)."""
        sim = self.nodes.get(obj["metadata"]["name"])
        if typ == "DELETED" and sim is not None and self.process is not None:
            self.stop_node(sim.spec.name)  # its kubelet went with it
            for uid in list(sim.runs):
                self.process.remove(uid)

    def _on_claim(self, typ: str, obj: dict, prev: dict | None) -> None:
        ns = obj["metadata"].get("namespace", "")
        for key in self.waiting.pop((ns, obj["metadata"]["name"]), ()):
            self.queue.add(key)
        for ref in (obj.get("status") or {}).get("reservedFor") or ():
            if ref.get("resource") == "pods":
                key = ("pod", ns, ref.get("name", ""))
                if key in self.by_key:
                    self.queue.add(key)

    def resync(self) -> None:
        """Re-examine everything now (after a test advanced the injectable clock)."""
        for name in self.nodes:
            self.queue.add(("lease", name))
            self.queue.add(("status", name))
        for sim in self.nodes.values():
            for r in sim.runs.values():
                self.queue.add(r.key)

    # -- reconcile -----------------------------------------------------------------
    def identity(self) -> dict | None:
        return None  # each write acts as the node it is for (``_act_as``)

    def informer_identity(self) -> dict | None:
        return None  # every node's kubelet watches its own pods (the Node authorizer allows it)

    def _act_as(self, node: str) -> None:
        """Make the rest of this reconcile (and tasks it starts) act as ``system:node:<node>``."""
        user = self._node_users.get(node)
        if user is None:
            from mockkube.rules.identities import node_user

            user = self._node_users[node] = node_user(node)
        set_user(user)

    def reconcile(self, key: Hashable) -> None:
        kind = key[0]
        if kind != "pod":
            self._act_as(key[1])
        if kind == "lease":
            self._renew(key[1])
        elif kind == "status":
            self._post_status(key[1])
        elif kind == "pod":
            self._pod(key)
        elif kind == "wipe":
            self._wipe(key[1], key[2])

    def _pod(self, key: tuple) -> None:
        _, ns, name = key
        pod = self.client.get(self.pods_rt, ns, name)
        known = self.by_key.get(key)
        if pod is None or (known and known[1] != pod["metadata"].get("uid")):
            if known:
                self._forget(*known)
            if pod is None:
                return
        sim = self.nodes.get((pod.get("spec") or {}).get("nodeName", ""))
        if sim is None or not sim.running:
            return
        self._act_as(sim.spec.name)
        now = self.clock()
        uid = pod["metadata"]["uid"]
        run = sim.runs.get(uid)
        if pod["metadata"].get("deletionTimestamp"):
            self._deleting(sim, pod, run, key, now)
            return
        if run is None:
            if (pod.get("status") or {}).get("phase") in TERMINAL:
                return
            active = [r.pod for r in sim.runs.values() if not r.terminal]
            rejected = admission.admit(pod, sim.spec.allocatable, active, sim.spec.labels)
            if rejected:
                self._write_status(pod, {"phase": "Failed", "reason": rejected[0], "message": rejected[1]}, now)
                self._event(pod, sim, "Warning", rejected[0], rejected[1])
                return
            run = PodRun(uid, key, now, pod)
            sim.runs[uid] = run
            self.by_key[key] = (sim.spec.name, uid)
            self._adopt(sim, pod, run)
        run.pod = pod
        if run.terminal:
            return
        host_ip = nodes.node_ip(sim.spec.index)
        if run.sandbox_at is None:
            err = self._prepare(sim, pod, run, key)
            if err:
                self._write_status(pod, lifecycle.pending_status(pod, host_ip), now, run)
                if err == PREPARE_PENDING:
                    return
                # every failed sync records the event, as the kubelet's pod worker does; the
                # recorder's correlator makes the repeats one event whose count grows
                run.last_prepare_error = err
                self._event(
                    pod, sim, "Warning", "FailedPrepareDynamicResources", f"Failed to prepare dynamic resources: {err}"
                )
                # retried on the pod's next sync, with the pod worker's growing back-off
                self.queue.add_after(key, min(0.2 * 2**run.prepare_failures, 10.0))
                run.prepare_failures += 1
                return
            run.prepare_failures = 0
            run.sandbox_at = now
            if (pod.get("spec") or {}).get("hostNetwork"):
                run.ip = host_ip
            else:
                sim.ip_seq += 1
                run.ip = nodes.pod_ip(sim.spec.index, sim.ip_seq)
            if self._processes(sim, pod) is None:
                self._started_events(pod, sim, self.runs_processes(sim))
        procs = self._processes(sim, pod)
        if procs is not None:
            got = self._sync_processes(procs, sim, pod, run, key, now, host_ip)
            if got is None:
                return
            status, wake = got
        else:
            status, wake = lifecycle.compute_status(pod, run.sandbox_at, now, run.ip, host_ip, self.run_to_completion)
        self._resources_health(sim, pod, run, status)
        self._write_status(pod, status, now, run)
        if status["phase"] in TERMINAL:
            run.terminal = True
            self._unprepare(sim, run)
            if procs is None and self.process is not None:
                self.process.remove(run.uid)  # the sandbox exec made in a simulated pod
        elif wake is not None:
            self.queue.add_after(key, wake - now)

    def _adopt(self, sim: NodeSim, pod: dict, run: PodRun) -> None:
        """A pod already running on this node when the kubelet starts (a reset restored the
        settled cluster, whose kube-system pods run): keep its sandbox, start time and IP, as
        a restarted kubelet finds its containers still running. Pods with claims are
        prepared again instead."""
        status = pod.get("status") or {}
        if status.get("phase") != "Running" or not status.get("podIP") or not status.get("startTime"):
            return
        if (pod.get("spec") or {}).get("resourceClaims"):
            return
        started = [
            (c.get("state") or {}).get("running", {}).get("startedAt") for c in status.get("containerStatuses") or ()
        ]
        try:
            run.admitted_at = meta.parse_time(status["startTime"])
            run.sandbox_at = min([meta.parse_time(t) for t in started if t] or [run.admitted_at])
        except (TypeError, ValueError):
            return
        run.ip = status["podIP"]
        if not (pod.get("spec") or {}).get("hostNetwork"):
            sim.ip_seq += 1

    def _sync_processes(
        self, procs: "ProcessRuntime", sim: NodeSim, pod: dict, run: PodRun, key: tuple, now: float, host_ip: str
    ) -> tuple[dict, float | None] | None:
        """The process runtime's pod worker: its status and next wake, or None when a volume
        cannot be set up yet (FailedMount; retried with a growing delay)."""
        from mockkube.kubelet.runtime.volumes import VolumeError

        prepared = [pc for pc in (sim.prepared.get(cuid) for cuid in run.claims) if pc is not None]
        spec = pod.get("spec") or {}
        cdi_ids = {
            c["name"]: [
                d["name"]
                for claim in _container_devices(pod, c, prepared)
                for r in claim["claimResources"]
                for d in r["cdiDevices"]
            ]
            for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        }
        try:
            status, wake, events = procs.sync(pod, key, now, run.ip, host_ip, cdi_ids)
        except VolumeError as e:
            self._write_status(pod, lifecycle.pending_status(pod, host_ip), now, run)
            run.last_prepare_error = str(e)  # every failed sync records it; the correlator counts the repeats
            self._event(pod, sim, "Warning", "FailedMount", str(e))
            self.queue.add_after(key, min(0.5 * 2**run.prepare_failures, 30.0))
            run.prepare_failures += 1
            return None
        for typ, reason, message, fp in events:
            self._event(pod, sim, typ, reason, message, fp)
        return status, wake

    def _deleting(self, sim: NodeSim, pod: dict, run: PodRun | None, key: tuple, now: float) -> None:
        procs = self._processes(sim, pod)
        if procs is not None and run is not None and run.sandbox_at is not None:
            self._stop_processes(procs, sim, pod, run, key, now)
            return
        if run is not None and not run.terminal and run.sandbox_at is not None:
            if run.stop_at is None:
                run.stop_at = now + lifecycle.termination_delay(pod)
                if now < run.stop_at:  # the grace period: still running, no longer ready
                    self._write_status(pod, lifecycle.terminating_status(pod, now, False), now, run)
                for c in (pod.get("spec") or {}).get("containers") or ():
                    self._event(
                        pod,
                        sim,
                        "Normal",
                        "Killing",
                        f"Stopping container {c['name']}",
                        f"spec.containers{{{c['name']}}}",
                    )
            if now < run.stop_at:
                self.queue.add_after(key, run.stop_at - now)
                return
            live = self.client.get(self.pods_rt, pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
            if live is not None and live["metadata"].get("uid") == run.uid:  # terminated, then removed
                self._write_status(live, lifecycle.terminating_status(live, now, True), now, run)
        if run is not None:
            self._unprepare(sim, run)
            run.terminal = True
        if pod["metadata"].get("finalizers"):
            return  # the API removes it once the finalizers are gone
        self.client.finalize_delete(self.pods_rt, pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        if run is not None:
            self._forget(sim.spec.name, run.uid)

    def _stop_processes(
        self, procs: "ProcessRuntime", sim: NodeSim, pod: dict, run: PodRun, key: tuple, now: float
    ) -> None:
        """Graceful deletion of a process pod: SIGTERM, the grace period on the clock, SIGKILL;
        the containers' terminated statuses (and Ready=False) are written before the pod goes."""
        if run.stop_at is None:
            grace = pod["metadata"].get("deletionGracePeriodSeconds")
            grace = float(
                grace if grace is not None else (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
            )
            run.stop_at = now + grace
            if not run.terminal:
                for c in (pod.get("spec") or {}).get("containers") or ():
                    self._event(
                        pod,
                        sim,
                        "Normal",
                        "Killing",
                        f"Stopping container {c['name']}",
                        f"spec.containers{{{c['name']}}}",
                    )
        if not procs.has(run.uid):  # its containers were never made (a volume that never mounted)
            stopped, run.terminal = True, True
        else:
            stopped = procs.kill(run.uid, run.stop_at - now if now < run.stop_at else 0.0, now)
        if not stopped:
            status, wake, _ = procs.sync(pod, key, now, run.ip, nodes.node_ip(sim.spec.index))
            self._write_status(pod, status, now, run)
            deadline = procs.kill_deadline(run.uid)
            if deadline is not None:
                self.queue.add_after(key, max(deadline - now, 0.0))
            return  # the exits requeue the pod
        if not run.terminal:
            status, _, _ = procs.sync(pod, key, now, run.ip, nodes.node_ip(sim.spec.index))
            self._write_status(pod, status, now, run)
            run.terminal = True
        self._unprepare(sim, run)
        if pod["metadata"].get("finalizers"):
            return
        self.client.finalize_delete(self.pods_rt, pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        self._forget(sim.spec.name, run.uid)

    def _forget(self, node: str, uid: str) -> None:
        sim = self.nodes.get(node)
        if sim is None:
            return
        if self.process is not None:
            self.process.remove(uid)
        run = sim.runs.pop(uid, None)
        if run is not None:
            self._unprepare(sim, run)
            if self.by_key.get(run.key) == (node, uid):
                del self.by_key[run.key]

    # -- DRA --------------------------------------------------------------------------
    def _claim_names(self, pod: dict) -> list[str] | str:
        """The claims the pod uses, or an error saying what is still missing."""
        out = []
        statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
        for rc in (pod.get("spec") or {}).get("resourceClaims") or ():
            if rc.get("resourceClaimName"):
                out.append(rc["resourceClaimName"])
            elif rc.get("resourceClaimTemplateName"):
                st = statuses.get(rc.get("name"))
                if st is None:
                    return f"waiting for the ResourceClaim of pod claim {rc.get('name')!r} to be created"
                if st.get("resourceClaimName"):
                    out.append(st["resourceClaimName"])
        ext = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if ext:
            out.append(ext)
        return out

    def _prepare(self, sim: NodeSim, pod: dict, run: PodRun, key: tuple) -> str:
        names = self._claim_names(pod)
        if isinstance(names, str):
            return names
        ns = pod["metadata"].get("namespace", "")
        uid = pod["metadata"]["uid"]
        claims = []
        for cname in names:
            claim = self.client.get(self.claims_rt, ns, cname)
            if claim is None:
                self.waiting.setdefault((ns, cname), set()).add(key)
                return f'failed to fetch ResourceClaim {ns}/{cname}: resourceclaims.resource.k8s.io "{cname}" not found'
            reserved = {r.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or ()}
            for_group = self.workload_claims and wlc.reserved_for_group_of(pod, claim)
            if (uid not in reserved and not for_group) or not (claim.get("status") or {}).get("allocation"):
                self.waiting.setdefault((ns, cname), set()).add(key)
                return (
                    f"pod {ns}/{pod['metadata']['name']} ({uid}) is not allowed to use ResourceClaim "
                    f"{ns}/{cname}: not reserved for this pod"
                )
            remote = self.plugins.plugins(sim.spec.name) if self.plugins is not None else {}
            for r in (claim["status"]["allocation"].get("devices") or {}).get("results") or ():
                d = r.get("driver", "")
                if d not in remote and not self._local(sim, d):
                    return f"prepare dynamic resources: DRA driver {d} is not registered on node {sim.spec.name}"
            claims.append(claim)
        for claim in claims:
            cuid = claim["metadata"]["uid"]
            pc = sim.prepared.get(cuid)
            if pc is None:
                pc = PreparedClaim(ns, claim["metadata"]["name"], cuid)
                drivers = sorted(
                    {r.get("driver", "") for r in claim["status"]["allocation"]["devices"].get("results") or ()}
                )
                remote = self.plugins.plugins(sim.spec.name) if self.plugins is not None else {}
                pc.remote = {d for d in drivers if d in remote}
                if pc.remote:
                    got = self._remote_prepare(sim, pc, {d: remote[d] for d in pc.remote}, key)
                    if isinstance(got, str):
                        return got
                    pc.devices += got
                local = [d for d in drivers if d not in pc.remote]
                try:
                    for d in local:
                        self._injected_prepare_fault(d, claim)
                        pc.devices += [(d, p) for p in self.drivers[d].prepare(claim, pod)]
                except RuntimeError as e:
                    if self.prepares is not None:
                        self.prepares.labels("error").inc()
                    for d in local:
                        self.drivers[d].unprepare(cuid)
                    self._remote_unprepare(sim.spec.name, pc)
                    return (
                        f"prepare dynamic resources: NodePrepareResources failed for ResourceClaim {ns}/{pc.name}: {e}"
                    )
                sim.prepared[cuid] = pc
                if self.prepares is not None:
                    self.prepares.labels("success").inc()
                devs = ", ".join(f"{d}/{p.pool}/{p.device} ({' '.join(p.cdi_device_ids)})" for d, p in pc.devices)
                self._event(
                    pod,
                    sim,
                    "Normal",
                    "ResourceClaimPrepared",
                    f"Prepared ResourceClaim {ns}/{pc.name}: {devs or 'no devices'}",
                )
            pc.pods.add(uid)
            if cuid not in run.claims:
                run.claims.append(cuid)
        return ""

    def _claim_fault(self, kind: str, driver: str, pc_or_claim) -> object:
        faults = self.faults
        if faults is None or not len(faults):
            return None
        if isinstance(pc_or_claim, dict):
            claim = pc_or_claim
        else:
            claim = {"metadata": {"namespace": pc_or_claim.namespace, "name": pc_or_claim.name}}
            return faults.match_claim(
                kind, driver, claim, [(driver, p.pool, p.device) for d, p in pc_or_claim.devices if d == driver]
            )
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ()
        devices = [
            (r.get("driver", ""), r.get("pool", ""), r.get("device", "")) for r in results if r.get("driver") == driver
        ]
        return faults.match_claim(kind, driver, claim, devices)

    def _injected_prepare_fault(self, driver: str, claim: dict) -> None:
        """RuntimeError (a failed NodePrepareResources, retried on the next sync) when an
        injected prepare-failure or a slow driver still within its delay matches."""
        f = self._claim_fault("prepare-failure", driver, claim)
        if f is not None:
            raise RuntimeError(f.spec.get("message") or f"injected fault {f.id}")
        f = self._claim_fault("slow-driver", driver, claim)
        if f is not None:
            uid = claim["metadata"].get("uid", "")
            first = f.seen.setdefault(uid, self.clock())
            if self.clock() - first < float(f.spec.get("delaySeconds", 1.0)):
                raise RuntimeError(
                    "rpc error: code = DeadlineExceeded desc = context deadline exceeded "
                    f"(slow driver, injected fault {f.id})"
                )

    def _unprepare(self, sim: NodeSim, run: PodRun) -> None:
        for cuid in run.claims:
            pc = sim.prepared.get(cuid)
            if pc is None:
                continue
            pc.pods.discard(run.uid)
            if not pc.pods:
                for d in {d for d, _ in pc.devices} - pc.remote:
                    f = self._claim_fault("unprepare-failure", d, pc)
                    if f is not None:  # the driver keeps the device prepared, as a failed call would
                        self._event(
                            run.pod,
                            sim,
                            "Warning",
                            "FailedUnprepareDynamicResources",
                            f"NodeUnprepareResources failed for ResourceClaim {pc.namespace}/{pc.name}: "
                            f"{f.spec.get('message') or 'injected fault ' + f.id}",
                        )
                        continue
                    self.drivers[d].unprepare(cuid)
                self._remote_unprepare(sim.spec.name, pc)
                del sim.prepared[cuid]
                pod = run.pod
                self._event(
                    pod, sim, "Normal", "ResourceClaimUnprepared", f"Unprepared ResourceClaim {pc.namespace}/{pc.name}"
                )
        run.claims = []

    # -- DRA over the kubelet plugin gRPC API --------------------------------------------
    def _remote_prepare(
        self, sim: NodeSim, pc: PreparedClaim, clients: dict, key: tuple
    ) -> "list[tuple[str, Prepared]] | str":
        """The devices the plugins prepared, PREPARE_PENDING while the calls run (the pod is
        requeued when they end), or the error of a finished call (retried on the next sync)."""
        op_key = (sim.spec.name, pc.uid)
        task = self.ops.get(op_key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._call_prepare(pc, clients))
            self.ops[op_key] = task
            task.add_done_callback(lambda _t: self.queue.add(key))
            return PREPARE_PENDING
        if not task.done():
            task.add_done_callback(lambda _t: self.queue.add(key))
            return PREPARE_PENDING
        del self.ops[op_key]
        return task.result()

    async def _call_prepare(self, pc: PreparedClaim, clients: dict) -> "list[tuple[str, Prepared]] | str":
        import grpc  # only registered (gRPC) plugins get here

        from mockkube.drivers.base import Prepared

        ref = {"namespace": pc.namespace, "uid": pc.uid, "name": pc.name}
        out: list[tuple[str, Prepared]] = []
        for d, client in sorted(clients.items()):
            try:
                res = (await client.prepare([ref])).get(pc.uid)
            except grpc.aio.AioRpcError as e:
                code = e.code().name.title().replace("_", "")
                return f"prepare dynamic resources: NodePrepareResources: rpc error: code = {code} desc = {e.details()}"
            except Exception as e:  # pragma: no cover - a broken channel
                return f"prepare dynamic resources: NodePrepareResources: {e}"
            if res is None:
                return "prepare dynamic resources: NodePrepareResources skipped 1 ResourceClaims"
            if isinstance(res, str):
                return f"prepare dynamic resources: NodePrepareResources failed for ResourceClaim {pc.name}: {res}"
            out += [
                (d, Prepared(",".join(dev["requestNames"]), dev["pool"], dev["device"], dev["cdiDeviceIDs"]))
                for dev in res
            ]
        return out

    def _remote_unprepare(self, node: str, pc: PreparedClaim) -> None:
        if not pc.remote or self.plugins is None:
            return
        clients = self.plugins.plugins(node)
        ref = {"namespace": pc.namespace, "uid": pc.uid, "name": pc.name}

        async def call() -> None:
            for d in sorted(pc.remote):
                c = clients.get(d)
                if c is None:
                    log.warning(
                        "node %s: NodeUnprepareResources for %s/%s: DRA driver %s is not registered",
                        node,
                        pc.namespace,
                        pc.name,
                        d,
                    )
                    continue
                try:
                    errs = await c.unprepare([ref])
                except Exception as e:
                    log.warning("node %s: NodeUnprepareResources for %s/%s failed: %s", node, pc.namespace, pc.name, e)
                    continue
                if errs.get(pc.uid):
                    log.warning(
                        "node %s: NodeUnprepareResources failed for ResourceClaim %s: %s", node, pc.name, errs[pc.uid]
                    )

        self._spawn(call())

    def _resources_health(self, sim: NodeSim, pod: dict, run: PodRun, status: dict) -> None:
        """containerStatuses[].allocatedResourcesStatus for claims prepared over gRPC, as the
        kubelet's UpdateAllocatedResourcesStatus builds it from the plugins' health streams."""
        by_name = {pc.name: pc for cuid in run.claims if (pc := sim.prepared.get(cuid)) is not None and pc.remote}
        if not by_name:
            return
        names = {
            rc.get("name"): rc.get("resourceClaimName") for rc in (pod.get("spec") or {}).get("resourceClaims") or ()
        }
        for st in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if st.get("resourceClaimName"):
                names[st.get("name")] = st["resourceClaimName"]
        specs = {c["name"]: c for c in (pod.get("spec") or {}).get("containers") or ()}
        for cs in status.get("containerStatuses") or ():
            out = []
            for claim in ((specs.get(cs.get("name")) or {}).get("resources") or {}).get("claims") or ():
                pc = by_name.get(names.get(claim.get("name")) or "")
                if pc is None:
                    continue
                rname = f"claim:{claim['name']}" + (f"/{claim['request']}" if claim.get("request") else "")
                res = [
                    {
                        "resourceID": p.cdi_device_ids[0] if p.cdi_device_ids else f"{d}/{p.pool}/{p.device}",
                        "health": self.health.get((sim.spec.name, d, p.pool, p.device), "Unknown"),
                    }
                    for d, p in pc.devices
                ]
                if res:
                    out.append({"name": rname, "resources": res})
            if out:
                cs["allocatedResourcesStatus"] = out
            else:
                cs.pop("allocatedResourcesStatus", None)

    def _local(self, sim: NodeSim, driver: str) -> bool:
        """The driver runs in-process on this node (not through the gRPC plugin API)."""
        return driver in sim.spec.drivers and driver in self.drivers and driver not in self.external_drivers

    # plugin watcher hooks
    def plugin_registered(self, node: str, driver: str) -> None:
        """A plugin (re)appeared: a pending wipe of its slices no longer applies; pods waiting
        for it are retried."""
        sim = self.nodes.get(node)
        for r in sim.runs.values() if sim else ():
            if r.sandbox_at is None:
                self.queue.add(r.key)

    def plugin_unusable(self, node: str, driver: str) -> None:
        """Wipe the driver's slices of this node unless it comes back within the wiping delay."""
        self.queue.add_after(("wipe", node, driver), self.wiping_delay)

    def device_health(self, node: str, driver: str, devices: "list[tuple[str, str, str, str]] | None") -> None:
        changed: list[tuple[str, str, str]] = []
        if devices is None:
            for k in [k for k in self.health if k[0] == node and k[1] == driver]:
                del self.health[k]
                changed.append((k[2], k[3], "Unknown"))
        else:
            for pool, device, health, _msg in devices:
                k = (node, driver, pool, device)
                if self.health.get(k) != health:
                    self.health[k] = health
                    changed.append((pool, device, health))
        if not changed:
            return
        for pool, device, health in changed:
            if health == "Unhealthy":
                self._taint_rule(node, driver, pool, device, True)
            elif health == "Healthy":
                self._taint_rule(node, driver, pool, device, False)
        sim = self.nodes.get(node)
        for r in sim.runs.values() if sim else ():
            if r.claims and not r.terminal:
                self.queue.add(r.key)

    def _taint_rule(self, node: str, driver: str, pool: str, device: str, unhealthy: bool) -> None:
        """mockkube's device-health taint for a plugin-reported device: a DeviceTaintRule
        (the slices belong to the plugin, so the taint cannot go into them)."""
        if self.rules_rt is None:
            return
        name = health_rule_name(node, driver, pool, device)
        live = self.client.get(self.rules_rt, "", name)
        try:
            if unhealthy and live is None:
                self.client.create(
                    self.rules_rt,
                    {
                        "apiVersion": "resource.k8s.io/v1beta2",
                        "kind": "DeviceTaintRule",
                        "metadata": {"name": name, "labels": {"mockkube.io/device-health": "true"}},
                        "spec": {
                            "deviceSelector": {"driver": driver, "pool": pool, "device": device},
                            "taint": {
                                "key": f"{driver}/unhealthy",
                                "value": "true",
                                "effect": self.health_taint_effect,
                            },
                        },
                    },
                )
            elif not unhealthy and live is not None:
                self.client.delete(self.rules_rt, "", name)
        except errors.APIError as e:
            log.warning("device health taint %s: %s", name, e)

    def _wipe(self, node: str, driver: str) -> None:
        if self.plugins is not None and driver in self.plugins.plugins(node):
            return  # it came back in time
        sim = self.nodes.get(node)
        if sim is not None and self._local(sim, driver):
            return  # published in-process
        for s in self.client.list(self.slices_rt):
            spec = s.get("spec") or {}
            if spec.get("nodeName") == node and spec.get("driver") == driver:
                try:
                    self.client.delete(self.slices_rt, "", s["metadata"]["name"])
                except errors.APIError as e:
                    if e.code != 404:
                        raise
        log.info("node %s: wiped the ResourceSlices of DRA driver %s", node, driver)

    async def _wipe_stale(self, node: str) -> None:
        """A (re)starting kubelet: once the plugins present have registered, the node's slices
        of drivers that have no plugin here are stale."""
        await self.plugins.settle(node)
        sim = self.nodes.get(node)
        live = set(self.plugins.plugins(node)) | (
            {d for d in sim.spec.drivers if self._local(sim, d)} if sim else set()
        )
        for s in self.client.list(self.slices_rt):
            spec = s.get("spec") or {}
            if spec.get("nodeName") == node and spec.get("driver") not in live:
                self._wipe(node, spec.get("driver", ""))

    # -- writes ------------------------------------------------------------------------
    def _write_status(self, pod: dict, fields: dict, now: float, run: PodRun | None = None) -> None:
        old = pod.get("status") or {}
        status = dict(old)
        for k in ("reason", "message", "initContainerStatuses"):
            status.pop(k, None)
        fields = dict(fields)
        if "conditions" in fields:
            fields["conditions"] = lifecycle.merge_conditions(old.get("conditions"), fields["conditions"], now)
        status.update(fields)
        status.setdefault("startTime", meta.rfc3339(run.admitted_at if run else now))
        if status == old:
            return
        new = clone(pod)
        new["status"] = status
        try:
            self.client.update_status(self.pods_rt, new)
        except errors.APIError as e:
            if e.code == 404:
                return
            raise

    def _started_events(self, pod: dict, sim: NodeSim, processes: bool = False) -> None:
        """Pulled, Created, Started; and, on a node that runs processes, the event that says
        the container's main process is simulated."""
        for c in list((pod.get("spec") or {}).get("initContainers") or ()) + list(
            (pod.get("spec") or {}).get("containers") or ()
        ):
            if lifecycle.behaviour(pod, c["name"]).fail_start:
                continue
            fp = f"spec.{'initContainers' if c in ((pod.get('spec') or {}).get('initContainers') or ()) else 'containers'}{{{c['name']}}}"
            self._event(
                pod, sim, "Normal", "Pulled", f'Container image "{c.get("image", "")}" already present on machine', fp
            )
            self._event(pod, sim, "Normal", "Created", f"Created container: {c['name']}", fp)
            self._event(pod, sim, "Normal", "Started", f"Started container {c['name']}", fp)
            if processes:
                self._event(pod, sim, "Normal", "Simulated", why_simulated(c), fp)

    def _event(self, pod: dict, sim: NodeSim, typ: str, reason: str, message: str, field_path: str = "") -> None:
        ev = event_for(
            pod,
            "v1",
            "Pod",
            typ,
            reason,
            message,
            "kubelet",
            self.clock(),
            field_path=field_path,
            host=sim.spec.name,
            instance=sim.spec.name,
        )
        recorder_for(self.client, self.clock).emit(ev)  # never raises: events must not break the pod's lifecycle

    # -- observation ------------------------------------------------------------------
    def pod_resources(self, node: str) -> dict:
        """What the kubelet PodResources API List would return for DRA claims on ``node``."""
        sim = self.nodes.get(node)
        if sim is None:
            raise KeyError(node)
        out = []
        for run in sim.runs.values():
            if run.terminal or run.sandbox_at is None:
                continue
            spec = run.pod.get("spec") or {}
            prepared = [pc for pc in (sim.prepared.get(cuid) for cuid in run.claims) if pc is not None]
            containers = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
            containers += list(spec.get("containers") or ())
            out.append(
                {
                    "name": run.pod["metadata"]["name"],
                    "namespace": run.pod["metadata"].get("namespace", ""),
                    "containers": [
                        {"name": c["name"], "dynamicResources": _container_devices(run.pod, c, prepared)}
                        for c in containers
                    ],
                }
            )
        return {"podResources": sorted(out, key=lambda p: (p["namespace"], p["name"]))}


def health_rule_name(node: str, driver: str, pool: str, device: str) -> str:
    """The DeviceTaintRule mockkube keeps for an unhealthy plugin-reported device."""
    import hashlib

    h = hashlib.sha1(f"{node}/{driver}/{pool}/{device}".encode()).hexdigest()[:10]
    return f"health-{device[:40]}-{h}".lower()
