"""Small differences a kubectl user could see against kube-apiserver v1.36."""

from __future__ import annotations

import pytest

from mockkube.apiserver.http import health
from mockkube.apiserver.http.handlers import Target, _require_verb
from mockkube.machinery import errors
from mockkube.machinery.registry import ResourceType


async def test_health_endpoints_plain_and_verbose(api):
    for ep in ("healthz", "livez", "readyz"):
        st, body, headers = await api.get(f"/{ep}")
        assert (st, body) == (200, "ok")
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
    st, body, _ = await api.get("/readyz", params={"verbose": ""})
    lines = body.splitlines()
    assert st == 200 and lines[0] == "[+]ping ok" and "[+]etcd ok" in lines and "[+]shutdown ok" in lines
    assert lines[-1] == "readyz check passed"
    st, body, _ = await api.get("/livez", params={"verbose": "1", "exclude": "etcd"})
    assert "[+]etcd excluded: ok" in body.splitlines() and body.endswith("livez check passed\n")
    assert "shutdown" not in body  # a readyz-only check
    for path in ("/readyz/ping", "/livez/etcd", "/healthz/log"):
        st, body, _ = await api.get(path)
        assert (st, body) == (200, "ok")
    st, body, _ = await api.get("/readyz/nope")
    assert (st, body) == (404, "404 page not found\n")


@pytest.mark.parametrize(
    "stopping,endpoint,status,last",
    [
        (True, "readyz", 500, "readyz check failed"),
        (True, "livez", 200, "livez check passed"),  # liveness holds while shutting down
        (False, "readyz", 200, "readyz check passed"),
    ],
)
def test_health_during_shutdown(stopping, endpoint, status, last):
    reply = health.root(endpoint, [("verbose", "")], stopping)
    assert reply.status == status and reply.text.splitlines()[-1] == last
    if status == 500:
        assert "[-]shutdown failed: reason withheld" in reply.text.splitlines()
        assert health.root(endpoint, [], stopping).status == 500  # verbose on failure regardless


@pytest.mark.parametrize("endpoint", ["readyz", "livez", "healthz"])
def test_health_until_the_post_start_hooks_finish(endpoint):
    reply = health.root(endpoint, [("verbose", "")], False, starting=True)
    lines = reply.text.splitlines()
    assert reply.status == 500 and lines[-1] == f"{endpoint} check failed"
    assert "[-]poststarthook/bootstrap-controller failed: reason withheld" in lines and "[+]etcd ok" in lines
    assert health.single(endpoint, "poststarthook/bootstrap-controller", False, starting=True) == health.Reply(
        500, "internal server error: not finished\n"
    )
    assert health.single(endpoint, "etcd", False, starting=True) == health.Reply(200, "ok")


def test_health_unknown_exclusion_is_reported():
    reply = health.root("healthz", [("verbose", ""), ("exclude", "bogus")], False)
    assert 'warn: some health checks cannot be excluded: no matches for "bogus"' in reply.text.splitlines()


@pytest.mark.parametrize(
    "method,name,allowed",
    [
        ("DELETE", "", False),  # deletecollection not declared
        ("DELETE", "x", True),
        ("POST", "", True),
        ("GET", "", True),
        ("PATCH", "x", True),
    ],
)
def test_undeclared_verb_is_405(method, name, allowed):
    rt = ResourceType(
        "",
        "v1",
        "Namespace",
        "namespaces",
        namespaced=False,
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
    )
    t = Target(rt, "", "v1", name=name)
    if allowed:
        _require_verb(method, t)
    else:
        with pytest.raises(errors.APIError) as e:
            _require_verb(method, t)
        assert (e.value.code, e.value.reason) == (405, "MethodNotAllowed")
