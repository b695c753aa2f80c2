"""`mockkube serve`'s kube-apiserver kubelet client flags: what they become
(kubeletclient.ClientConfig), the one-line errors for what cannot work, and the flags the
further API servers (--api-servers) are given to reach the same kubelets."""

from __future__ import annotations

import pytest

from mockkube.cli.connection import UsageError
from mockkube.cli.main import _check_kubelet_client, _kubelet_client, build_parser
from mockkube.kubelet.kubeletclient import ClientConfig


def _args(*flags: str):
    return build_parser().parse_args(["serve", *flags])


def test_no_flag_leaves_the_server_its_own_setup():
    args = _args()
    assert _kubelet_client(args) is None and _check_kubelet_client(args) == []


def test_the_flags_make_a_client_config_and_pass_on_to_further_servers(tmp_path):
    for name in ("c.crt", "c.key", "ca.crt"):
        (tmp_path / name).write_text("x")
    args = _args(
        "--kubelets", "none",
        "--kubelet-client-certificate", str(tmp_path / "c.crt"),
        "--kubelet-client-key", str(tmp_path / "c.key"),
        "--kubelet-certificate-authority", str(tmp_path / "ca.crt"),
        "--kubelet-preferred-address-types", "ExternalIP,InternalIP",
    )  # fmt: skip
    config = _kubelet_client(args)
    assert config == ClientConfig(
        str(tmp_path / "c.crt"), str(tmp_path / "c.key"), str(tmp_path / "ca.crt"), ("ExternalIP", "InternalIP")
    )
    assert config.tls
    assert _check_kubelet_client(args)[-2:] == ["--kubelet-preferred-address-types", "ExternalIP,InternalIP"]
    assert "--kubelet-certificate-authority" in _check_kubelet_client(args)


def test_address_types_alone_keep_the_servers_transport():
    config = _kubelet_client(_args("--kubelet-preferred-address-types", "Hostname"))
    assert config is not None and not config.tls and config.address_types == ("Hostname",)


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--kubelet-client-certificate", "/nope.crt"], "--kubelet-client-certificate: no such file: /nope.crt"),
        (
            ["--kubelet-client-certificate", "{crt}"],
            "--kubelet-client-certificate and --kubelet-client-key go together",
        ),
        (
            ["--node-shards", "2", "--kubelet-certificate-authority", "{crt}"],
            "--kubelet-client-certificate and --kubelet-certificate-authority are for kubelets started elsewhere",
        ),
    ],
)
def test_what_cannot_work_is_one_line(tmp_path, flags, message):
    (tmp_path / "c.crt").write_text("x")
    args = _args(*[f.format(crt=tmp_path / "c.crt") for f in flags])
    with pytest.raises(UsageError, match="^" + message.replace(".", r"\.")) as e:
        _check_kubelet_client(args)
    assert "\n" not in str(e.value)


def test_an_unknown_address_type_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        _args("--kubelet-preferred-address-types", "InternalIP,Internal")
    assert "unknown address type 'Internal'" in capsys.readouterr().err
