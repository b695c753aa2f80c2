"""``mockkube controller-manager``'s host: what its informers follow, the key material taken
as kube-controller-manager's flags give it, and one-line errors for bad flags."""

from __future__ import annotations

from mockkube.cli.main import build_parser, main
from mockkube.client.kubeconfigs import Credentials
from mockkube.client.remote import HTTP
from mockkube.controllers.rootcacert import CA_CERTIFICATE
from mockkube.server.controllermanagermain import Host


def _host(*flags: str) -> Host:
    args = build_parser().parse_args(["controller-manager", "--kubeconfig", "unused", *flags])
    return Host(args, HTTP(Credentials("http://10.0.0.7:6443"), "test"))  # no request is made here


def test_it_follows_every_resource_that_can_be_watched_once():
    host = _host()
    followed = {rt.storage_key for rt in host.store._rts.values()}
    assert {"core/pods", "apps/replicasets", "coordination.k8s.io/leases"} <= followed
    assert "apiextensions.k8s.io/customresourcedefinitions" in followed  # custom resources come from there
    assert not any(key.endswith(("tokenreviews", "subjectaccessreviews")) for key in followed)
    assert len(followed) == len(host.store._rts)
    assert (host.address, host.port) == ("10.0.0.7", 6443)  # the kubernetes Service's endpoints


def test_key_material_comes_from_its_flags(tmp_path):
    from mockkube.apiserver import certs

    ca = certs.make_ca()
    (tmp_path / "ca.crt").write_bytes(ca.cert_pem)
    (tmp_path / "ca.key").write_bytes(ca.key_pem)
    host = _host(
        "--root-ca-file",
        str(tmp_path / "ca.crt"),
        "--cluster-signing-cert-file",
        str(tmp_path / "ca.crt"),
        "--cluster-signing-key-file",
        str(tmp_path / "ca.key"),
        "--service-account-private-key-file",
        str(tmp_path / "ca.key"),
    )
    assert host.ca_certificate() == ca.cert_pem.decode()
    assert host.signing_ca() == (ca.cert_pem, ca.key_pem)
    assert host.sa_signer is not None and host.sa_signer.kid
    bare = _host()
    assert bare.sa_signer is None  # the token controller does not run, as upstream's without the key
    assert bare.ca_certificate() == CA_CERTIFICATE  # a kubeconfig without a CA: the placeholder


def test_bad_flags_are_one_line_errors(tmp_path, capsys):
    assert main(["controller-manager", "--kubeconfig", "kc", "--root-ca-file", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    (tmp_path / "c.crt").write_text("x")
    assert (
        main(["controller-manager", "--kubeconfig", "kc", "--cluster-signing-cert-file", str(tmp_path / "c.crt")]) == 2
    )
    err = capsys.readouterr().err
    assert "--cluster-signing-key-file" in err and err.strip().count("\n") == 0
