"""asyncbridge: synchronous code awaiting on the event loop (the scheduler process's
binding cycle), with other work going on meanwhile."""

from __future__ import annotations

import asyncio

import pytest

from mockkube.client.asyncbridge import await_only, in_spawned, spawn


def test_await_only_suspends_the_sync_caller_while_the_loop_runs_others():
    order: list[str] = []

    async def io(name: str, gate: asyncio.Event) -> str:
        order.append(f"{name} waits")
        await gate.wait()
        return name.upper()

    def binding_cycle(name: str, gate: asyncio.Event) -> str:
        assert in_spawned()
        out = await_only(io(name, gate))
        order.append(f"{name} resumed")
        return out

    async def main() -> list[str]:
        gate = asyncio.Event()
        tasks = [asyncio.create_task(spawn(binding_cycle, n, gate)) for n in ("a", "b")]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert order == ["a waits", "b waits"]  # both suspended, neither blocked the loop
        gate.set()
        return await asyncio.gather(*tasks)

    assert asyncio.run(main()) == ["A", "B"]
    assert sorted(order[2:]) == ["a resumed", "b resumed"]


def test_exceptions_reach_the_sync_caller_and_then_the_spawner():
    async def fails() -> None:
        raise LookupError("409")

    def caller() -> str:
        try:
            await_only(fails())
        except LookupError as e:
            return f"handled {e}"
        return "not raised"

    def unhandled() -> None:
        await_only(fails())

    async def main() -> None:
        assert await spawn(caller) == "handled 409"
        with pytest.raises(LookupError):
            await spawn(unhandled)

    asyncio.run(main())


def test_outside_spawn_callers_take_their_blocking_path():
    assert not in_spawned()
    coro = asyncio.sleep(0)
    with pytest.raises(RuntimeError):
        await_only(coro)
    coro.close()


def test_the_spawned_code_sees_the_callers_context():
    """A controller's reconcile runs spawned: whom it acts as (a context variable its task
    set) must hold there, or its writes would go out under the process's own credentials."""
    from mockkube.machinery.requestcontext import current_user, set_user

    def reconcile() -> str:
        return await_only(asyncio.sleep(0, current_user()["username"]))

    async def main() -> str:
        set_user({"username": "system:serviceaccount:kube-system:job-controller", "groups": []})
        return await spawn(reconcile)

    assert asyncio.run(main()) == "system:serviceaccount:kube-system:job-controller"
