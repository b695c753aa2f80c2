"""``mockkube scheduler --kubeconfig FILE``: the scheduler as a process of its own, a client
of the API like kube-scheduler (DESIGN.md principle 2), on a core of its own.

Its informers read a ``Replica`` filled by list-and-watch; its writes go over HTTP, and the
binding cycle awaits them beside the next scheduling cycles. ``mockkube serve`` starts it
(``mockkube.server.schedulerprocess``) and talks to it over stdin/stdout, one JSON object per
line, each request with an ``id`` answered by a line with the same ``id``:

    {"op": "idle", "rvs": {storage key: rv}}  -> {"idle": bool}  caught up and nothing to do
    {"op": "clock", "state": {"now": t, "frozen": b}}             the cluster clock moved
    {"op": "pause"} / {"op": "resume", "rvs": {...}}             a reset: stop, then start again
    {"op": "explain", "namespace": ns, "name": n} -> {"report": ...}
    {"op": "metrics"} -> {"text": exposition}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import Any

from mockkube.client.remote import HTTP, RemoteClient
from mockkube.machinery.clock import Clock
from mockkube.machinery.metrics import Metrics

log = logging.getLogger("mockkube.scheduler")

USER_AGENT = "kube-scheduler/v1.36.0 (linux/amd64) kubernetes/mockkube"
FOLLOWED = (
    ("", "namespaces"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("", "nodes"),
    ("", "pods"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "devicetaintrules"),
    ("policy", "poddisruptionbudgets"),
    ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"),
    ("storage.k8s.io", "storageclasses"),
)


def apply_clock(clock: Clock, state: dict) -> None:
    """Make ``clock`` read what the API's clock reads (``Clock.state()``)."""
    if state.get("frozen"):
        clock.freeze()
    else:
        clock.unfreeze()
    clock.set(float(state["now"]))


class Host:
    """What the scheduler asks of its server, in a process of its own."""

    async_binding = True

    def __init__(self, args: argparse.Namespace, http_: HTTP) -> None:
        from mockkube.apiserver.resources import registry
        from mockkube.client.replica import Replica
        from mockkube.config.features import FeatureGates, RuntimeConfig, served_registry
        from mockkube.config.profile import load_profile

        self.http = http_
        # the server's gates and runtime-config (it passes them merged with its profile's)
        self.feature_gates = FeatureGates.parse(getattr(args, "feature_gates", "") or "")
        self.runtime_config = RuntimeConfig(getattr(args, "runtime_config", "") or None)
        self.runtime_config.validate(registry().group_versions())
        self.registry = served_registry(registry(), self.feature_gates, self.runtime_config)
        self.clock = Clock()
        if args.clock:
            apply_clock(self.clock, json.loads(args.clock))
        self.metrics = Metrics()
        self.cluster = args.cluster
        self.profile = load_profile(args.cluster)
        self.binding_timeout = args.binding_timeout
        self.filter_timeout = args.filter_timeout
        # PodGroups when served (GenericWorkload and scheduling.k8s.io/v1alpha2 on)
        followed = [*FOLLOWED, ("scheduling.k8s.io", "podgroups")]
        rts = []
        for group, plural in followed:
            rt = next((r for r in self.registry.all() if r.group == group and r.plural == plural), None)
            if rt is not None:
                rts.append(rt)
        self.store = Replica(http_, rts)
        self.components: list = []
        self.pacer: Any = None  # gctuning.Pacer once started (``run``)

    def client(self, manager: str) -> RemoteClient:
        return RemoteClient(self.http, self.store, self.registry, manager)

    async def start_scheduler(self) -> None:
        from mockkube import scheduler

        self.components = await scheduler.start(self)

    async def stop_scheduler(self) -> None:
        for c in self.components:
            await c.stop()
        self.components = []

    async def pause(self) -> None:
        """A reset: the scheduler stops, and what it held goes. The retired scheduler
        (informers, queues, caches) is garbage in cycles, frozen with the rest at start-up or
        at the last such collection, so only a collection that reaches frozen objects frees
        it; without one the scheduler the process started with stayed for good after the first
        reset. The pacer runs it at its next quiet tick, not in the reset's path (a full
        collection of this heap takes a loaded machine 0.1-0.2 s)."""
        await self.stop_scheduler()
        if self.pacer is not None:
            self.pacer.owe()

    def idle(self, rvs: dict) -> bool:
        return all(getattr(c, "idle", lambda: True)() for c in self.components) and self.store.caught_up(rvs)


