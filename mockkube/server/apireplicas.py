"""``mockkube serve --api-servers N``: further API servers of the same cluster on this
machine, each a process of its own, all on one address.

They share the PostgreSQL database (mockkube/storage/sharedlog.py) and the listening port:
every process opens it with ``SO_REUSEPORT``, so the kernel spreads new connections over
the processes and a client needs one address, whichever process answers. The first
process (the one ``mockkube serve`` started) also runs the cluster's components; the
others serve the API only (``--no-components``) and stop when the first does, even if it
is killed (their stdin, a pipe from it, closes). A further server that dies is not
restarted: its port share closes with it and new connections go to the others.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time

log = logging.getLogger("mockkube.apireplicas")


class APIReplicas:
    """``count`` more ``mockkube serve --no-components`` processes on ``address:port``."""

    def __init__(self, count: int, db_url: str, address: str, extra: list[str] | None = None) -> None:
        self.count = count
        self.db_url = db_url
        self.address = address
        self.extra = list(extra or [])
        self.procs: list[subprocess.Popen] = []

    def spawn(self, port: int) -> None:
        """Start them all at once (each reads the database on its own). Each holds a pipe from
        this process on its stdin and stops when it closes: when this server ends, however."""
        cmd = [sys.executable, "-m", "mockkube", "serve", "--db", self.db_url, "--address", self.address]
        cmd += ["--port", str(port), "--no-components", "--reuse-port", "--stop-with-stdin", *self.extra]
        for _ in range(self.count):
            self.procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True))

    def wait_ready(self) -> list[str]:
        """Wait until each has printed its ready line; returns their URLs (one address)."""
        urls = []
        for p in self.procs:
            line = p.stdout.readline() if p.stdout else ""
            if not line.startswith("mockkube ready at "):
                self.stop()
                raise RuntimeError(f"a further API server did not start (exit status {p.poll()})")
            urls.append(line.split()[-1])
        return urls

    def stop(self, timeout: float = 2.0) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs = []
