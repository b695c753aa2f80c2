"""A throw-away PostgreSQL server for tests (initdb + pg_ctl in a temporary directory).

Used by the PostgreSQL storage tests; ``.ci/run`` installs Debian's ``postgresql``
package when ``initdb`` is missing. As root, the server runs as the ``postgres`` user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    pass


def _bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (d / name).exists():
            return str(d / name)
    raise PostgresUnavailable(f"{name} not found (install Debian's postgresql package)")


def check_installed() -> None:
    """Raise ``PostgresUnavailable`` unless initdb and pg_ctl are installed."""
    _bin("initdb")
    _bin("pg_ctl")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class TempPostgres:
    """``with TempPostgres() as pg: pg.url`` -> an SQLAlchemy URL of a fresh database."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mockkube-pg-"))
        self.port = _free_port()
        self._prefix: list[str] = []
        if os.geteuid() == 0:
            self._prefix = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.dir, "postgres", "postgres")

    def _run(self, *cmd: str) -> None:
        p = subprocess.run([*self._prefix, *cmd], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise PostgresUnavailable(f"{' '.join(cmd)} failed: {p.stderr or p.stdout}")

    def start(self) -> "TempPostgres":
        self._run(_bin("initdb"), "-D", str(self.dir / "data"), "-U", "postgres", "-A", "trust", "--no-sync")
        return self.resume()

    def pause(self) -> None:
        """Stop the server abruptly (``pg_ctl stop -m immediate``), keeping its data: an outage."""
        self._run(_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")

    def resume(self) -> "TempPostgres":
        """Start the server (again) on its data; it recovers from its WAL after a ``pause``."""
        self._pg_ctl_start()
        return self

    def _pg_ctl_start(self) -> None:
        self._run(
            _bin("pg_ctl"),
            "-D",
            str(self.dir / "data"),
            "-l",
            str(self.dir / "log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.dir} -h 127.0.0.1 -F",
            "start",
        )

    def restart(self) -> None:
        """Stop the server at once (as a crash would: open connections break) and start it
        again on the same port and data."""
        self._run(_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop")
        self._pg_ctl_start()

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            self._run(_bin("pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "TempPostgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