async def _control(host: Host, stop: asyncio.Event) -> None:
    """Answer the server's requests on stdin until it closes."""
    from mockkube.scheduler.explain import explain

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def reply(msg: dict) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        req = json.loads(line)
        op, out = req.get("op"), {"id": req.get("id")}
        try:
            if op == "idle":
                out["idle"] = host.idle(req.get("rvs") or {})
            elif op == "clock":
                apply_clock(host.clock, req["state"])
                for c in host.components:
                    c.resync()
            elif op == "pause":
                await host.pause()
            elif op == "resume":
                if req.get("clock"):
                    apply_clock(host.clock, req["clock"])
                rvs = req.get("rvs") or {}
                while not host.store.caught_up(rvs):
                    await asyncio.sleep(0.002)  # the watches deliver what the reset wrote
                await host.start_scheduler()
            elif op == "explain":
                sched = host.components[0] if host.components else None
                pod = sched.client.get(sched.pods_rt, req["namespace"], req["name"]) if sched else None
                out["report"] = explain(sched, pod) if pod is not None else None
            elif op == "metrics":
                out["text"] = host.metrics.exposition().decode()
            else:
                out["error"] = f"unknown op {op!r}"
        except Exception as e:  # noqa: BLE001 - an answer, not a crash
            log.exception("control request %s failed", op)
            out["error"] = str(e)
        reply(out)
    stop.set()


async def run(args: argparse.Namespace) -> int:
    from mockkube.client import kubeconfigs

    creds = kubeconfigs.load(args.kubeconfig)
    http_ = HTTP(creds, USER_AGENT)
    host = Host(args, http_)
    elector = _elector(args, creds, http_)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(signum: int, frame: Any) -> None:
        # a plain handler runs between bytecodes, also while an allocation holds the loop:
        # the allocator gives up at its next step, then the loop sees the stop
        for c in host.components:
            request_stop = getattr(c, "request_stop", None)
            if request_stop is not None:
                request_stop()
        loop.call_soon_threadsafe(stop.set)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    from mockkube.server import gctuning

    gctuning.tune()
    # the channel is read from the start: its end (the server gone) stops a process that is
    # still waiting for its first lists (e.g. refused by RBAC)
    control = loop.create_task(_control(host, stop)) if args.control else None
    syncing = loop.create_task(host.store.start())
    stopped = loop.create_task(stop.wait())
    # a leader-elected scheduler fills its informers while it waits for the Lease, as upstream's
    ready = asyncio.gather(syncing, elector.acquire()) if elector else syncing
    await asyncio.wait([ready, stopped], return_when=asyncio.FIRST_COMPLETED)
    code = 0
    if not stop.is_set():
        await host.start_scheduler()
        gctuning.settle()
        host.pacer = gctuning.Pacer(loop).start()  # a reset's collection; full ones paced by memory too
        from mockkube.server import memdebug

        memdebug.start(loop, "scheduler")  # only with MOCKKUBE_MEMDEBUG set
        if args.control:
            sys.stdout.write(json.dumps({"ready": True}) + "\n")
            sys.stdout.flush()
        if elector is not None:
            lost = loop.create_task(elector.renew())
            await asyncio.wait([lost, stopped], return_when=asyncio.FIRST_COMPLETED)
            if lost.done():  # upstream exits at once: another scheduler may be acting soon
                print(f"mockkube scheduler: leaderelection lost ({elector.identity})", file=sys.stderr, flush=True)
                code = 1
            lost.cancel()
        else:
            await stop.wait()
    ready.cancel()
    syncing.cancel()
    for c in host.components:
        request_stop = getattr(c, "request_stop", None)
        if request_stop is not None:
            request_stop()
    try:
        await asyncio.wait_for(host.stop_scheduler(), 1.0)
    except asyncio.TimeoutError:
        pass
    if control is not None:
        control.cancel()
    if elector is not None:
        await elector.release()  # ReleaseOnCancel: a standby takes over at its next try
        await elector.lock.http.close()
    if host.pacer is not None:
        host.pacer.stop()
    await host.store.stop()
    await http_.close()
    return code


def _elector(args: argparse.Namespace, creds: Any, http_: HTTP) -> Any:
    """With ``--leader-elect``: a LeaderElector on its own connection (as upstream's leader
    election client), guarding every other write of this process."""
    if not getattr(args, "leader_elect", False):
        return None
    from mockkube.client import leaderelection as le

    try:
        cfg = le.Config(
            name=args.leader_elect_resource_name,
            namespace=args.leader_elect_resource_namespace,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
        )
    except ValueError as e:
        print(f"mockkube scheduler: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    elector = le.LeaderElector(le.HTTPLeaseLock(HTTP(creds, USER_AGENT), cfg.namespace, cfg.name), cfg)
    http_.guard = elector.holds
    print(f"mockkube scheduler: leader election as {elector.identity}", file=sys.stderr, flush=True)
    return elector


def main(args: argparse.Namespace) -> int:
    return asyncio.run(run(args))
