"""A built-in driver's kubelet plugin served from a thread of the test process, for tests
that steer it: make NodePrepareResources fail, offer only some API versions, report device
health. It speaks the same gRPC sockets and API calls as ``mockkube driver run``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Sequence

from mockkube import drivers as driver_registry
from mockkube.drivers.kubeletplugin import KubeletPlugin, PreparedDevice
from mockkube.drivers.runner import APIClient, DriverProcess


class ThreadedPlugin:
    """``with ThreadedPlugin("gpu.example.com", node, dirs, kubeconfig) as p: ...``"""

    def __init__(
        self,
        driver: str,
        node: str,
        registry: str,
        plugins: str,
        kubeconfig: str,
        config: dict | None = None,
        versions: Sequence[str] = ("v1.DRAPlugin", "v1beta1.DRAPlugin"),
    ) -> None:
        self.driver = driver_registry.make(driver)
        self.node, self.registry, self.plugins, self.kubeconfig = node, registry, plugins, kubeconfig
        self.config = config or {"count": 2}
        self.versions = list(versions)
        self.fail_prepare = ""  # when set, every claim's NodePrepareResources answers this error
        self.prepare_calls = 0
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=f"plugin-{node}", daemon=True)
        self.plugin: KubeletPlugin | None = None
        self.proc: DriverProcess | None = None

    def call(self, coro_or_fn: Any, *args: Any) -> Any:
        async def wrapper():
            out = coro_or_fn(*args) if callable(coro_or_fn) else coro_or_fn
            return await out if asyncio.iscoroutine(out) else out

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result(60)

    async def _prepare(self, ref: dict) -> "list[PreparedDevice] | str":
        self.prepare_calls += 1
        if self.fail_prepare:
            return self.fail_prepare
        return await self.proc.prepare(ref)

    async def _start(self) -> None:
        self.proc = DriverProcess(self.driver, self.node, self.config, APIClient(self.kubeconfig))
        await self.proc.publish()
        self.plugin = KubeletPlugin(
            self.driver.name, self.registry, self.plugins, self._prepare, self.proc.unprepare, versions=self.versions
        )
        await self.plugin.start()

    def start(self) -> "ThreadedPlugin":
        self._thread.start()
        self.call(self._start)
        return self

    @property
    def registered(self) -> bool:
        return self.plugin is not None and self.plugin.registered.is_set()

    def set_health(self, pool: str, device: str, health: str, message: str = "") -> None:
        self.call(lambda: self.plugin.set_health(pool, device, health, message))

    def stop(self) -> None:
        if self._thread.is_alive():

            async def down():
                await self.plugin.stop()
                await self.proc.api.close()

            self.call(down)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)

    def __enter__(self) -> "ThreadedPlugin":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
