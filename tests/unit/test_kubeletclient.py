"""The API server's kubelet client: which address of a Node it dials, how the kubelet's URL
is written (a command's words in order) and how a kubelet's refusal is answered."""

from __future__ import annotations

import json
import ssl

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from mockkube.apiserver import certs
from mockkube.apiserver.http.app import status_errors
from mockkube.kubelet.kubeletclient import (
    ClientConfig,
    Endpoint,
    KubeletClient,
    _kubelet_error,
    endpoint_of,
    parse_address_types,
)


def _node(addresses: list[tuple[str, str]], port: int | None = 10250) -> dict:
    status: dict = {"addresses": [{"type": t, "address": a} for t, a in addresses]}
    if port is not None:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": port}}
    return {"status": status}


def test_the_internal_ip_is_preferred_to_the_hostname():
    node = _node([("Hostname", "n-0"), ("InternalIP", "10.0.0.7")], 41234)
    assert endpoint_of(node) == Endpoint("10.0.0.7", 41234)
    assert endpoint_of(_node([("Hostname", "n-0")])) == Endpoint("n-0", 10250)


def test_no_address_or_no_port_is_no_endpoint():
    assert endpoint_of(_node([])) is None
    assert endpoint_of(_node([("InternalIP", "10.0.0.7")], None)) is None


def test_the_url_keeps_each_parameters_values_in_order():
    url = KubeletClient(None).url(
        Endpoint("::1", 9),
        "/exec/ns/p/c",
        [("stdout", "true"), ("command", "sh"), ("command", "-c"), ("command", "exit 3")],
    )
    assert url == "http://[::1]:9/exec/ns/p/c?command=sh&command=-c&command=exit+3&stdout=true"


def test_a_kubelets_status_passes_as_it_is_and_its_text_gets_the_codes_reason():
    e = _kubelet_error(400, b'{"kind":"Status","code":400,"reason":"BadRequest","message":"container x is not valid"}')
    assert (e.code, e.reason, e.message) == (400, "BadRequest", "container x is not valid")
    e = _kubelet_error(404, b'pod "p" does not exist\n')
    assert (e.code, e.reason, e.message) == (404, "NotFound", 'pod "p" does not exist')


def test_preferred_address_types_are_tried_in_the_order_given():
    node = _node([("Hostname", "n-0"), ("InternalIP", "10.0.0.7"), ("ExternalIP", "1.2.3.4")])
    assert endpoint_of(node, ("ExternalIP", "InternalIP")) == Endpoint("1.2.3.4", 10250)
    assert endpoint_of(node, ("Hostname",)) == Endpoint("n-0", 10250)
    assert endpoint_of(node, ("InternalDNS",)) is None
    assert parse_address_types("InternalIP, ExternalIP") == ("InternalIP", "ExternalIP")
    with pytest.raises(ValueError, match="unknown address type 'InternalIp'"):
        parse_address_types("InternalIp")


async def _kubelet(tmp_path, ca: certs.KeyPair, client_ca: certs.KeyPair) -> tuple[web.AppRunner, Endpoint]:
    """An HTTPS server as a shard's kubelet serves: a certificate ``ca`` signed, clients'
    certificates checked against ``client_ca``."""
    certs.write_pair(certs.make_serving(ca, ["127.0.0.1"]), tmp_path / "k.crt", tmp_path / "k.key")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "k.crt", tmp_path / "k.key")
    ctx.load_verify_locations(cadata=client_ca.cert_pem.decode())
    ctx.verify_mode = ssl.CERT_REQUIRED
    app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ctx)
    await site.start()
    return runner, Endpoint("127.0.0.1", site._server.sockets[0].getsockname()[1])


async def _through(config: ClientConfig, ep: Endpoint) -> tuple[int, str]:
    """GET /healthz of the kubelet at ``ep`` through an API server's node proxy forward."""
    kc = KubeletClient(config.ssl_context(), client_certificate=bool(config.cert_file))
    app = web.Application(middlewares=[status_errors])

    async def proxy(request: web.Request) -> web.StreamResponse:
        return await kc.forward(request, ep, "/healthz")

    app.router.add_get("/proxy", proxy)
    async with TestClient(TestServer(app)) as client:
        r = await client.get("/proxy")
        body = await r.text()
    await kc.close()
    return r.status, body


async def test_the_kubelet_client_flags_reach_a_kubelet_with_certificates_of_its_own(tmp_path):
    """--kubelet-client-certificate and --kubelet-certificate-authority (ClientConfig) against a
    kubelet whose serving certificate another CA signed; a wrong CA or no client certificate
    fail with Go's TLS errors, as kube-apiserver's node proxy reports them."""
    kubelet_ca, client_ca, other = certs.make_ca("k"), certs.make_ca("c"), certs.make_ca("o")
    certs.write_pair(
        certs.make_client(client_ca, "kube-apiserver-kubelet-client"), tmp_path / "c.crt", tmp_path / "c.key"
    )
    for name, ca in (("kubelet-ca.crt", kubelet_ca), ("other-ca.crt", other)):
        (tmp_path / name).write_bytes(ca.cert_pem)
    runner, ep = await _kubelet(tmp_path, kubelet_ca, client_ca)
    try:
        good = ClientConfig(str(tmp_path / "c.crt"), str(tmp_path / "c.key"), str(tmp_path / "kubelet-ca.crt"))
        assert await _through(good, ep) == (200, "ok")
        insecure = ClientConfig(str(tmp_path / "c.crt"), str(tmp_path / "c.key"))  # no CA: not checked
        assert await _through(insecure, ep) == (200, "ok")
        wrong = ClientConfig(str(tmp_path / "c.crt"), str(tmp_path / "c.key"), str(tmp_path / "other-ca.crt"))
        status, body = await _through(wrong, ep)
        assert status == 503
        assert json.loads(body)["message"] == (
            "error trying to reach service: tls: failed to verify certificate: "
            "x509: certificate signed by unknown authority"
        )
        status, body = await _through(ClientConfig(ca_file=str(tmp_path / "kubelet-ca.crt")), ep)
        assert status == 503, body
        assert json.loads(body)["message"] == "error trying to reach service: remote error: tls: certificate required"
    finally:
        await runner.cleanup()
