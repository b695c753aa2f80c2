"""A component of the cluster in a process of its own, a client of the API as upstream's
are (DESIGN.md principle 2): ``mockkube scheduler`` (schedulermain.py) and ``mockkube
controller-manager`` (controllermanagermain.py) share what follows.

Informers read a ``Replica`` filled by list-and-watch; writes go over HTTP. With
``--leader-elect`` the process acts only while it holds its Lease (client-go's rules,
``mockkube.client.leaderelection``): its writes are refused otherwise, it releases the Lease
on SIGTERM and exits with status 1 when renewal fails past the deadline. ``mockkube serve``
starts such a process (``mockkube.server.childprocess``) and talks to it over stdin/stdout,
one JSON object per line, each request with an ``id`` answered by a line with the same
``id``:

    {"op": "idle", "rvs": {storage key: rv}}  -> {"idle": bool}  caught up and nothing to do
    {"op": "clock", "state": {"now": t, "frozen": b}}             the cluster clock moved
    {"op": "pause"} / {"op": "resume", "rvs": {...}}             a reset: stop, then start again
    {"op": "explain", "namespace": ns, "name": n} -> {"report": ...}   (the scheduler's)
    {"op": "metrics"} -> {"text": exposition}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import Any, Iterable

from mockkube.client.remote import HTTP, RemoteClient
from mockkube.machinery.clock import Clock
from mockkube.machinery.metrics import Metrics
from mockkube.machinery.registry import ResourceType

log = logging.getLogger("mockkube.component")


def apply_clock(clock: Clock, state: dict) -> None:
    """Make ``clock`` read what the API's clock reads (``Clock.state()``)."""
    if state.get("frozen"):
        clock.freeze()
    else:
        clock.unfreeze()
    clock.set(float(state["now"]))


class Host:
    """What a component asks of its server, in a process of its own. A subclass names the
    component (``name``, ``user_agent``), the resources its informers follow and how its
    components start."""

    name = ""  # "scheduler", "controller-manager": messages and the default Lease
    user_agent = ""
    async_binding = True
    strict_reads = False  # reading an unfollowed resource from the replica raises (replica.NotFollowed)

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
        if getattr(args, "clock", None):
            apply_clock(self.clock, json.loads(args.clock))
        self.metrics = Metrics()
        self.cluster = getattr(args, "cluster", None)
        self.profile = load_profile(self.cluster)
        self.store = Replica(http_, self.followed(), strict=self.strict_reads)
        self.components: list = []
        self.pacer: Any = None  # gctuning.Pacer once started (``run``)

    def followed(self) -> Iterable[ResourceType]:
        """The resources this process's informers read (each listed and watched)."""
        raise NotImplementedError

    async def start_all(self) -> list:
        """Start this process's components; returns them (each with ``async stop()``)."""
        raise NotImplementedError

    def client(self, manager: str) -> RemoteClient:
        return RemoteClient(self.http, self.store, self.registry, manager)

    async def start_components(self) -> None:
        self.components = await self.start_all()

    async def stop_components(self) -> None:
        for c in reversed(self.components):
            await c.stop()
        self.components = []

    async def pause(self) -> None:
        """A reset: the components stop, and what they held goes. The retired components
        (informers, queues, caches) are garbage in cycles, frozen with the rest at start-up or
        at the last such collection, so only a collection that reaches frozen objects frees
        them; without one the components the process started with stayed for good after the
        first reset. The pacer runs it at its next quiet tick, not in the reset's path (a full
        collection of this heap takes a loaded machine 0.1-0.2 s)."""
        await self.stop_components()
        if self.pacer is not None:
            self.pacer.owe()

    async def close(self) -> None:
        """The process ends: what outlives resets goes (a kubelet shard's listening ports)."""

    def idle(self, rvs: dict) -> bool:
        return all(getattr(c, "idle", lambda: True)() for c in self.components) and self.store.caught_up(rvs)

    def explain(self, namespace: str, name: str) -> Any:
        raise ValueError(f"the {self.name} does not explain pods")

    def request_stop(self) -> None:
        for c in self.components:
            fn = getattr(c, "request_stop", None)
            if fn is not None:
                fn()


