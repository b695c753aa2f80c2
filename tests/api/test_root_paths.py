"""Root paths served as kube-apiserver serves them: go-restful WebServices (``/version``,
``/api``, ``/api/v1``, ``/apis/<group>``, ...) answer with or without a trailing slash; the
non-go-restful mux's exact paths (``/healthz``, ``/livez``, ``/readyz``, ``/openapi/v2``,
``/metrics``) do not."""

from __future__ import annotations

import pytest


async def test_version_with_and_without_trailing_slash(api):
    code, plain, _ = await api.get("/version")
    assert code == 200
    code, slashed, headers = await api.get("/version/")
    assert code == 200, slashed
    assert slashed == plain
    assert headers["Content-Type"].startswith("application/json")
    assert slashed["major"] == "1" and slashed["minor"] == "36"


@pytest.mark.parametrize(
    "path,kind",
    [
        ("/api/", "APIVersions"),
        ("/api/v1/", "APIResourceList"),
        ("/apis/", "APIGroupList"),
        ("/apis/apps/", "APIGroup"),
        ("/apis/apps/v1/", "APIResourceList"),
    ],
)
async def test_discovery_paths_with_trailing_slash(api, path, kind):
    code, body, _ = await api.get(path)
    assert code == 200, body
    assert body["kind"] == kind
    assert body == (await api.get(path.rstrip("/")))[1]


@pytest.mark.parametrize("path", ["/healthz/", "/livez/", "/readyz/", "/openapi/v2/", "/metrics/"])
async def test_exact_mux_paths_do_not_take_a_trailing_slash(api, path):
    assert (await api.get(path.rstrip("/")))[0] == 200
    assert (await api.get(path))[0] == 404


@pytest.mark.parametrize("path", ["/", "/index.html"])
async def test_root_lists_the_served_paths(api, path):
    code, body, headers = await api.get(path)
    assert code == 200, body
    assert headers["Content-Type"].startswith("application/json")
    paths = body["paths"]
    assert paths == sorted(paths)
    for p in (
        "/api",
        "/api/v1",
        "/apis",
        "/apis/",
        "/apis/apps",
        "/apis/apps/v1",
        "/apis/resource.k8s.io/v1",
        "/healthz",
        "/healthz/etcd",
        "/livez",
        "/readyz/shutdown",
        "/metrics",
        "/openapi/v2",
        "/openapi/v3",
        "/openapi/v3/",
        "/version",
    ):
        assert p in paths
    assert not {"/", "/index.html", "/version/"} & set(paths)
    assert not [p for p in paths if p.startswith("/mockkube") or "{" in p]


async def test_root_and_version_slash_under_rbac():
    import aiohttp

    from mockkube.testing.cluster import running_server
    from tests.api.conftest import Api

    async with running_server(authorization_mode="RBAC") as server:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.tls.client_context())) as s:
            rbac = Api(s, server.url, server)
            bob = {"Impersonate-User": "bob"}
            assert (await rbac.get("/version/", headers=bob))[0] == 200  # system:public-info-viewer lists /version/
            code, body, _ = await rbac.get("/", headers=bob)  # no bootstrap role covers "/"
            assert code == 403 and body["message"] == 'forbidden: User "bob" cannot get path "/"'
            assert (await rbac.get("/"))[0] == 200  # the admin
