"""The JavaScript client (@kubernetes/client-node from npm) over TLS against a secured
cluster: the admin kubeconfig's certificate, a ServiceAccount token's 403."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent / "js"
CACHE = Path.home() / ".cache" / "mockkube" / "js"


@pytest.fixture(scope="session")
def client_node() -> Path:
    """node_modules with @kubernetes/client-node, installed from npm once per machine."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are not installed (apt-get install nodejs npm)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers install once, one at a time
        want = (HERE / "package.json").read_text()
        if (
            not (CACHE / "node_modules" / "@kubernetes" / "client-node").exists()
            or (CACHE / "package.json").read_text() != want
        ):
            (CACHE / "package.json").write_text(want)
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=CACHE,
                check=True,
                capture_output=True,
                timeout=300,
            )
    shutil.copy(HERE / "secured.mjs", CACHE / "secured.mjs")
    return CACHE


@pytest.mark.mockkube(auth=True, profile={"nodes": [], "deviceClasses": False})
def test_client_node_over_tls(mockkube, client_node):
    c = mockkube
    c.kubectl("create", "serviceaccount", "reader")
    c.kubectl("create", "rolebinding", "reader", "--clusterrole=view", "--serviceaccount=default:reader")
    sa = c.kubeconfig_for(service_account="default/reader")
    c.kubectl("create", "configmap", "seen")
    p = subprocess.run(
        ["node", str(client_node / "secured.mjs"), c.kubeconfig, sa], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert {"default", "kube-system"} <= set(out["namespaces"])
    assert out["created"] == "b" and out["saConfigMaps"] is True
    assert out["saSecrets"] == 403
    assert out["saSecretsMessage"] == (
        'secrets is forbidden: User "system:serviceaccount:default:reader" cannot '
        'list resource "secrets" in API group "" in the namespace "default"'
    )