async def _control(host: Host, stop: asyncio.Event) -> None:
    """Answer the server's requests on stdin until it closes."""
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
                    getattr(c, "resync", lambda: None)()
            elif op == "pause":
                await host.pause()
            elif op == "resume":
                if req.get("clock"):
                    apply_clock(host.clock, req["clock"])
                rvs = req.get("rvs") or {}
                while not host.store.caught_up(rvs):
                    await asyncio.sleep(0.002)  # the watches deliver what the reset wrote
                await host.start_components()
            elif op == "explain":
                out["report"] = host.explain(req["namespace"], req["name"])
            elif op == "metrics":
                out["text"] = host.metrics.exposition().decode()
            else:
                out["error"] = f"unknown op {op!r}"
        except Exception as e:  # noqa: BLE001 - an answer, not a crash
            log.exception("control request %s failed", op)
            out["error"] = str(e)
        reply(out)
    stop.set()


async def run(args: argparse.Namespace, make_host: Any) -> int:
    """Run ``make_host(args, http)``'s components until SIGTERM (or, leader-elected, until the
    Lease is lost: status 1)."""
    from mockkube.client import kubeconfigs

    creds = kubeconfigs.load(args.kubeconfig)
    name, user_agent = make_host.name, make_host.user_agent
    http_ = HTTP(creds, user_agent)
    host = make_host(args, http_)
    elector = _elector(args, creds, http_, name, user_agent)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(signum: int, frame: Any) -> None:
        # a plain handler runs between bytecodes, also while an allocation holds the loop:
        # the allocator gives up at its next step, then the loop sees the stop
        host.request_stop()
        loop.call_soon_threadsafe(stop.set)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    from mockkube.server import gctuning

    gctuning.tune()
    # held over the imports (cli/entry.py); not over the wait for the server and the Lease,
    # which may be long, with retries leaving their tracebacks in cycles
    gctuning.release()
    # the channel is read from the start: its end (the server gone) stops a process that is
    # still waiting for its first lists (e.g. refused by RBAC)
    control = loop.create_task(_control(host, stop)) if getattr(args, "control", False) else None
    syncing = loop.create_task(host.store.start())
    stopped = loop.create_task(stop.wait())
    # a leader-elected component fills its informers while it waits for the Lease, as upstream's
    ready = asyncio.gather(syncing, elector.acquire()) if elector else syncing
    await asyncio.wait([ready, stopped], return_when=asyncio.FIRST_COMPLETED)
    code = 0
    if not stop.is_set():
        # renewing starts with leading, before the components start (their start may wait on
        # the API: a leader whose API stopped answering still loses the Lease in time)
        lost = loop.create_task(elector.renew()) if elector is not None else None
        await host.start_components()
        gctuning.settle()
        # as the API server's: freed heap handed back (a burst's decoded watch events left
        # 39 MB free in glibc's heap at 6,000 pods), full collections paced by memory
        host.pacer = gctuning.Pacer(loop, activity=lambda: host.store.rv).start()
        from mockkube.server import memdebug

        memdebug.start(loop, name)  # only with MOCKKUBE_MEMDEBUG set
        if control is not None:
            sys.stdout.write(json.dumps({"ready": True}) + "\n")
            sys.stdout.flush()
        if lost is not None:
            await asyncio.wait([lost, stopped], return_when=asyncio.FIRST_COMPLETED)
            if lost.done():  # upstream exits at once: another one may be acting soon
                print(f"mockkube {name}: leaderelection lost ({elector.identity})", file=sys.stderr, flush=True)
                code = 1
            lost.cancel()
        else:
            await stop.wait()
    ready.cancel()
    syncing.cancel()
    if host.pacer is not None:
        host.pacer.stop()
    host.request_stop()
    try:
        await asyncio.wait_for(host.stop_components(), 1.0)
    except asyncio.TimeoutError:
        pass
    if control is not None:
        control.cancel()
    if elector is not None:
        await elector.release()  # ReleaseOnCancel: a standby takes over at its next try
        await elector.lock.http.close()
    await host.close()
    await host.store.stop()
    await http_.close()
    return code


def _elector(args: argparse.Namespace, creds: Any, http_: HTTP, name: str, user_agent: str) -> Any:
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
        print(f"mockkube {name}: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    elector = le.LeaderElector(le.HTTPLeaseLock(HTTP(creds, user_agent), cfg.namespace, cfg.name), cfg)
    http_.guard = elector.holds
    print(f"mockkube {name}: leader election as {elector.identity}", file=sys.stderr, flush=True)
    return elector
