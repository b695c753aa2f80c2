"""Run a mockkube cluster inside a test process.

``ThreadedCluster`` serves from a background thread with its own event loop, so
synchronous tests (kubectl, helm, the Python client) talk to it over real HTTP;
``call()`` runs a function on that loop to reach the in-process client. For asyncio tests,
``running_server()`` serves on the test's own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from mockkube.server.server import Server, write_kubeconfig
from mockkube.testing.tools import ClientTools


class ThreadedCluster(ClientTools):
    def __init__(
        self,
        *,
        db_url: str | None = None,
        cluster: str | None = None,
        components: bool = True,
        workdir: str | None = None,
        clock: Callable[[], float] | None = None,
        binding_timeout: float | None = None,
        filter_timeout: float | None = None,
        control_plane: bool | None = False,
        **server_options: Any,
    ) -> None:
        """``server_options``: further ``Server`` keywords, e.g. ``authorization_mode="RBAC"``.
        ``control_plane``: kind's control plane and kube-system add-ons (off by default in
        tests, to keep them fast; None: the profile's ``controlPlane``)."""
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="mockkube-"))
        self.kubeconfig = str(self.workdir / "kubeconfig")
        self.clock = clock
        extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
        self.server = Server(
            address="127.0.0.1",
            port=0,
            db_url=db_url,
            kubeconfig_path=self.kubeconfig,
            cluster=cluster,
            components=components,
            binding_timeout=binding_timeout,
            filter_timeout=filter_timeout,
            control_plane=control_plane,
            **extra,
            **server_options,
        )
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="mockkube", daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.url = ""

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.url = self.loop.run_until_complete(self.server.start())
        except BaseException as e:  # surfaced by start()
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.server.stop())
        self.loop.close()

    def start(self) -> "ThreadedCluster":
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` (sync or async) where the components live (their own loop, or
        the server's when they share it) and return its result."""
        if self.server._component_loop is not None:
            return self.server.run_on_cluster(fn, *args)

        async def wrapper():
            out = fn(*args)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(60)

    def on_server(self, fn: Callable[..., Any], *args: Any, timeout: float | None = 60) -> Any:
        """Run ``fn(*args)`` (sync or async) on the HTTP server's loop and return its result."""

        async def wrapper():
            out = fn(*args)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(timeout)

    def settled(self) -> "ThreadedCluster":
        """Wait until the cluster has settled after start (its reset baseline is taken)."""
        self.on_server(self.server.settled)
        return self

    def reset(self) -> dict:
        """Back to the settled state after start, without a restart (``Server.reset``)."""
        return self.on_server(self.server.reset)

    def advance(self, seconds: float) -> None:
        """Move the cluster's clock forward and let components see the new time."""
        # the server's clock is a Clock or a FakeClock here, both of which advance
        self.on_server(self.server.move_clock, lambda: self.server.clock.advance(seconds))  # type: ignore[attr-defined]

    def inject(self, spec: dict):
        """Inject a fault (mockkube/machinery/faults.py, docs/faults.md); returns it (``.id``)."""
        return self.call(self.server.faults.add, spec)

    def clear_faults(self) -> int:
        """Remove every injected fault, undoing cluster faults; returns how many."""
        return self.call(self.server.faults.clear)

    def client(self, manager: str = "test"):
        from mockkube.client.client import Client

        assert self.server.resources is not None, "the store opens when the cluster starts"
        return Client(self.server.resources, manager)

    def install_crds(self, *paths: str) -> list[dict]:
        """Create the CustomResourceDefinitions in these YAML files or directories (as
        envtest's CRDInstallOptions.Paths); they are served when this returns."""
        from mockkube.testing.crds import install_crds

        return self.call(install_crds, self.client(), paths)


@contextlib.asynccontextmanager
async def running_server(**kwargs: Any) -> AsyncIterator[Server]:
    """An in-loop server for asyncio tests: ``async with running_server() as s: ...``."""
    kwargs.setdefault("port", 0)
    kwargs.setdefault("components", False)
    kwargs.setdefault("component_thread", False)  # the test reaches into components on its loop
    kwargs.setdefault("control_plane", False)  # as every testing entry point: off unless asked for
    server = Server(**kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def write_config(path: str, url: str) -> None:
    write_kubeconfig(path, url)
