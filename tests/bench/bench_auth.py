"""What security costs a request: GETs over HTTP against the open default server (the
baseline, same run) and over HTTPS with --authorization-mode=RBAC, as the admin
(system:masters) and as a user whose access RBAC evaluates through a RoleBinding, with 200
bindings in the cluster. Prints requests/s and the ratio to the baseline.

    python tests/bench/bench_auth.py [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import aiohttp

from mockkube.testing.cluster import running_server

PATH = "/api/v1/namespaces/default/configmaps/probe"


async def _rate(session: aiohttp.ClientSession, url: str, n: int, headers: dict) -> float:
    async def one() -> None:
        async with session.get(url + PATH, headers=headers) as r:
            assert r.status == 200, await r.text()
            await r.read()

    await one()
    t0 = time.perf_counter()
    for _ in range(n // 8):
        await asyncio.gather(*(one() for _ in range(8)))
    return (n // 8 * 8) / (time.perf_counter() - t0)


async def main(n: int) -> None:
    async with running_server() as open_server:
        async with aiohttp.ClientSession() as s:
            await s.post(
                open_server.url + "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "probe"}}
            )
            base = await _rate(s, open_server.url, n, {})
    async with running_server(authorization_mode="RBAC") as server:
        conn = aiohttp.TCPConnector(ssl=server.tls.client_context())
        async with aiohttp.ClientSession(connector=conn) as s:
            url = server.url
            await s.post(url + "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "probe"}})
            rb = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
            for i in range(200):
                await s.post(
                    url + rb,
                    json={
                        "metadata": {"name": f"other-{i}"},
                        "subjects": [{"kind": "User", "name": f"user-{i}"}],
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                    },
                )
            await s.post(
                url + rb,
                json={
                    "metadata": {"name": "bob"},
                    "subjects": [{"kind": "User", "name": "bob"}],
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                },
            )
            admin = await _rate(s, url, n, {})
            bob = await _rate(s, url, n, {"Impersonate-User": "bob"})
    print(f"GET one object, {n} requests, 8 at a time (same-run baseline: open server over HTTP {base:.0f} req/s)")
    print(f"  RBAC over HTTPS as the admin (system:masters): {admin:.0f} req/s = x{admin / base:.2f}")
    print(f"  RBAC over HTTPS as bob (impersonated, a RoleBinding among 201): {bob:.0f} req/s = x{bob / base:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000)
    asyncio.run(main(ap.parse_args().requests))
