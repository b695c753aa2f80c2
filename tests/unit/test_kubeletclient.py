"""The API server's kubelet client: which address of a Node it dials, how the kubelet's URL
is written (a command's words in order) and how a kubelet's refusal is answered."""

from __future__ import annotations

from mockkube.kubelet.kubeletclient import Endpoint, KubeletClient, _kubelet_error, endpoint_of


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
