"""`mockkube serve --tls --authorization-mode=RBAC` as a user runs it: HTTPS with a generated
CA, a kubeconfig holding an admin certificate, client certificates of another CA refused,
static tokens from --token-auth-file; certificates reused from --cert-dir."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

from mockkube.apiserver import certs
from mockkube.testing import binaries

pytestmark = pytest.mark.e2e


def _serve(tmp_path, *flags: str) -> tuple[subprocess.Popen, str]:
    kc = tmp_path / "kubeconfig"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkube",
            "serve",
            "--port",
            "0",
            "--kubeconfig",
            str(kc),
            "--cluster",
            str(_profile(tmp_path)),
            *flags,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    assert line.startswith("mockkube ready at https://"), line
    return p, str(kc)


def _profile(tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text("nodes: []\ndeviceClasses: false\n")
    return path


def _kubectl(kc: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binaries.kubectl(), "--kubeconfig", kc, *args], capture_output=True, text=True, timeout=60)


def test_serve_tls_rbac(tmp_path):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('carol-token,carol,2001,"ops"\n')
    p, kc = _serve(
        tmp_path,
        "--tls",
        "--authorization-mode=RBAC",
        "--cert-dir",
        str(tmp_path / "pki"),
        "--token-auth-file",
        str(tokens),
    )
    try:
        config = yaml.safe_load(open(kc))
        user = config["users"][0]["user"]
        assert set(user) == {"client-certificate-data", "client-key-data"}
        assert "certificate-authority-data" in config["clusters"][0]["cluster"]
        who = _kubectl(kc, "auth", "whoami").stdout
        assert "kubernetes-admin" in who and "system:masters" in who
        # a static token over TLS
        carol = dict(config, users=[{"name": "mockkube", "user": {"token": "carol-token"}}])
        (tmp_path / "carol").write_text(yaml.safe_dump(carol))
        r = _kubectl(str(tmp_path / "carol"), "get", "pods")
        assert r.returncode == 1 and 'User "carol" cannot list resource "pods"' in r.stderr
        # a client certificate from another CA is refused (in the TLS handshake: kube-apiserver
        # answers 401 instead, see docs/compatibility.md)
        other = certs.make_ca("someone-else")
        pair = certs.make_client(other, "kubernetes-admin", ["system:masters"])
        forged = dict(
            config,
            users=[
                {
                    "name": "mockkube",
                    "user": {
                        "client-certificate-data": base64.b64encode(pair.cert_pem).decode(),
                        "client-key-data": base64.b64encode(pair.key_pem).decode(),
                    },
                }
            ],
        )
        (tmp_path / "forged").write_text(yaml.safe_dump(forged))
        r = _kubectl(str(tmp_path / "forged"), "get", "pods")
        assert r.returncode == 1 and r.stdout == "" and any(w in r.stderr for w in ("EOF", "reset", "closed")), r.stderr
        # no credentials at all: anonymous, which RBAC refuses
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        ctx = ssl.create_default_context(cadata=ca)
        url = config["clusters"][0]["cluster"]["server"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "/api/v1/namespaces/default/pods", context=ctx)
        assert e.value.code == 403
        assert urllib.request.urlopen(url + "/version", context=ctx).status == 200
        # pods trust the serving CA through kube-root-ca.crt
        from mockkube.testing.waiting import until

        until(
            lambda: (
                _kubectl(kc, "get", "configmap", "kube-root-ca.crt", "-o", "jsonpath={.data.ca\\.crt}").stdout.strip()
                == ca.strip()
            ),
            timeout=30,
        )
        # the Python client with the written kubeconfig
        from kubernetes import client
        from kubernetes import config as kconfig

        api = client.CoreV1Api(kconfig.new_client_from_config(config_file=kc))
        assert "kube-system" in [n.metadata.name for n in api.list_namespace().items]
    finally:
        p.terminate()
        p.wait(10)
    ca_before = (tmp_path / "pki" / "ca.crt").read_bytes()
    p, kc = _serve(tmp_path, "--tls", "--cert-dir", str(tmp_path / "pki"))
    try:
        assert (tmp_path / "pki" / "ca.crt").read_bytes() == ca_before  # reused
        assert _kubectl(kc, "get", "ns").returncode == 0
        # the control CLI reaches a TLS server with $KUBECONFIG's credentials, as kubectl does
        import os

        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "mockkube",
                "clock",
                "show",
                "--server",
                yaml.safe_load(open(kc))["clusters"][0]["cluster"]["server"],
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "KUBECONFIG": kc},
        )
        assert r.returncode == 0 and "frozen" in r.stdout, r.stderr
        # `mockkube kubeconfig --cert-dir` writes the same credentials for a running server
        url = yaml.safe_load(open(kc))["clusters"][0]["cluster"]["server"]
        out = subprocess.run(
            [sys.executable, "-m", "mockkube", "kubeconfig", "--server", url, "--cert-dir", str(tmp_path / "pki")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (tmp_path / "printed").write_text(out)
        assert "kubernetes-admin" in _kubectl(str(tmp_path / "printed"), "auth", "whoami").stdout
    finally:
        p.terminate()
        p.wait(10)


def test_serve_with_the_users_certificate(tmp_path):
    """--tls-cert-file/--tls-private-key-file: the server presents the user's certificate;
    clients that trust the user's CA reach it (the kubeconfig then holds the admin token)."""
    ca = certs.make_ca("my-ca")
    pair = certs.make_serving(ca, ["127.0.0.1", "localhost"])
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    p, kc = _serve(
        tmp_path, "--tls-cert-file", str(tmp_path / "tls.crt"), "--tls-private-key-file", str(tmp_path / "tls.key")
    )
    try:
        config = yaml.safe_load(open(kc))
        assert "certificate-authority-data" not in config["clusters"][0]["cluster"]
        assert set(config["users"][0]["user"]) == {"token"}
        config["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(ca.cert_pem).decode()
        (tmp_path / "trusting").write_text(yaml.safe_dump(config))
        who = _kubectl(str(tmp_path / "trusting"), "auth", "whoami").stdout
        assert "kubernetes-admin" in who and "system:masters" in who
        r = _kubectl(kc, "get", "ns")  # the system's roots do not trust my-ca
        assert r.returncode == 1 and "certificate" in r.stderr
    finally:
        p.terminate()
        p.wait(10)
