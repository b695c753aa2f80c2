"""Real programs in simulated containers, when the cluster profile asks for it
(``kubelet.runPrograms: true``): a container whose command is a Python program
(``python``/``python3``) runs it with the host's Python while the pod runs, so that
port-forward reaches what the program serves. ConfigMap, Secret and emptyDir volumes are
written to a directory of the pod's and the command's paths under their mount paths point
there; the container's env values are set; stdout and stderr go to ``output.log`` there,
which is the container's log (``kubectl logs``).

Programs share the host's network: two pods listening on the same port collide (the second
program fails). Nothing else runs: every other container stays simulated.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

PYTHONS = ("python", "python3")
_running: dict[str, "Program"] = {}  # pod uid -> its program (pod uids are unique across servers)


class Program:
    def __init__(self, proc: subprocess.Popen, workdir: str, container: str) -> None:
        self.proc, self.workdir, self.container = proc, workdir, container
        self.started = time.monotonic()

    def age(self) -> float:
        return time.monotonic() - self.started

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


def _container(pod: dict) -> dict | None:
    for c in (pod.get("spec") or {}).get("containers") or []:
        cmd = list(c.get("command") or [])
        if cmd and os.path.basename(cmd[0]) in PYTHONS:
            return c
    return None


def start(pod: dict, lookup: Callable[[str, str, str], dict | None]) -> Program | None:
    """Run the pod's Python program, if it has one; ``lookup(plural, namespace, name)``."""
    uid = pod["metadata"]["uid"]
    c = _container(pod)
    if c is None or uid in _running:
        return None
    ns = pod["metadata"].get("namespace", "")
    workdir = tempfile.mkdtemp(prefix="mockkube-program-")
    mounts: dict[str, str] = {}
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for m in c.get("volumeMounts") or []:
        v = volumes.get(m.get("name"))
        if v is None:
            continue
        target = Path(workdir, "volumes", m["name"])
        target.mkdir(parents=True, exist_ok=True)
        if v.get("configMap"):
            obj = lookup("configmaps", ns, v["configMap"].get("name", "")) or {}
            for k, text in (obj.get("data") or {}).items():
                (target / k).write_text(text)
        elif v.get("secret"):
            obj = lookup("secrets", ns, v["secret"].get("secretName", "")) or {}
            for k, b64 in (obj.get("data") or {}).items():
                (target / k).write_bytes(base64.b64decode(b64))
        mounts[m.get("mountPath", "").rstrip("/")] = str(target)

    def rewrite(arg: str) -> str:
        for path, local in sorted(mounts.items(), key=lambda kv: -len(kv[0])):
            if path and (arg == path or arg.startswith(path + "/")):
                return local + arg[len(path) :]
        return arg

    argv = [sys.executable] + [rewrite(a) for a in list(c.get("command"))[1:] + list(c.get("args") or [])]
    env = dict(os.environ)
    env.update({e["name"]: str(e.get("value", "")) for e in c.get("env") or [] if "value" in e})
    log = open(Path(workdir, "output.log"), "ab")
    proc = subprocess.Popen(argv, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    _running[uid] = Program(proc, workdir, c.get("name", ""))
    return _running[uid]


def running(uid: str) -> Program | None:
    p = _running.get(uid)
    return p if p is not None and p.alive else None


def output(uid: str, container: str) -> str | None:
    """What the pod's program printed so far (its container's log), or None without one."""
    p = _running.get(uid)
    if p is None or p.container != container:
        return None
    try:
        return Path(p.workdir, "output.log").read_text(errors="replace")
    except OSError:
        return ""


def stop(uid: str) -> None:
    p = _running.pop(uid, None)
    if p is None:
        return
    if p.alive:
        p.proc.terminate()
        try:
            p.proc.wait(5)
        except subprocess.TimeoutExpired:
            p.proc.kill()
    shutil.rmtree(p.workdir, ignore_errors=True)


def stop_all() -> None:
    for uid in list(_running):
        stop(uid)
