"""The process runtime (``kubelet: {runtime: process}``): a container's command runs as a
host process in a sandbox of its own (sandbox.py) with the pod's volumes (volumes.py), and
its exits drive the container statuses and the pod's phase as the kubelet's SyncPod does:
init containers in order, ``restartPolicy`` Always/OnFailure/Never, restarts with the
kubelet's back-off (backoff.py, on the cluster's clock), ``CrashLoopBackOff``,
``StartError`` for a command that cannot be found, ``CreateContainerError`` for a sandbox
that cannot be made. What a container prints is its log (logfile.py). On deletion:
SIGTERM, the grace period on the clock, then SIGKILL.

The runtime lives on the components' loop; the API server's loop reads the registry
(``pod(uid)``) for logs, exec and port-forward.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mockkube.kubelet import lifecycle
from mockkube.kubelet.containerdata import Lookup, simulated_container
from mockkube.kubelet.images import lookup, runs_program, why_simulated
from mockkube.kubelet.runtime import cdi, probes, sandbox, volumes
from mockkube.kubelet.runtime.backoff import Backoff
from mockkube.kubelet.runtime.logfile import LogFile
from mockkube.kubelet.runtime.sandbox import SandboxError
from mockkube.machinery import meta

log = logging.getLogger("mockkube.kubelet.runtime")

SPAWNERS = 4  # sandboxes made at once (each takes bubblewrap 10-40 ms, mostly in the kernel)
HOLDER_COMMAND = ["sleep", "infinity"]  # holds the sandbox of a container whose main process is simulated
_PODS: dict[str, "PodProcs"] = {}  # pod uid -> its processes (uids are unique across servers)
_LOCK = threading.Lock()


def pod(uid: str) -> "PodProcs | None":
    """The process pod with this uid (any loop may ask)."""
    return _PODS.get(uid)


@dataclass
class Instance:
    """One run of a container."""

    number: int  # 0 for the first, restartCount after restarts
    started: float
    log: LogFile
    proc: sandbox.Proc | None = None
    finished: float | None = None
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    create_error: str = ""  # the sandbox could not be made: no process ran
    creating: bool = False  # the sandbox is being made (on the spawner thread)
    spawn: "asyncio.Future | None" = None  # its making, done once made (or failed)
    born: float = field(default_factory=lambda: time.monotonic())  # real time, for port-forward's patience
    probes: list[probes.ProbeState] | None = None  # made once it runs
    kill_at: float | None = None  # being stopped (a failed liveness probe or postStart hook): SIGKILL then
    hooks: int = 0  # lifecycle hooks running

    def probe(self, field_name: str) -> "probes.ProbeState | None":
        return next((p for p in self.probes or () if p.field_name == field_name), None)

    @property
    def started_ok(self) -> bool:
        """``started``: no startup probe, or it succeeded."""
        p = self.probe("startupProbe")
        return p is None or p.result is True

    @property
    def ready_ok(self) -> bool:
        """Ready as far as probes say: started, and no readiness probe or it succeeded."""
        p = self.probe("readinessProbe")
        return self.started_ok and (p is None or p.result is True) and self.kill_at is None

    @property
    def running(self) -> bool:
        return self.finished is None

    def terminated(self, cid: str) -> dict:
        t = {
            "exitCode": self.exit_code,
            "reason": self.reason or ("Completed" if self.exit_code == 0 else "Error"),
            "startedAt": meta.rfc3339(self.started),
            "finishedAt": meta.rfc3339(self.finished if self.finished is not None else self.started),
            "containerID": cid,
        }
        if self.message:
            t["message"] = self.message
        return t


@dataclass
class ContainerState:
    name: str
    spec: dict
    init: bool = False
    sidecar: bool = False
    current: Instance | None = None
    previous: Instance | None = None
    starts: int = 0
    backoff: Backoff = field(default_factory=Backoff)
    waiting: tuple[str, str] | None = None  # shown while it cannot start
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    reported_backoff: float | None = None  # the exit a BackOff event was sent for
    simulated: bool = False  # no command, image not mapped: its process only holds the sandbox

    @property
    def running(self) -> bool:
        return self.current is not None and self.current.running and not self.current.create_error


@dataclass
class PodProcs:
    uid: str
    key: tuple
    dir: Path
    hostname: str
    containers: list[ContainerState]
    vols: dict[str, str]
    sa_dir: str | None
    killing: bool = False
    kill_deadline: float = 0.0
    killed_hard: bool = False
    events: list = field(default_factory=list)  # events of sandboxes made since the last sync
    pause: sandbox.Proc | None = None  # holds the pod's network namespace (network: pod)
    lock: threading.Lock = field(default_factory=threading.Lock)
    api_listener: object = None  # a socket in the pod's network: the API server's address there
    api_server: object = None  # its asyncio server, forwarding to the API server
    cdi: dict[str, list[str]] = field(default_factory=dict)  # container -> its prepared CDI device IDs
    grace: float = 30.0  # terminationGracePeriodSeconds
    pod_ip: str = ""
    full_name: str = ""  # name_namespace(uid), as the kubelet names a pod in messages
    namespace: str = ""
    holder: bool = False  # a pod of the simulated runtime: sandboxes only for exec (exec_sandbox)
    # (container, probe type, result) -> probes run: the prober's prober_probe_total (nodeproxy.py)
    probe_counts: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def container(self, name: str) -> ContainerState | None:
        return next((c for c in self.containers if c.name == name), None)

    def young(self, seconds: float) -> bool:
        """Whether a container of the pod started less than ``seconds`` ago (of real time)."""
        now = time.monotonic()
        return any(
            c.current is not None and c.current.running and now - c.current.born < seconds for c in self.containers
        )


Event = tuple[str, str, str, str]  # (type, reason, message, fieldPath)


class ProcessRuntime:
    def __init__(
        self,
        root: Path,
        clock: Callable[[], float],
        on_change: Callable[[tuple], None],
        lookup: Lookup,
        token: volumes.TokenFn,
        endpoint: Callable[[], tuple[str, str, bytes]] = lambda: ("10.96.0.1", "443", b""),
        network: str = "host",
        node_path: Callable[[str, str], str] = lambda node, path: path,
        cdi_dirs: Callable[[str], list[str]] = lambda node: [],
        images: dict[str, list[str]] | None = None,
        roots: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.clock = clock
        self.on_change = on_change
        self.lookup = lookup
        self.token = token
        self.endpoint = endpoint  # (host, port, CA PEM): where pods reach the API server over TLS
        self.node_path = node_path  # a hostPath on a node -> the host's path (the node's kubelet directories)
        self.cdi_dirs = cdi_dirs  # a node's CDI spec directories
        self.images = images if images is not None else {}  # image -> its entrypoint (kubelet.images)
        self.roots = roots if roots is not None else {}  # image -> its root filesystem (kubelet.images)
        self.service_hosts: Callable[[str], list[tuple[str, list[str]]]] = lambda namespace: []
        # a pod's own network is up (its uid, the pid holding it) / gone: Services listen in it
        self.on_network: Callable[[str, int], None] = lambda uid, pid: None
        self.on_network_end: Callable[[str], None] = lambda uid: None
        self.mine: set[str] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.spawner: ThreadPoolExecutor | None = None
        self.network = network  # "host": the host's; "pod": a network namespace per pod (loopback only)
        raise_fd_limit()  # a running container holds five descriptors (output, exit, log, bubblewrap's messages)

    @property
    def api(self) -> tuple[str, str]:
        host, port, _ = self.endpoint()
        return host, port

    @property
    def ca(self) -> bytes:
        return self.endpoint()[2]

    # -- set-up -----------------------------------------------------------------------------
    def _setup(self, pod: dict, key: tuple, ip: str, holder: bool = False) -> PodProcs:
        m = pod["metadata"]
        spec = pod.get("spec") or {}
        d = self.root / f"{m.get('namespace', '')}_{m['name']}_{m['uid']}"
        d.mkdir(parents=True, exist_ok=True)
        node = spec.get("nodeName", "")
        vols = volumes.materialize(
            pod, d / "volumes", self.lookup, self.token, self.ca, lambda path: self.node_path(node, path)
        )
        sa = self.lookup("ServiceAccount", m.get("namespace", ""), spec.get("serviceAccountName") or "default")
        automount = (sa or {}).get("automountServiceAccountToken") is not False
        sa_dir = volumes.service_account(pod, d / "volumes", self.token, self.ca, automount)
        hostname = spec.get("hostname") or m["name"]
        (d / "hostname").write_text(hostname + "\n")
        cs = [
            ContainerState(c["name"], c, init=True, sidecar=c.get("restartPolicy") == "Always")
            for c in spec.get("initContainers") or ()
        ]
        cs += [ContainerState(c["name"], c) for c in spec.get("containers") or ()]
        pp = PodProcs(m["uid"], key, d, hostname, cs, vols, sa_dir)
        grace = spec.get("terminationGracePeriodSeconds")
        pp.grace = float(grace if grace is not None else 30)
        pp.pod_ip = ip
        pp.full_name = f"{_pod_name(pod)}({m['uid']})"
        pp.namespace = m.get("namespace", "")
        pp.holder = holder
        self._write_hosts(pp)
        with _LOCK:
            _PODS[m["uid"]] = pp
        self.mine.add(m["uid"])
        return pp

    def _write_hosts(self, pp: PodProcs) -> None:
        """The pod's /etc/hosts: the kubelet's lines, then the Services' names
        (services.py), rewritten in place when they change (the file is bound into the
        containers)."""
        text = (
            "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            f"{pp.pod_ip}\t{pp.hostname}\n"
        )
        for addr, names in self.service_hosts(pp.namespace):
            text += f"{addr}\t{' '.join(names)}\n"
        path = pp.dir / "hosts"
        with open(path, "r+" if path.exists() else "w") as f:
            f.write(text)
            f.truncate()

    def refresh_hosts(self) -> None:
        """Services changed: every process pod's /etc/hosts again."""
        for uid in list(self.mine):
            pp = _PODS.get(uid)
            if pp is not None:
                try:
                    self._write_hosts(pp)
                except OSError:  # its directory is going
                    pass

    # -- starting ---------------------------------------------------------------------------
    def entrypoint(self, image: str) -> list[str] | None:
        """The program an image maps to (``kubelet.images``: by the reference as written, or
        normalized as the kubelet reports it), or None."""
        return lookup(self.images, image)

    def root_of(self, image: str) -> str:
        """The root filesystem an image maps to (a directory; ``kubelet.images``), or "" (the
        host's root)."""
        return lookup(self.roots, image) or ""

    def runs(self, c: dict) -> bool:
        """Whether a container runs a program of its own (images.runs_program)."""
        return runs_program(c, lambda image: self.entrypoint(image) is not None)

    def _argv(self, c: dict, env: dict[str, str]) -> list[str]:
        if not self.runs(c):
            return list(HOLDER_COMMAND)
        entry = None if c.get("command") else self.entrypoint(c.get("image") or "")
        argv = [str(a) for a in list(c.get("command") or entry or ()) + list(c.get("args") or ())]
        if self.root_of(c.get("image") or ""):
            return argv  # the image's own programs
        if argv and argv[0] in ("python", "python3") and not shutil.which(argv[0], path=env.get("PATH")):
            argv[0] = sys.executable  # the host has no such Python on the container's PATH: the server's
        return argv

    def _resolve(self, exe: str, env: dict[str, str], cwd: str, pp: PodProcs, c: dict, root: str = "") -> bool:
        """Whether the sandbox will find the executable (the root is the host's or the
        image's, plus the mounts)."""

        if "/" in exe:
            path = exe if exe.startswith("/") else os.path.join(cwd or "/", exe)
            for mnt in volumes.mounts({"spec": {"volumes": []}, "metadata": {}}, c, pp.vols, None, pp.dir):
                t = mnt.target.rstrip("/")
                if path == t or path.startswith(t + "/"):
                    path = mnt.source + path[len(t) :]
                    return os.path.isfile(path) and os.access(path, os.X_OK)
        return find_executable(root, exe, env.get("PATH", ""), cwd)

    def _start(
        self, pod: dict, pp: PodProcs, cs: ContainerState, now: float, events: list[Event]
    ) -> "asyncio.Future | None":
        c = cs.spec
        fp = f"spec.{'initContainers' if cs.init else 'containers'}{{{cs.name}}}"
        if cs.current is not None and cs.current.create_error:
            number = cs.current.number  # no container was made: this is the same attempt again
        else:
            number = cs.starts
            cs.starts += 1
            if cs.current is not None:
                cs.previous = cs.current
                self._drop_old_logs(pp, cs)
        inst = Instance(number, now, LogFile(pp.dir / "logs" / cs.name / f"{number}.log", self.clock))
        cs.current = inst
        env = dict(simulated_container(pod, c, self.clock, self.lookup).env)
        env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"] = self.api
        env.setdefault("HOME", "/root")
        cs.env, cs.cwd = env, c.get("workingDir") or "/"
        argv = self._argv(c, env)
        cs.simulated = not self.runs(c)
        root = self.root_of(c.get("image") or "")
        if not self._resolve(argv[0], env, cs.cwd, pp, c, root):
            why = "executable file not found in $PATH" if "/" not in argv[0] else "no such file or directory"
            inst.finished, inst.exit_code, inst.reason = now, 128, "StartError"
            inst.message = (
                "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
                f'runc create failed: unable to start container process: exec: "{argv[0]}": {why}: unknown'
            )
            inst.log.close()
            events.append(("Warning", "Failed", f"Error: {inst.message}", fp))
            self.on_change(pp.key)  # its restart (or the pod's end) is decided on the next sync
            return None
        try:
            mounts = volumes.mounts(pod, c, pp.vols, pp.sa_dir, pp.dir)
            ids = pp.cdi.get(cs.name) or []
            if ids:  # the prepared devices, as the container runtime applies their CDI specs
                node = (pod.get("spec") or {}).get("nodeName", "")
                found = cdi.edits(self.cdi_dirs(node), ids)
                env.update(found.env)
                # a spec's hostPath is a path on the node (its kubelet directories are ROOT/NODE)
                mounts += [sandbox.Mount(self.node_path(node, h), t, ro) for h, t, ro in found.mounts]
        except OSError as e:
            self._create_failed(inst, str(e), now)
            events.append(("Warning", "Failed", f"Error: {inst.create_error}", fp))
            self.on_change(pp.key)
            return None
        # bubblewrap takes 10-40 ms to build a sandbox: that happens on the spawner thread, not here
        inst.creating = True
        loop = self.loop = self.loop or asyncio.get_running_loop()
        if self.network == "pod":  # the API server is reached through the pod's own loopback
            env["KUBERNETES_SERVICE_HOST"] = "127.0.0.1"
        fut = inst.spawn = loop.run_in_executor(self._spawner(), self._make, pp, argv, env, mounts, cs.cwd, root)
        fut.add_done_callback(lambda f: self._spawned(pp, cs, inst, f, fp))
        return fut

    def _make(self, pp: PodProcs, argv: list[str], env: dict, mounts: list, cwd: str, root: str = "") -> sandbox.Proc:
        """On a spawner thread: the pod's network (once), then the container's sandbox in it."""
        netns = 0
        if self.network == "pod":
            with pp.lock:
                if pp.pause is None:
                    pp.pause = sandbox.spawn_pause(pp.uid)
                    pid, port = pp.pause.child_pid, int(self.api[1])
                    try:
                        pp.api_listener = sandbox.in_netns(pid, lambda: sandbox.listener("127.0.0.1", port))
                    except OSError as e:
                        log.warning("pod %s: no API server address in its network: %s", pp.uid, e)
            netns = pp.pause.child_pid
        return sandbox.spawn(argv, env, mounts, pp.hostname, cwd, netns, root=root)

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection to the API server's address inside a pod's network: forwarded to it."""
        try:
            up_r, up_w = await asyncio.open_connection(self.api[0], int(self.api[1]))
        except OSError:
            writer.close()
            return

        async def pipe(a: asyncio.StreamReader, b: asyncio.StreamWriter) -> None:
            try:
                while data := await a.read(65536):
                    b.write(data)
                    await b.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                b.close()

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))

    def _spawner(self) -> ThreadPoolExecutor:
        """The threads that start sandboxes. They live as long as the runtime: a sandbox's
        --die-with-parent follows the thread that started it."""
        if self.spawner is None:
            self.spawner = ThreadPoolExecutor(max_workers=SPAWNERS, thread_name_prefix="mockkube-sandboxes")
        return self.spawner

    def _spawned(self, pp: PodProcs, cs: ContainerState, inst: Instance, fut: asyncio.Future, fp: str) -> None:
        inst.creating = False
        now = self.clock()
        exc = SandboxError("cancelled") if fut.cancelled() else fut.exception()
        if exc is not None:
            self._create_failed(inst, str(exc), now)
            pp.events.append(("Warning", "Failed", f"Error: {inst.create_error}", fp))
        else:
            inst.proc = fut.result()
            if pp.uid not in self.mine or inst.finished is not None:  # removed while it was being made
                self._discard(inst.proc)
                self._end_network(pp)
                return
            inst.started = now
            self._watch(pp, cs, inst)
            if pp.api_listener is not None and pp.api_server is None:
                pp.api_server = asyncio.ensure_future(asyncio.start_server(self._proxy, sock=pp.api_listener))
                if pp.pause is not None:
                    self.on_network(pp.uid, pp.pause.child_pid)
            if pp.killing:
                os.kill(inst.proc.child_pid, signal.SIGKILL)
            if pp.holder:  # only exec's sandbox: no events, no hooks
                self.on_change(pp.key)
                return
            if inst.number == 0:
                image = cs.spec.get("image", "")
                pp.events.append(("Normal", "Pulled", f'Container image "{image}" already present on machine', fp))
            pp.events.append(("Normal", "Created", f"Created container: {cs.name}", fp))
            pp.events.append(("Normal", "Started", f"Started container {cs.name}", fp))
            if cs.simulated and inst.number == 0:
                pp.events.append(("Normal", "Simulated", why_simulated(cs.spec), fp))
            self._post_start(pp, cs, inst, fp)
        if pp.uid in self.mine:
            self.on_change(pp.key)

    def _end_network(self, pp: PodProcs) -> None:
        if pp.pause is not None:
            self.on_network_end(pp.uid)
        with pp.lock:
            pause, pp.pause = pp.pause, None
            listener, pp.api_listener = pp.api_listener, None
            server, pp.api_server = pp.api_server, None
        if pause is not None:
            self._discard(pause)
        if server is not None:
            if server.done() and not server.cancelled() and server.exception() is None:
                server.result().close()
            else:
                server.cancel()
        if listener is not None:
            listener.close()

    @staticmethod
    def _discard(proc: sandbox.Proc) -> None:
        for pid in (proc.child_pid, proc.popen.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.popen.wait()
        for fd in (proc.stdout, proc.stderr, proc.setup):
            if fd >= 0:
                os.close(fd)

    def _create_failed(self, inst: Instance, msg: str, now: float) -> None:
        inst.finished, inst.exit_code = now, 128
        inst.create_error = msg or "the sandbox could not be created"
        inst.log.close()

    def _drop_old_logs(self, pp: PodProcs, cs: ContainerState) -> None:
        """The kubelet keeps the current and the previous instance's logs."""
        keep = {i.log.path for i in (cs.current, cs.previous) if i is not None}
        d = pp.dir / "logs" / cs.name
        for p in d.glob("*.log") if d.exists() else ():
            if p not in keep:
                p.unlink(missing_ok=True)

    def _watch(self, pp: PodProcs, cs: ContainerState, inst: Instance) -> None:
        loop = self.loop = self.loop or asyncio.get_running_loop()
        proc = inst.proc
        assert proc is not None
        for fd, stream in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            loop.add_reader(fd, self._read, fd, stream, inst)
        proc.pidfd = os.pidfd_open(proc.popen.pid)
        loop.add_reader(proc.pidfd, self._exited, pp, cs, inst)

    def _read(self, fd: int, stream: str, inst: Instance) -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            inst.log.write(stream, data)
            return
        self.loop.remove_reader(fd)  # type: ignore[union-attr]

    def _drain(self, fd: int, stream: str, inst: Instance) -> None:
        if fd < 0:
            return
        self.loop.remove_reader(fd)  # type: ignore[union-attr]
        try:
            while data := os.read(fd, 65536):
                inst.log.write(stream, data)
        except OSError:
            pass
        os.close(fd)

    def _exited(self, pp: PodProcs, cs: ContainerState, inst: Instance) -> None:
        proc = inst.proc
        assert proc is not None and self.loop is not None
        self.loop.remove_reader(proc.pidfd)
        os.close(proc.pidfd)
        proc.pidfd = -1
        rc = proc.popen.wait()
        self._drain(proc.stdout, "stdout", inst)
        self._drain(proc.stderr, "stderr", inst)
        proc.stdout = proc.stderr = -1
        setup = sandbox.setup_messages(proc)
        now = self.clock()
        if setup.startswith("bwrap:") and rc == 1:
            self._create_failed(inst, setup, now)
        else:
            inst.finished, inst.exit_code = now, rc
            inst.log.close()
        if pp.uid in self.mine:
            self.on_change(pp.key)

    # -- probes and lifecycle hooks ---------------------------------------------------------------
    def _target(self, pp: PodProcs, cs: ContainerState, inst: Instance) -> probes.Target:
        assert inst.proc is not None
        netns = pp.pause.child_pid if pp.pause is not None else 0
        return probes.Target(inst.proc.child_pid, dict(cs.env), cs.cwd, pp.pod_ip or "127.0.0.1", cs.spec, netns)

    def _probe(self, pp: PodProcs, cs: ContainerState, inst: Instance, now: float, wakes: list[float]) -> None:
        """Run the container's probes that are due (startup first; liveness and readiness
        once it succeeded), as the kubelet's probe workers do, each every periodSeconds."""
        if inst.probes is None:
            inst.probes = probes.states(cs.spec, inst.started)
        startup = inst.probe("startupProbe")
        for ps in inst.probes:
            if ps is startup and ps.result is True:
                continue  # a startup probe stops once it succeeded
            if ps is not startup and startup is not None and startup.result is not True:
                continue
            if ps.inflight:
                continue
            if now >= ps.next_at:
                ps.inflight, ps.next_at = True, now + ps.period
                task = asyncio.ensure_future(probes.run(ps.spec, self._target(pp, cs, inst), ps.timeout))
                task.add_done_callback(lambda f, ps=ps: self._probed(pp, cs, inst, ps, f))
            wakes.append(ps.next_at)

    def _probed(
        self, pp: PodProcs, cs: ContainerState, inst: Instance, ps: probes.ProbeState, fut: asyncio.Future
    ) -> None:
        ps.inflight = False
        if cs.current is not inst or not inst.running or pp.uid not in self.mine or pp.killing:
            return
        try:
            ok, out = fut.result()
        except Exception as e:  # noqa: BLE001 - a probe that cannot run fails
            ok, out = False, str(e)
        changed = ps.record(ok)
        counted = (cs.name, ps.kind, "successful" if ok else "failed")
        pp.probe_counts[counted] = pp.probe_counts.get(counted, 0) + 1
        fp = f"spec.{'initContainers' if cs.init else 'containers'}{{{cs.name}}}"
        if not ok:
            pp.events.append(("Warning", "Unhealthy", f"{ps.kind} probe failed: {out}", fp))
        if ps.result is False and ps.kind in ("Liveness", "Startup") and inst.kill_at is None:
            pp.events.append(
                ("Normal", "Killing", f"Container {cs.name} failed {ps.kind.lower()} probe, will be restarted", fp)
            )
            grace = ps.spec.get("terminationGracePeriodSeconds")
            self._stop_container(pp, cs, inst, float(grace) if grace is not None else pp.grace)
        if changed or not ok:
            self.on_change(pp.key)

    def _stop_container(self, pp: PodProcs, cs: ContainerState, inst: Instance, grace: float) -> None:
        """Stop one container as the kubelet's killContainer does: its preStop hook, then
        SIGTERM; SIGKILL at the end of the grace period (on the clock, from the pod worker)."""
        inst.kill_at = self.clock() + max(grace, 0.0)
        self._pre_stop(pp, cs, inst, grace)
        self.on_change(pp.key)

    def _pre_stop(self, pp: PodProcs, cs: ContainerState, inst: Instance, grace: float) -> None:
        """The preStop hook (if any) and then SIGTERM to the container's PID 1."""
        handler = (cs.spec.get("lifecycle") or {}).get("preStop")
        if not handler or inst.proc is None:
            self._kill_instance(inst, signal.SIGTERM if grace > 0 else signal.SIGKILL)
            return
        fp = f"spec.{'initContainers' if cs.init else 'containers'}{{{cs.name}}}"

        def done(f: asyncio.Future) -> None:
            inst.hooks -= 1
            msg = "" if f.cancelled() else (str(f.exception()) if f.exception() else f.result())
            if msg:
                pp.events.append(("Warning", "FailedPreStopHook", msg, fp))
                if pp.uid in self.mine:
                    self.on_change(pp.key)
            self._kill_instance(inst, signal.SIGTERM)

        inst.hooks += 1
        target = self._target(pp, cs, inst)
        task = asyncio.ensure_future(probes.hook(handler, target, max(grace, 1.0), cs.name, pp.full_name))
        task.add_done_callback(done)

    def _post_start(self, pp: PodProcs, cs: ContainerState, inst: Instance, fp: str) -> None:
        handler = (cs.spec.get("lifecycle") or {}).get("postStart")
        if not handler:
            return

        def done(f: asyncio.Future) -> None:
            inst.hooks -= 1
            msg = "" if f.cancelled() else (str(f.exception()) if f.exception() else f.result())
            if not msg or cs.current is not inst or not inst.running or pp.uid not in self.mine:
                return
            pp.events.append(("Warning", "FailedPostStartHook", msg, fp))
            pp.events.append(("Normal", "Killing", "FailedPostStartHook", fp))
            self._stop_container(pp, cs, inst, pp.grace)

        inst.hooks += 1
        task = asyncio.ensure_future(probes.hook(handler, self._target(pp, cs, inst), pp.grace, cs.name, pp.full_name))
        task.add_done_callback(done)

    @staticmethod
    def _kill_instance(inst: Instance, sig: int) -> None:
        if inst.running and inst.proc is not None:
            try:
                os.kill(inst.proc.child_pid, sig)
            except ProcessLookupError:
                pass

    # -- exec into a pod of the simulated runtime ---------------------------------------------
    async def exec_sandbox(self, pod: dict, container: str) -> ContainerState:
        """The sandbox an exec into a simulated container runs in (a pod none of whose
        containers runs a program of its own): made at the first exec, with the pod's volumes,
        environment and working directory, its process only holding it; it goes with the pod.
        Runs on the components' loop. SandboxError when it cannot be made."""
        m = pod["metadata"]
        uid = m["uid"]
        pp = _PODS.get(uid) if uid in self.mine else None
        if pp is None:
            ip = (pod.get("status") or {}).get("podIP") or ""
            pp = self._setup(pod, ("pod", m.get("namespace", ""), m["name"]), ip, holder=True)
        cs = pp.container(container)
        if cs is None:
            raise SandboxError(f"container {container} is not in the pod")
        for _ in range(3):
            if cs.running and cs.current is not None and cs.current.proc is not None:
                return cs
            cur = cs.current
            if cur is not None and cur.creating and cur.spawn is not None:  # another exec is making it
                await asyncio.wait([cur.spawn])
                continue
            fut = self._start(pod, pp, cs, self.clock(), [])
            if fut is None or cs.current is None:
                raise SandboxError(cs.current.message if cs.current is not None else "no sandbox")
            await asyncio.wait([fut])
            if cs.current.create_error:
                raise SandboxError(cs.current.create_error)
        if cs.running and cs.current is not None and cs.current.proc is not None:
            return cs
        raise SandboxError("the sandbox's process ended at once")

    # -- the pod worker -------------------------------------------------------------------------
    def sync(
        self, pod: dict, key: tuple, now: float, ip: str, host_ip: str, cdi_ids: dict[str, list[str]] | None = None
    ) -> tuple[dict, float | None, list[Event]]:
        """Start what should run, restart what exited (after its back-off), report the status;
        raises volumes.VolumeError while a volume cannot be set up. ``cdi_ids``: each
        container's prepared CDI devices."""
        uid = pod["metadata"]["uid"]
        pp = _PODS.get(uid) if uid in self.mine else None
        if pp is None:
            pp = self._setup(pod, key, ip)
        if cdi_ids is not None:
            pp.cdi = cdi_ids
        events: list[Event] = pp.events
        pp.events = []
        wakes: list[float] = []
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        initialized, init_failed = True, False
        if pp.killing:
            if not pp.killed_hard and now >= pp.kill_deadline:
                self._signal(pp, signal.SIGKILL)
                pp.killed_hard = True
            elif not pp.killed_hard:
                wakes.append(pp.kill_deadline)
        else:
            for cs in pp.containers:
                if not cs.init:
                    continue
                cur = cs.current
                if cs.sidecar:
                    if cur is None:
                        self._start(pod, pp, cs, now, events)
                    elif not cur.running or cur.create_error:
                        self._restart(pod, pp, cs, now, events, wakes)
                    if not cs.running:
                        initialized = False
                        break
                    continue
                if cur is None:
                    self._start(pod, pp, cs, now, events)
                    cur = cs.current
                if cur is not None and cur.running:
                    initialized = False
                    break
                if cur is not None and cur.exit_code == 0 and not cur.create_error:
                    continue
                initialized = False
                if policy == "Never" and not cur.create_error:
                    init_failed = True
                else:
                    self._restart(pod, pp, cs, now, events, wakes)
                break
            if initialized:
                for cs in pp.containers:
                    if cs.init:
                        continue
                    cur = cs.current
                    if cur is None:
                        self._start(pod, pp, cs, now, events)
                    elif not cur.running and self._restarts(cs, policy):
                        self._restart(pod, pp, cs, now, events, wakes)
        if ip:
            pp.pod_ip = ip
        for cs in pp.containers:
            inst = cs.current
            if inst is None or not cs.running or inst.proc is None:
                continue
            if inst.kill_at is not None:  # stopping after a failed probe or hook
                if now >= inst.kill_at:
                    self._kill_instance(inst, signal.SIGKILL)
                else:
                    wakes.append(inst.kill_at)
                continue
            if not pp.killing and (not cs.init or cs.sidecar):
                self._probe(pp, cs, inst, now, wakes)
        status = self._status(pod, pp, policy, initialized, init_failed, ip, host_ip, now)
        wake = min(wakes) if wakes else None
        return status, wake, events

    def _restarts(self, cs: ContainerState, policy: str) -> bool:
        cur = cs.current
        if cur is None or cur.running:
            return False
        if cur.create_error or cs.sidecar:
            return True
        if cs.init:
            return cur.exit_code != 0 and policy != "Never"
        return policy == "Always" or (policy == "OnFailure" and cur.exit_code != 0)

    def _restart(
        self, pod: dict, pp: PodProcs, cs: ContainerState, now: float, events: list[Event], wakes: list[float]
    ) -> None:
        cur = cs.current
        assert cur is not None and cur.finished is not None
        if cs.backoff.in_backoff_since(cur.finished, now):
            wakes.append(cs.backoff.until(cur.finished))
            if cs.reported_backoff != cur.finished:
                cs.reported_backoff = cur.finished
                fp = f"spec.{'initContainers' if cs.init else 'containers'}{{{cs.name}}}"
                events.append(
                    (
                        "Warning",
                        "BackOff",
                        f"Back-off restarting failed container {cs.name} in pod {_pod_name(pod)}",
                        fp,
                    )
                )
            return
        cs.backoff.next(cur.finished)
        self._start(pod, pp, cs, now, events)

    # -- status -------------------------------------------------------------------------------
    def _status(
        self,
        pod: dict,
        pp: PodProcs,
        policy: str,
        initialized: bool,
        init_failed: bool,
        ip: str,
        host_ip: str,
        now: float,
    ) -> dict:
        uid = pp.uid
        inits, mains = [], []
        for cs in pp.containers:
            st = lifecycle._base(pod, cs.spec)
            cur, prev = cs.current, cs.previous
            st["restartCount"] = max(cs.starts - 1, 0)
            if cur is not None:
                st["imageID"] = lifecycle.image_id(cs.spec.get("image", ""))
                st["image"] = lifecycle.normalize_image(cs.spec.get("image", ""))
            cid = lifecycle.container_id(uid, cs.name, cur.number) if cur is not None else ""
            if cur is not None and not cur.create_error:
                st["containerID"] = cid
            if prev is not None:
                st["lastState"] = {"terminated": prev.terminated(lifecycle.container_id(uid, cs.name, prev.number))}
            if cur is None:
                reason = "ContainerCreating"
                if not cs.init and pp.containers[0].init and not initialized:
                    reason = "PodInitializing"
                st["state"] = {"waiting": {"reason": reason}}
            elif cur.create_error:
                st["state"] = {"waiting": {"reason": "CreateContainerError", "message": cur.create_error}}
            elif cur.creating:
                st["state"] = {"waiting": {"reason": "ContainerCreating"}}
            elif cur.running:
                st["state"] = {"running": {"startedAt": meta.rfc3339(cur.started)}}
                st["started"] = cur.started_ok
                st["ready"] = not pp.killing and cur.ready_ok
            elif (
                self._restarts(cs, policy)
                and not pp.killing
                and cur.finished is not None
                and cs.backoff.in_backoff_since(cur.finished, now)
            ):
                st["lastState"] = {"terminated": cur.terminated(cid)}
                st["state"] = {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off {cs.backoff.describe()} restarting failed container={cs.name} "
                        f"pod={_pod_name(pod)}({uid})",
                    }
                }
            else:
                st["state"] = {"terminated": cur.terminated(cid)}
            (inits if cs.init else mains).append(st)
        phase = self._phase(pp, policy, initialized, init_failed, mains)
        terminal = phase in ("Succeeded", "Failed")
        if terminal:
            for s in inits + mains:
                s["ready"] = False
        all_ready = initialized and bool(mains) and all(s["ready"] for s in mains) and not pp.killing
        not_ready = [s["name"] for s in mains if not s["ready"]]
        conds = [
            {"type": "PodReadyToStartContainers", "status": "False" if terminal else "True"},
            lifecycle._cond(
                "Initialized",
                initialized or terminal,
                "ContainersNotInitialized",
                "containers with incomplete status: ["
                + " ".join(s["name"] for s in inits if "terminated" not in s["state"] and not s.get("started"))
                + "]",
            ),
            lifecycle._ready_cond("ContainersReady", all_ready, terminal, not_ready),
            lifecycle._ready_cond("Ready", all_ready, terminal, not_ready),
        ]
        status = {
            "phase": phase,
            "conditions": conds,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "containerStatuses": mains,
        }
        if inits:
            status["initContainerStatuses"] = inits
        return status

    def _phase(self, pp: PodProcs, policy: str, initialized: bool, init_failed: bool, mains: list[dict]) -> str:
        """The kubelet's getPhase."""
        if init_failed:
            return "Failed"
        if pp.killing and not any(cs.running for cs in pp.containers):
            codes = [cs.current.exit_code for cs in pp.containers if not cs.init and cs.current is not None]
            return "Succeeded" if codes and all(c == 0 for c in codes) else "Failed"
        if not initialized:
            return "Pending"
        running = waiting = stopped = succeeded = 0
        for st in mains:
            s = st["state"]
            if "running" in s:
                running += 1
            elif "terminated" in s:
                stopped += 1
                succeeded += s["terminated"]["exitCode"] == 0
            elif "terminated" in (st.get("lastState") or {}):
                stopped += 1
            else:
                waiting += 1
        if waiting:
            return "Pending"
        if running:
            return "Running"
        if stopped:
            if policy == "Always":
                return "Running"
            if stopped == succeeded:
                return "Succeeded"
            if policy == "Never":
                return "Failed"
            return "Running"
        return "Pending"

    # -- stopping -------------------------------------------------------------------------------
    def has(self, uid: str) -> bool:
        return uid in self.mine

    def kill(self, uid: str, grace: float, now: float) -> bool:
        """Start the graceful stop (SIGTERM now, SIGKILL at the end of the grace period);
        True once nothing runs any more."""
        pp = _PODS.get(uid) if uid in self.mine else None
        if pp is None:
            return True
        if not pp.killing:
            pp.killing = True
            pp.kill_deadline = now + max(grace, 0.0)
            if grace > 0:  # each container's preStop hook, then its SIGTERM
                for cs in pp.containers:
                    if cs.running and cs.current is not None and cs.current.proc is not None:
                        self._pre_stop(pp, cs, cs.current, grace)
            else:
                self._signal(pp, signal.SIGKILL)
            pp.killed_hard = grace <= 0
        return not any(cs.running for cs in pp.containers)

    def kill_deadline(self, uid: str) -> float | None:
        pp = _PODS.get(uid)
        return pp.kill_deadline if pp is not None and pp.killing and not pp.killed_hard else None

    def _signal(self, pp: PodProcs, sig: int) -> None:
        for cs in pp.containers:
            if cs.running and cs.current is not None and cs.current.proc is not None:
                try:
                    os.kill(cs.current.proc.child_pid, sig)
                except ProcessLookupError:
                    pass

    def remove(self, uid: str, reap: list | None = None) -> None:
        """Kill what still runs (at once) and forget the pod; its directory goes. The killed
        processes are reaped and the directory removed on a thread of their own (a namespace
        takes ~10 ms to go), or added to ``reap`` for the caller to do so."""
        pp = _PODS.get(uid) if uid in self.mine else None
        if pp is None:
            return
        if reap is None:
            mine: list = []
            self.remove(uid, mine)
            _clean_up(mine)
            return
        self.mine.discard(uid)
        with _LOCK:
            _PODS.pop(uid, None)
        for cs in pp.containers:
            inst = cs.current
            if inst is None:
                continue
            if inst.proc is None:  # never made, or still being made (then it is discarded once made)
                if inst.running:
                    inst.finished, inst.exit_code = self.clock(), 137
                inst.log.close()
                continue
            proc = inst.proc
            if inst.running:
                for pid in (proc.child_pid, proc.popen.pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                reap.append(proc.popen)
            if self.loop is not None:
                for fd in (proc.pidfd, proc.stdout, proc.stderr):
                    if fd >= 0:
                        try:
                            self.loop.remove_reader(fd)
                        except Exception:  # noqa: BLE001 - a closed loop
                            pass
                        os.close(fd)
                proc.pidfd = proc.stdout = proc.stderr = -1
            if proc.setup >= 0:
                os.close(proc.setup)
                proc.setup = -1
            if inst.running:
                inst.finished, inst.exit_code = self.clock(), 137
            inst.log.close()
        self._end_network(pp)
        reap.append(pp.dir)

    def stop_all(self) -> None:
        for uid in self.mine:  # every container at once, then each pod's clean-up
            pp = _PODS.get(uid)
            for cs in pp.containers if pp is not None else ():
                if cs.running and cs.current is not None and cs.current.proc is not None:
                    try:
                        os.kill(cs.current.proc.child_pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        reap: list[subprocess.Popen | Path] = []
        for uid in list(self.mine):
            self.remove(uid, reap)
        _clean_up(reap)
        if self.spawner is not None:
            self.spawner.shutdown(wait=False, cancel_futures=True)
            self.spawner = None


def _clean_up(reap: list) -> None:
    """Reap killed processes and remove pod directories, beside the loop."""

    def clean() -> None:
        for x in reap:
            x.wait() if isinstance(x, subprocess.Popen) else shutil.rmtree(x, ignore_errors=True)

    if reap:
        threading.Thread(target=clean, name="mockkube-reaper", daemon=True).start()


def find_executable(root: str, exe: str, path: str, cwd: str) -> bool:
    """Whether ``exe`` names an executable file under the root filesystem ``root`` ("" for
    the host's; a running container's is /proc/PID/root), as execve would find it: by
    ``path`` ($PATH) unless it has a slash, symlinks followed inside that root."""

    def executable(p: str, hops: int = 0) -> bool:
        if root and os.path.islink(root + p) and hops < 40:  # a root's symlinks point inside it
            target = os.readlink(root + p)
            p = target if target.startswith("/") else os.path.join(os.path.dirname(p), target)
            return executable(os.path.normpath(p), hops + 1)
        return os.path.isfile(root + p) and os.access(root + p, os.X_OK)

    if "/" in exe:
        return executable(exe if exe.startswith("/") else os.path.join(cwd or "/", exe))
    return any(executable(os.path.join(d or cwd or "/", exe)) for d in path.split(":"))


def raise_fd_limit() -> None:
    """The soft limit on open files up to the hard one (a shell's 1,024 stops many pods' pipes,
    or a kubelet shard's listening port per node, long before the machine would)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 1 << 20, hard))
        except (ValueError, OSError):
            pass


def _pod_name(pod: dict) -> str:
    m = pod.get("metadata") or {}
    return f"{m.get('name', '')}_{m.get('namespace', '')}"
