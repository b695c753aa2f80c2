"""The scheduler component: informers feed the node cache, the DRA manager and the queue;
one loop pops a pod and runs a scheduling cycle (PreFilter, Filter over a rotating window
of nodes, PostFilter on failure, Score, Reserve) and the binding cycle (PreBind, Bind)
inline, as a client of the API like every other component.

Writes here are synchronous store calls, so a cycle never interleaves with another; the
scheduler still "assumes" its own results (node cache, claims) so the next cycle does
not wait for informer delivery.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from mockkube.client.asyncbridge import spawn
from mockkube.client.client import Client
from mockkube.client.informer import Informer, NoInformer
from mockkube.client.recorder import SeriesRecorder
from mockkube.config.profile import CONTROL_PLANE_NODE
from mockkube.machinery import errors, meta
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache, NodeInfo
from mockkube.scheduler.dra_manager import DRAManager
from mockkube.scheduler.plugins import bindingconditions as bc
from mockkube.scheduler.plugins.dynamicresources import DynamicResources
from mockkube.scheduler.plugins.gangscheduling import GangScheduling, PodGroupState, group_name
from mockkube.scheduler.plugins.imagelocality import ImageLocality
from mockkube.scheduler.plugins.interpodaffinity import InterPodAffinity
from mockkube.scheduler.plugins.nodeports import NodePorts
from mockkube.scheduler.plugins.noderesources import NodeResourcesBalancedAllocation, NodeResourcesFit
from mockkube.scheduler.plugins.nodes import NodeAffinity, NodeName, NodeUnschedulable, SchedulingGates, TaintToleration
from mockkube.scheduler.plugins.podtopologyspread import PodTopologySpread
from mockkube.scheduler.plugins.volumebinding import VolumeBinding
from mockkube.scheduler.preemption import Preemptor, eligible, priority
from mockkube.scheduler.queue import SchedulingQueue, build_hint_map, build_narrowings

log = logging.getLogger("mockkube.scheduler")

SCHEDULER_NAME = "default-scheduler"
MIN_FEASIBLE_NODES = 100
MIN_FEASIBLE_PERCENTAGE = 5
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def num_feasible_nodes_to_find(num_all: int, percentage: int = 0) -> int:
    """Upstream's adaptive cut-off: stop filtering once this many nodes fit."""
    if num_all < MIN_FEASIBLE_NODES:
        return num_all
    adaptive = percentage
    if adaptive <= 0:
        adaptive = max(50 - num_all // 125, MIN_FEASIBLE_PERCENTAGE)
    n = num_all * adaptive // 100
    return max(n, MIN_FEASIBLE_NODES)


def fit_error(num_all: int, statuses: dict[str, fw.Status], prefilter_msg: str = "", postfilter_msg: str = "") -> str:
    """FitError.Error(): "0/N nodes are available: <histogram>. <postfilter>."."""
    msg = f"0/{num_all} nodes are available:"
    if prefilter_msg:
        msg += f" {prefilter_msg}."
    else:
        hist: dict[str, int] = {}
        for st in statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        parts = sorted(f"{v} {k}" for k, v in hist.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if postfilter_msg:
        msg += f" {postfilter_msg.rstrip('.')}."
    return msg


def _key(obj: dict) -> str:
    m = obj.get("metadata") or {}
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def _responsible(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    return (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME


def _pending(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    )


class Scheduler:
    name = "scheduler"
    scheduler_name = SCHEDULER_NAME

    def __init__(
        self,
        server: Any,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        percentage_of_nodes_to_score: int = 0,
        seed: int | None = None,
        filter_timeout: float | None = None,
        binding_timeout: float = bc.DEFAULT_BINDING_TIMEOUT,
    ) -> None:
        self.server = server
        self.clock = server.clock
        make_client = getattr(server, "client", None)
        self.client = (
            make_client("kube-scheduler") if callable(make_client) else Client(server.resources, "kube-scheduler")
        )
        # in a process of its own the binding cycle runs beside the next scheduling cycles
        # (upstream binds in a goroutine) while its writes travel to the API
        self.async_binding = bool(getattr(server, "async_binding", False))
        self._binding_now: dict[str, asyncio.Task] = {}
        self.cache = Cache()
        self.dra = DRAManager(getattr(server, "feature_gates", None))
        self.queue = SchedulingQueue(self.clock, initial_backoff, max_backoff)
        # events.k8s.io/v1 with series, as kube-scheduler's broadcaster (reportingInstance is
        # the profile name and the host's name: the control-plane node's on kind)
        self.recorder = SeriesRecorder(
            self.client, self.clock, SCHEDULER_NAME, f"{SCHEDULER_NAME}-{CONTROL_PLANE_NODE}"
        )
        self.percentage = percentage_of_nodes_to_score
        self.rng = random.Random(seed)
        self.next_start = 0
        self.pods_rt = self.client.rt("pods")
        self._stopping = False
        from mockkube.scheduler.settings import filter_timeout as configured_filter_timeout

        timeout = filter_timeout if filter_timeout is not None else configured_filter_timeout(server)
        self.dra_plugin = DynamicResources(
            self.dra,
            self.client,
            lambda: meta.rfc3339(self.clock()),
            filter_timeout=timeout,
            stopping=lambda: self._stopping,
            clock=self.clock,
            binding_timeout=binding_timeout,
            metrics=getattr(server, "metrics", None),
            pod_group_of=self._pod_group_sharing_claims,
        )
        registry = getattr(server, "metrics", None)
        self._attempts = None
        if registry is not None:
            from mockkube.scheduler.metrics import PendingPods

            self._attempts = registry.counter(
                "scheduler_schedule_attempts_total",
                "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
                "scheduled, while 'error' means an internal scheduler problem.",
                ["profile", "result"],
            )
            PendingPods.register(registry, self.queue)
            incoming = registry.counter(
                "scheduler_queue_incoming_pods_total",
                "Number of pods added to scheduling queues by event and queue type.",
                ["queue", "event"],
            )
            children: dict[tuple[str, str], Any] = {}

            def count_incoming(queue: str, event: str) -> None:
                c = children.get((queue, event))
                if c is None:
                    c = children[(queue, event)] = incoming.labels(queue, event)
                c.inc()

            self.queue.incoming = count_incoming
        self.bc_metrics = bc.Metrics(registry) if registry is not None else None
        self._sli = self._allocations = None
        if registry is not None:
            self._sli = registry.histogram(
                "scheduler_pod_scheduling_sli_duration_seconds",
                "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might "
                "involve multiple scheduling attempts.",
                ["attempts"],
                [0.01 * 2**i for i in range(20)],
            )
            self._allocations = registry.counter(
                "mockkube_dra_allocations_total", "ResourceClaims the scheduler allocated (mockkube).", []
            )
        # --feature-gates as the server has them (in a process of its own: as it was given them)
        from mockkube.config.features import FeatureGates

        self.gates = getattr(server, "feature_gates", None) or FeatureGates()
        self.generic_workload = self.gates.enabled("GenericWorkload")
        self.group_states: dict[tuple[str, str], PodGroupState] = {}
        self.group_keys: dict[tuple[str, str], set[str]] = {}  # pending pods' keys by group
        # KEP-5007: pods parked in PreBind until their claims' binding conditions are True
        self.binding = bc.BindingWaiter(self.dra.get_claim, self.clock, binding_timeout, self.bc_metrics)
        # upstream default order (DynamicResources before DefaultPreemption)
        gang = (
            [GangScheduling(self.get_pod_group, self.group_state)]
            if self.generic_workload and self.gates.enabled("GangScheduling")
            else []
        )
        self.plugins: list[fw.Plugin] = [
            SchedulingGates(),
            *gang,
            NodeUnschedulable(),
            NodeName(),
            TaintToleration(),
            NodeAffinity(),
            NodePorts(),
            NodeResourcesFit(self.dra.dra_backed),
            VolumeBinding(
                lambda ns, name: self.informers["persistentvolumeclaims"].get(ns, name),
                lambda name: self.informers["persistentvolumes"].get("", name),
                lambda: self.informers["persistentvolumes"].list(),
                lambda name: self.informers["storageclasses"].get("", name),
                self.client,
            ),
            PodTopologySpread(self.cache, self._default_spread_selector),
            InterPodAffinity(
                self.cache,
                lambda: self.informers["namespaces"].list(),
                lambda ns: ((self.informers["namespaces"].get("", ns) or {}).get("metadata") or {}).get("labels"),
            ),
            self.dra_plugin,
            NodeResourcesBalancedAllocation(),
            ImageLocality(self.cache),
        ]
        self.scored = [p for p in self.plugins if p.weight]
        # the profile's QueueingHintMap, and the narrowings that spare hint calls
        self.queue.set_hints(build_hint_map(self.plugins), build_narrowings(self.plugins))
        self.preemptor = Preemptor(self)
        self.nominated: dict[str, dict] = {}  # uid -> pending pod with status.nominatedNodeName
        store = server.store
        rt = self.client.rt
        self.informers = {
            "nodes": Informer(store, rt("nodes")),
            "pods": Informer(store, self.pods_rt),
            "resourceclaims": Informer(store, rt("resourceclaims", "resource.k8s.io")),
            "resourceslices": Informer(store, rt("resourceslices", "resource.k8s.io")),
            "deviceclasses": Informer(store, rt("deviceclasses", "resource.k8s.io")),
            # DeviceTaintRules only while served (DRADeviceTaintRules and resource.k8s.io/v1beta2)
            "devicetaintrules": Informer(store, rt("devicetaintrules", "resource.k8s.io"))
            if self.client.served("devicetaintrules", "resource.k8s.io")
            else NoInformer("devicetaintrules"),
            "poddisruptionbudgets": Informer(store, rt("poddisruptionbudgets", "policy")),
            "namespaces": Informer(store, rt("namespaces")),  # InterPodAffinity's namespaceSelector
            # PodTopologySpread's system default constraints select what these select
            "services": Informer(store, rt("services")),
            "replicationcontrollers": Informer(store, rt("replicationcontrollers")),
            "replicasets": Informer(store, rt("replicasets", "apps")),
            "statefulsets": Informer(store, rt("statefulsets", "apps")),
            # VolumeBinding
            "persistentvolumeclaims": Informer(store, rt("persistentvolumeclaims")),
            "persistentvolumes": Informer(store, rt("persistentvolumes")),
            "storageclasses": Informer(store, rt("storageclasses", "storage.k8s.io")),
        }
        if self.generic_workload:
            self.informers["podgroups"] = Informer(store, rt("podgroups", "scheduling.k8s.io"))
            self.informers["podgroups"].add_handler(self._on_pod_group)
        self.informers["nodes"].add_handler(self._on_node)
        self.informers["pods"].add_handler(self._on_pod)
        self.informers["resourceclaims"].add_handler(self._on_claim)
        self.informers["resourceslices"].add_handler(self._on_slice)
        self.informers["deviceclasses"].add_handler(self._on_class)
        self.informers["devicetaintrules"].add_handler(self._on_taint_rule)
        for name, resource in (
            ("persistentvolumeclaims", fw.PERSISTENT_VOLUME_CLAIM),
            ("persistentvolumes", fw.PERSISTENT_VOLUME),
            ("storageclasses", fw.STORAGE_CLASS),
        ):
            self.informers[name].add_handler(
                lambda typ, obj, prev, resource=resource: self._on_volume_object(resource, typ, obj, prev)
            )
        self._task: asyncio.Task | None = None
        self._waiting_uid: dict[str, str] = {}
        self._abandon: dict[str, Any] = {}
        self._flush: asyncio.TimerHandle | None = None
        self.scheduled = 0
        from mockkube.scheduler.explain import WhyPendingReporter

        self.why = WhyPendingReporter(self)  # explanations written while the queue is idle

    # -- lifecycle --------------------------------------------------------------------
    async def start(self) -> None:
        # cluster state first, so the replayed pods meet a complete view
        for name in (
            "namespaces",
            "services",
            "replicationcontrollers",
            "replicasets",
            "statefulsets",
            "storageclasses",
            "persistentvolumes",
            "persistentvolumeclaims",
            "nodes",
            "poddisruptionbudgets",
            "deviceclasses",
            "devicetaintrules",
            "resourceslices",
            "resourceclaims",
            "podgroups",
            "pods",
        ):
            if name in self.informers:
                self.informers[name].start()
        self._task = asyncio.create_task(self._run(), name="scheduler")
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        def tick() -> None:
            self.queue.flush_stale()
            self.recorder.tick()
            self._schedule_flush()

        self._flush = asyncio.get_running_loop().call_later(30.0, tick)

    def request_stop(self) -> None:
        """Thread-safe: a running allocation gives up at its next step."""
        self._stopping = True

    def idle(self) -> bool:
        """No pod waiting in activeQ or being scheduled, no undelivered events."""
        return (
            not self.queue.has_active()
            and self.queue.in_flight is None
            and not self._binding_now
            and not any(inf.pending() for inf in self.informers.values())
        )

    def resync(self) -> None:
        """Re-check time-based state now (tests that advance the injectable clock)."""
        self.binding.resync()
        self.queue.flush_stale()
        self.recorder.tick()

    async def stop(self) -> None:
        self._stopping = True
        self.why.stop()
        self.binding.stop()
        for task in list(self._binding_now.values()):
            task.cancel()
        for inf in self.informers.values():
            inf.stop()
        if self._flush is not None:
            self._flush.cancel()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
            self._task = None

    # -- event handlers -----------------------------------------------------------------
    def _waiting(self) -> bool:
        """Pods an event could concern: unschedulable, or in flight (events are kept for them)."""
        return bool(self.queue.unschedulable or self.queue.in_flight_events)

    def _on_node(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            self.queue.move_all(fw.ClusterEvent(fw.NODE, fw.DELETE), obj, None)
            self.cache.remove_node((obj.get("metadata") or {}).get("name", ""))
            return
        self.cache.set_node(obj)
        if typ == "ADDED" or prev is None:
            self.queue.move_all(fw.ClusterEvent(fw.NODE, fw.ADD), None, obj)
        elif self._waiting():
            for ev in fw.node_scheduling_properties_change(obj, prev):
                self.queue.move_all(ev, prev, obj)

    # -- pod groups (GenericWorkload) ----------------------------------------------------
    def get_pod_group(self, namespace: str, name: str) -> dict | None:
        inf = self.informers.get("podgroups")
        return inf.get(namespace, name) if inf is not None else None

    def _pod_group_sharing_claims(self, pod: dict) -> dict | None:
        """KEP-5729: the PodGroup whose claims the pod may share (DRAWorkloadResourceClaims)."""
        name = group_name(pod)
        if not name or not self.generic_workload or not self.gates.enabled("DRAWorkloadResourceClaims"):
            return None
        return self.get_pod_group((pod.get("metadata") or {}).get("namespace", ""), name)

    def group_state(self, namespace: str, name: str) -> PodGroupState:
        st = self.group_states.get((namespace, name))
        return st if st is not None else PodGroupState()

    def _track_group(self, typ: str, obj: dict, key: str) -> None:
        """Upstream's PodGroupState: the group's live pods and which of them are bound; a
        new member may complete a gang waiting in PreEnqueue (isSchedulableAfterPodAdded)."""
        name = group_name(obj)
        if not name:
            return
        m = obj.get("metadata") or {}
        g = (m.get("namespace", ""), name)
        uid = m.get("uid", "")
        st = self.group_states.setdefault(g, PodGroupState())
        keys = self.group_keys.setdefault(g, set())
        gone = (
            typ == "DELETED"
            or m.get("deletionTimestamp")
            or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        )
        if gone:
            st.all.discard(uid)
            st.scheduled.discard(uid)
            keys.discard(key)
            if not st.all:
                self.group_states.pop(g, None)
                self.group_keys.pop(g, None)
            return
        st.all.add(uid)
        if (obj.get("spec") or {}).get("nodeName"):
            st.scheduled.add(uid)
            st.assumed.discard(uid)
            keys.discard(key)
        else:
            keys.add(key)
            if key not in self._binding_now and key not in self._waiting_uid:
                st.assumed.discard(uid)  # its binding failed: no longer counted

    def _on_pod_group(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            return
        action = fw.ADD if typ == "ADDED" or prev is None else fw.UPDATE
        self.queue.move_all(fw.ClusterEvent(fw.POD_GROUP, action), prev, obj)

    def binding_now_keys(self) -> set[str]:
        """Pods in a binding cycle (or parked in PreBind): not to be scheduled again."""
        return set(self._binding_now) | set(self._waiting_uid)

    def schedulable_pod(self, pod: dict) -> bool:
        """A pod the scheduler would try now: pending, its own, past PreEnqueue."""
        if not _pending(pod) or not _responsible(pod):
            return False
        return all((st := p.pre_enqueue(pod)) is None or st.ok for p in self.plugins)

    def run_permit(self, state: fw.CycleState, pod: dict, node_name: str) -> tuple[fw.Status | None, float]:
        """RunPermitPlugins: the first rejection, else Wait (the longest timeout), else success."""
        waiting: fw.Status | None = None
        timeout = 0.0
        for p in self.plugins:
            if type(p).permit is fw.Plugin.permit:
                continue
            st, t = p.permit(state, pod, node_name)
            if st is None or st.ok:
                continue
            st.plugin = p.name
            if st.code == fw.WAIT:
                waiting, timeout = st, max(timeout, t)
                continue
            return st, 0.0
        return waiting, timeout

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        key = _key(obj)
        if self.generic_workload:
            self._track_group(typ, obj, key)
        uid = (obj.get("metadata") or {}).get("uid", "")
        if typ != "DELETED" and _pending(obj) and (obj.get("status") or {}).get("nominatedNodeName"):
            self.nominated[uid] = obj
        else:
            self.nominated.pop(uid, None)
        if key in self._binding_now and typ != "DELETED" and not (obj.get("spec") or {}).get("nodeName"):
            return  # its binding cycle is writing: the outcome decides
        if key in self.binding:
            if typ == "DELETED" or (obj.get("metadata") or {}).get("uid") != self._waiting_uid.get(key):
                self._abandon_wait(key)
            else:
                return  # waiting in PreBind: not back to the queue
        if typ == "DELETED":
            uid = (obj.get("metadata") or {}).get("uid", "")
            was_assigned = self.cache.has_pod(uid)
            self.cache.remove_pod(uid)
            self.queue.delete(key)
            self.why.forget(uid)
            if was_assigned:
                self.queue.move_all(fw.EVENT_ASSIGNED_POD_DELETE, obj, None)
            elif (obj.get("status") or {}).get("nominatedNodeName"):
                # a nominated pod counted as assigned for pods of lower or equal priority
                prio = priority(obj)
                self.queue.move_all(
                    fw.EVENT_ASSIGNED_POD_DELETE, obj, None, lambda e: e.pod is not None and priority(e.pod) <= prio
                )
            return
        if (obj.get("spec") or {}).get("nodeName"):
            self.queue.delete(key)
            uid = (obj.get("metadata") or {}).get("uid", "")
            was = self.cache.has_pod(uid)
            self.cache.set_pod(obj)
            now = self.cache.has_pod(uid)
            if was and not now:
                # finished (the scheduler's informer stops seeing it): its resources are free
                self.queue.move_all(fw.EVENT_ASSIGNED_POD_DELETE, prev or obj, None)
            elif now and (prev is None or not (prev.get("spec") or {}).get("nodeName")):
                self.queue.move_all(fw.EVENT_ASSIGNED_POD_ADD, None, obj)  # added, or just bound
            elif now and self._waiting():
                for ev in fw.pod_scheduling_properties_change(obj, prev):
                    self.queue.move_all(ev, prev, obj)
            return
        if not _responsible(obj) or not _pending(obj):
            self.queue.delete(key)
            return
        prio = int((obj.get("spec") or {}).get("priority") or 0)
        entry = self.queue.entries.get(key)
        if typ == "ADDED" or prev is None or entry is None:
            self.queue.add(key, prio, obj)
            # GangScheduling: a new member may complete a gang waiting in PreEnqueue
            self.queue.move_all(fw.EVENT_UNSCHEDULED_POD_ADD, None, obj)
            return
        was_nominated = (prev.get("status") or {}).get("nominatedNodeName")
        if was_nominated and was_nominated != (obj.get("status") or {}).get("nominatedNodeName"):
            # counted as assigned there for pods of lower or equal priority: as if deleted
            self.queue.move_all(
                fw.EVENT_ASSIGNED_POD_DELETE, prev, None, lambda e: e.pod is not None and priority(e.pod) <= prio
            )
        if not _pod_update_matters(obj, prev):
            entry.pod = obj  # e.g. our own PodScheduled condition write: no event any plugin takes
            return
        if entry.gated:
            self.queue.add(key, prio, obj)  # PreEnqueue runs again
            return
        self.queue.update(key, prio, prev, obj, fw.pod_scheduling_properties_change(obj, prev))

    def _on_claim(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            self.dra.remove_claim(obj)
            if len(self.binding):
                self.binding.claim_changed(obj)
            self.queue.move_all(fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.DELETE), obj, None)
            return
        self.dra.set_claim(obj)
        if len(self.binding):
            self.binding.claim_changed(obj)
        if typ == "ADDED" or prev is None:
            self.queue.move_all(fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.ADD), None, obj)
        else:
            self.queue.move_all(fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.UPDATE), prev, obj)

    def _on_slice(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            self.dra.remove_slice(obj)
        else:
            self.dra.set_slice(obj)
            action = fw.ADD if typ == "ADDED" or prev is None else fw.UPDATE
            self.queue.move_all(fw.ClusterEvent(fw.RESOURCE_SLICE, action), prev, obj)

    def _on_class(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            self.dra.remove_class(obj)
        else:
            self.dra.set_class(obj)
            action = fw.ADD if typ == "ADDED" or prev is None else fw.UPDATE
            self.queue.move_all(fw.ClusterEvent(fw.DEVICE_CLASS, action), prev, obj)

    def _on_volume_object(self, resource: str, typ: str, obj: dict, prev: dict | None) -> None:
        """A PersistentVolumeClaim, PersistentVolume or StorageClass event."""
        if typ == "DELETED":
            self.queue.move_all(fw.ClusterEvent(resource, fw.DELETE), obj, None)
        elif typ == "ADDED" or prev is None:
            self.queue.move_all(fw.ClusterEvent(resource, fw.ADD), None, obj)
        else:
            self.queue.move_all(fw.ClusterEvent(resource, fw.UPDATE), prev, obj)

    def _on_taint_rule(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            self.dra.remove_taint_rule(obj)
            self.queue.move_all(fw.ClusterEvent(fw.DEVICE_TAINT_RULE, fw.DELETE), obj, None)
        else:
            self.dra.set_taint_rule(obj)

    # -- the loop -------------------------------------------------------------------------
    async def _run(self) -> None:
        from mockkube.machinery.requestcontext import set_user
        from mockkube.rules.identities import SCHEDULER

        set_user(SCHEDULER)  # the scheduler's writes (bindings, claims, conditions) as upstream's
        while True:
            key = await self.queue.pop()
            try:
                self.schedule_one(key)
            except Exception:
                log.exception("scheduling %s failed", key)
                self.queue.requeue_failed(key, error=True)
            await asyncio.sleep(0)

    def schedule_one(self, key: str) -> None:
        ns, _, name = key.partition("/")
        pod = self.client.get(self.pods_rt, ns, name)
        if pod is None or not _pending(pod) or not _responsible(pod):
            self.queue.done(key)
            return
        for p in self.plugins:
            st = p.pre_enqueue(pod)
            if st is not None and not st.ok:
                entry = self.queue.entries.get(key)
                if entry is not None:
                    entry.pod = pod
                self.queue.gate(key, p.name)
                return
        if self.generic_workload and group_name(pod):
            from mockkube.scheduler.podgroups import schedule_group

            schedule_group(self, key, pod)
            return
        state = fw.CycleState()
        node_name, failure, is_error = self._schedule(state, pod)
        if node_name is None:
            self._fail(key, pod, failure, is_error, state.get("__rejected_by", frozenset()))
            return
        self._assume_and_bind(key, pod, state, node_name)

    def _schedule(self, state: fw.CycleState, pod: dict) -> tuple[str | None, str, bool]:
        nodes = self.cache.node_list
        skip: set[str] = set()
        for p in self.plugins:
            st = p.pre_filter(state, pod)
            if st is None or st.ok:
                continue
            if st.code == fw.SKIP:
                skip.add(p.name)
                continue
            if st.code == fw.ERROR:
                return None, f'running PreFilter plugin "{p.name}": {st.message}', True
            state["__rejected_by"] = frozenset((p.name,))
            post = self._post_filter(state, pod, {}, len(nodes), prefilter=True)
            return None, fit_error(len(nodes), {}, st.message, post), False
        if not nodes:
            return None, "no nodes available to schedule pods", False
        filters = [p for p in self.plugins if p.name not in skip and type(p).filter is not fw.Plugin.filter]
        state["__filters"] = filters
        want = num_feasible_nodes_to_find(len(nodes), self.percentage)
        feasible: list[NodeInfo] = []
        statuses: dict[str, fw.Status] = {}
        n = len(nodes)
        start = self.next_start % n
        checked = 0
        nominated = self._nominated_for(pod)
        for i in range(n):
            node = nodes[(start + i) % n]
            checked += 1
            if nominated and node.name in nominated:
                p, st = self._filter_with_nominated(filters, state, pod, node, nominated[node.name])
            else:
                p, st = _run_filters(filters, state, pod, node)
            if st is not None:
                if st.code == fw.ERROR:
                    return None, f'running "{p.name}" filter plugin: {st.message}', True
                st.plugin = p.name
                statuses[node.name] = st
            else:
                feasible.append(node)
                if len(feasible) >= want:
                    break
        self.next_start = (start + checked) % n
        if not feasible:
            state["__rejected_by"] = frozenset(st.plugin for st in statuses.values())
            post = self._post_filter(state, pod, statuses, n)
            return None, fit_error(n, statuses, "", post), False
        if len(feasible) == 1:
            return feasible[0].name, "", False
        return self._select_host(state, pod, feasible), "", False

    def _filter_with_nominated(
        self, filters: list[fw.Plugin], state: fw.CycleState, pod: dict, node: NodeInfo, nominated: list[dict]
    ) -> tuple[fw.Plugin | None, fw.Status | None]:
        """The filters with the pods nominated to this node counted as if they ran there."""
        added = [self._add_nominated(q, node.name) for q in nominated]
        extended = [p for p in filters if fw.has_pod_extensions(p)]
        for ext in extended:
            for q in nominated:
                ext.add_pod(state, pod, q, node)
        try:
            return _run_filters(filters, state, pod, node)
        finally:
            for ext in extended:
                for q in nominated:
                    ext.remove_pod(state, pod, q, node)
            for uid in added:
                self.cache.remove_pod(uid)

    def _post_filter(self, state, pod, statuses, num_all, prefilter=False) -> str:
        reasons: list[str] = []
        for p in self.plugins:
            if type(p).post_filter is fw.Plugin.post_filter or p.name not in state:
                continue
            st = p.post_filter(state, pod, statuses)
            if st is None or st.ok:
                return ""
            reasons.extend(st.reasons)
        if not prefilter and eligible(pod) and not state.get("__group"):
            blocked = self._terminating_on_nominated(pod)
            if blocked:
                reasons.append("preemption: not eligible due to a terminating pod on the nominated node.")
                return ", ".join(reasons)
            found = self.preemptor.find(state, pod, statuses, state.get("__filters") or [])
            if found is not None:
                node_name, victims = found
                self.preemptor.preempt(pod, node_name, victims, lambda: meta.rfc3339(self.clock()))
                return ""
        reasons.append(self._preemption_message(pod, statuses, num_all, prefilter))
        return ", ".join(reasons)

    def _nominated_for(self, pod: dict) -> dict[str, list[dict]]:
        """Pods nominated by preemption with at least this pod's priority count on their
        node (upstream's RunFilterPluginsWithNominatedPods), so the space a preemption
        freed is not taken by a lower-priority pod."""
        out: dict[str, list[dict]] = {}
        if not self.nominated:
            return out
        uid, prio = (pod.get("metadata") or {}).get("uid"), priority(pod)
        for q in self.nominated.values():
            if q["metadata"].get("uid") != uid and priority(q) >= prio:
                out.setdefault(q["status"]["nominatedNodeName"], []).append(q)
        return out

    def _add_nominated(self, pod: dict, node_name: str) -> str:
        assumed = dict(pod)
        assumed["spec"] = dict(pod.get("spec") or {})
        assumed["spec"]["nodeName"] = node_name
        assumed["metadata"] = dict(pod["metadata"])
        uid = assumed["metadata"]["uid"] = pod["metadata"]["uid"] + "-nominated"
        self.cache.set_pod(assumed)
        return uid

    def _default_spread_selector(self, pod: dict):
        """helper.DefaultSelector: the selectors of the Services selecting the pod and of
        its controller (ReplicationController, ReplicaSet or StatefulSet), ANDed."""
        from mockkube.machinery.selectors import EVERYTHING, label_selector_from_object, selector_from_set

        m = pod.get("metadata") or {}
        ns, labels = m.get("namespace", ""), m.get("labels") or {}
        merged: dict[str, str] = {}
        for svc in self.informers["services"].list(ns):
            sel = (svc.get("spec") or {}).get("selector")
            if sel is None:
                continue  # services with nil selectors match nothing
            if all(labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)
        selector = selector_from_set(merged) if merged else EVERYTHING
        owner = next((r for r in m.get("ownerReferences") or () if r.get("controller")), None)
        if owner is None:
            return selector
        gvk = (owner.get("apiVersion"), owner.get("kind"))
        if gvk == ("v1", "ReplicationController"):
            rc = self.informers["replicationcontrollers"].get(ns, owner.get("name", ""))
            if rc is not None:
                merged.update((rc.get("spec") or {}).get("selector") or {})
                selector = selector_from_set(merged)
        elif gvk in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
            inf = self.informers["replicasets" if gvk[1] == "ReplicaSet" else "statefulsets"]
            obj = inf.get(ns, owner.get("name", ""))
            if obj is not None:
                try:
                    other = label_selector_from_object((obj.get("spec") or {}).get("selector"))
                except errors.APIError:
                    return selector
                if not other.nothing:
                    selector = type(selector)(list(selector.requirements) + list(other.requirements))
        return selector

    def pdbs(self) -> list[dict]:
        return self.informers["poddisruptionbudgets"].list()

    def assigned_pods(self, node_name: str) -> list[dict]:
        """Running (not terminating, not finished) pods on a node: preemption candidates."""
        return [
            p
            for p in self.informers["pods"].list()
            if (p.get("spec") or {}).get("nodeName") == node_name
            and not (p.get("metadata") or {}).get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]

    def _terminating_on_nominated(self, pod: dict) -> bool:
        node = (pod.get("status") or {}).get("nominatedNodeName")
        if not node:
            return False
        prio = priority(pod)
        return any(
            (p.get("spec") or {}).get("nodeName") == node
            and (p.get("metadata") or {}).get("deletionTimestamp")
            and priority(p) < prio
            for p in self.informers["pods"].list()
        )

    def _preemption_message(self, pod, statuses, num_all, prefilter) -> str:
        """DefaultPreemption's verdict; mockkube never evicts, so a node where preemption
        could help reports that no victims were found."""
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return "preemption: not eligible due to preemptionPolicy=Never."
        hist: dict[str, int] = {}
        for node in self.cache.node_list:
            st = statuses.get(node.name)
            reason = (
                PREEMPTION_NOT_HELPFUL
                if prefilter or st is None or st.code == fw.UNSCHEDULABLE_AND_UNRESOLVABLE
                else NO_VICTIMS
            )
            hist[reason] = hist.get(reason, 0) + 1
        parts = ", ".join(sorted(f"{v} {k}" for k, v in hist.items()))
        return f"preemption: 0/{num_all} nodes are available: {parts}."

    def _select_host(self, state, pod, feasible: list[NodeInfo]) -> str:
        totals = [0] * len(feasible)  # in feasible order (node names are unique)
        for p in self.scored:
            if p.skip_score(state, pod):  # PreScore Skip
                continue
            scores = p.score_nodes(state, pod, feasible)
            p.normalize(state, pod, scores)
            w = p.weight
            totals = [t + v * w for t, v in zip(totals, scores.values())]
        # randrange(n) is _randbelow(n) for a positive int; call it directly (hot loop)
        randbelow = getattr(self.rng, "_randbelow", None) or self.rng.randrange
        best, best_score, ties = -1, -1, 0
        for i, score in enumerate(totals):  # reservoir sampling among the top scores
            if score > best_score:
                best, best_score, ties = i, score, 1
            elif score == best_score:
                ties += 1
                if randbelow(ties) == 0:
                    best = i
        return feasible[best].name if best >= 0 else ""

    # -- binding ------------------------------------------------------------------------------
    def _assume_and_bind(self, key: str, pod: dict, state: fw.CycleState, node_name: str) -> None:
        reserved, failure = self._assume_and_reserve(pod, state, node_name)
        self._start_binding(key, pod, state, node_name, reserved, failure)

    def _assume_and_reserve(self, pod: dict, state: fw.CycleState, node_name: str) -> tuple[list[fw.Plugin], str]:
        """Count the pod on its node in the cache and run Reserve: the plugins reserved
        (to unreserve in reverse) and the failure, if one refused."""
        assumed = dict(pod)
        assumed["spec"] = dict(pod.get("spec") or {})
        assumed["spec"]["nodeName"] = node_name
        demand = self._demand_for(state, node_name)
        if demand:
            assumed["status"] = dict(pod.get("status") or {})
            assumed["status"]["nodeAllocatableResourceClaimStatuses"] = demand
        self.cache.set_pod(assumed)
        reserved: list[fw.Plugin] = []
        failure = ""
        for p in self.plugins:
            if p.name not in state:
                continue
            reserved.append(p)
            st = p.reserve(state, pod, node_name)
            if st is not None and not st.ok:
                failure = f'running Reserve plugin "{p.name}": {st.message}'
                break
        return reserved, failure

    def _start_binding(
        self, key: str, pod: dict, state: fw.CycleState, node_name: str, reserved: list[fw.Plugin], failure: str
    ) -> None:
        if self.async_binding and not failure:
            self.queue.release(key)
            task = asyncio.get_running_loop().create_task(
                spawn(self._binding_cycle, key, pod, state, node_name, reserved, failure), name=f"bind {key}"
            )
            self._binding_now[key] = task
            task.add_done_callback(lambda t, key=key: self._bound(key, t))
            return
        self._binding_cycle(key, pod, state, node_name, reserved, failure)

    def _bound(self, key: str, task: asyncio.Task) -> None:
        if self._binding_now.get(key) is task:
            del self._binding_now[key]
        if not task.cancelled() and task.exception() is not None:
            log.error("binding cycle of %s failed", key, exc_info=task.exception())
            self.queue.requeue_failed(key, error=True)

    def _binding_cycle(
        self, key: str, pod: dict, state: fw.CycleState, node_name: str, reserved: list[fw.Plugin], failure: str
    ) -> None:
        """PreBind and Bind. Inline in-process; under ``asyncbridge.spawn`` in a scheduler
        process, where each write is awaited while the loop runs the next cycles."""
        started = self.clock()
        if not failure:
            for p in self.plugins:
                if p.name not in state:
                    continue
                st = p.pre_bind(state, pod, node_name)
                if st is not None and not st.ok:
                    failure = f'running PreBind plugin "{p.name}": {st.message}'
                    break
        waiting = self.dra_plugin.binding_wait_claims(state) if not failure else []
        if waiting:
            self._wait_for_binding(key, pod, state, node_name, reserved, waiting)
            return
        if (
            self.bc_metrics is not None
            and self.dra_plugin.name in state
            and getattr(state[self.dra_plugin.name], "claims", None) is not None
            and (state[self.dra_plugin.name].claims or state[self.dra_plugin.name].extended is not None)
        ):
            self.bc_metrics.prebind_done(bc.FAILURE if failure else bc.SUCCESS, False, self.clock() - started)
        self._bind(key, pod, state, node_name, reserved, failure)

    def _wait_for_binding(
        self, key: str, pod: dict, state: fw.CycleState, node_name: str, reserved: list[fw.Plugin], claims: list[dict]
    ) -> None:
        """KEP-5007: park the pod in PreBind; the scheduler goes on with other pods and
        the binding finishes when the claims' conditions decide (or time runs out)."""
        self.recorder.event(
            pod,
            "Normal",
            "BindingConditionsPending",
            f"waiting for binding conditions for device on node {node_name}",
            action="Scheduling",
        )
        self.queue.release(key)
        self._waiting_uid[key] = pod["metadata"]["uid"]

        def done(status: str, message: str) -> None:
            self._waiting_uid.pop(key, None)
            failure = "" if status == bc.SUCCESS else f'running PreBind plugin "{self.dra_plugin.name}": {message}'
            self._bind(key, pod, state, node_name, reserved, failure)

        self._abandon[key] = lambda: [p.unreserve(state, pod, node_name) for p in reversed(reserved)]
        self.binding.add(key, claims, done)

    def _abandon_wait(self, key: str) -> None:
        """The waiting pod was deleted (or replaced): give up its binding cycle."""
        self.binding.cancel(key)
        uid = self._waiting_uid.pop(key, None)
        undo = self._abandon.pop(key, None)
        if undo is not None:
            undo()
        if uid:
            self.cache.remove_pod(uid)
        self.queue.delete(key)

    def _bind(
        self, key: str, pod: dict, state: fw.CycleState, node_name: str, reserved: list[fw.Plugin], failure: str
    ) -> None:
        self._abandon.pop(key, None)
        uid = pod["metadata"]["uid"]
        if not failure:
            try:
                bound = self.client.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], node_name)
                self.cache.set_pod(bound)
            except errors.APIError as e:
                failure = f"binding rejected: {e}"
        if failure:
            for p in reversed(reserved):
                p.unreserve(state, pod, node_name)
            self.cache.remove_pod(uid)
            self._fail(key, pod, failure, True)
            return
        entry = self.queue.entries.get(key)
        if self._sli is not None and entry is not None:
            self._sli.labels(str(entry.attempts + 1)).observe(max(0.0, self.clock() - entry.added))
        if self._allocations is not None and self.dra_plugin.name in state:
            s = state[self.dra_plugin.name]
            n = len(getattr(s, "to_allocate", ()) or ()) + (1 if getattr(s, "extended", None) is not None else 0)
            if n:
                self._allocations.inc(n)
        self.queue.done(key)
        self.scheduled += 1
        self._attempt("scheduled")
        self.recorder.event(
            pod,
            "Normal",
            "Scheduled",
            f"Successfully assigned {pod['metadata']['namespace']}/{pod['metadata']['name']} to {node_name}",
            action="Binding",
        )

    def _demand_for(self, state: fw.CycleState, node_name: str) -> list[dict]:
        s = state.get(self.dra_plugin.name)
        return list(getattr(s, "demand", {}).get(node_name) or ()) if s is not None else []

    # -- failure ------------------------------------------------------------------------------
    def _attempt(self, result: str) -> None:
        if self._attempts is not None:
            self._attempts.labels(SCHEDULER_NAME, result).inc()

    def _fail(
        self, key: str, pod: dict, message: str, is_error: bool, rejected_by: frozenset[str] = frozenset()
    ) -> None:
        self._attempt("error" if is_error else "unschedulable")
        if is_error:  # as kube-scheduler: "Error scheduling pod; retrying" (a 403 in RBAC mode shows here)
            log.error("error scheduling pod %s, retrying: %s", key, message)
        self.queue.requeue_failed(key, error=is_error, rejected_by=rejected_by, pod=pod)
        reason = "SchedulerError" if is_error else "Unschedulable"
        self.recorder.event(pod, "Warning", "FailedScheduling", message, action="Scheduling")
        self._set_condition(pod, reason, message)
        if not is_error:
            self.why.note(key, pod, message)

    def _set_condition(self, pod: dict, reason: str, message: str) -> None:
        for c in (pod.get("status") or {}).get("conditions") or ():
            if (
                c.get("type") == "PodScheduled"
                and c.get("status") == "False"
                and c.get("reason") == reason
                and c.get("message") == message
            ):
                return
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": meta.rfc3339(self.clock()),
        }
        m = pod["metadata"]
        try:
            self.client.patch(
                self.pods_rt,
                m["namespace"],
                m["name"],
                {"metadata": {"uid": m["uid"]}, "status": {"conditions": [cond]}},
                "strategic",
                "status",
            )
        except errors.APIError as e:
            log.debug("pod condition update for %s failed: %s", m["name"], e)


def _run_filters(
    filters: list[fw.Plugin], state: fw.CycleState, pod: dict, node: NodeInfo
) -> tuple[fw.Plugin | None, fw.Status | None]:
    """The first filter rejecting ``node`` and its status, else (None, None)."""
    for p in filters:
        st = p.filter(state, pod, node)
        if st is not None and st.code:  # not SUCCESS
            return p, st
    return None, None


def _pod_update_matters(new: dict, old: dict) -> bool:
    """Only spec, labels and claim statuses can change a pending pod's fate."""
    if new.get("spec") != old.get("spec"):
        return True
    if (new.get("metadata") or {}).get("labels") != (old.get("metadata") or {}).get("labels"):
        return True
    ns, os_ = new.get("status") or {}, old.get("status") or {}
    return ns.get("resourceClaimStatuses") != os_.get("resourceClaimStatuses") or ns.get(
        "extendedResourceClaimStatus"
    ) != os_.get("extendedResourceClaimStatus")
