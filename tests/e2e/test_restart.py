"""A file database survives a restart: objects stay, resourceVersions keep rising."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from mockkube.testing import binaries

pytestmark = pytest.mark.e2e


def _start(db: str, kubeconfig: str) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--db", db, "--kubeconfig", kubeconfig],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    assert line.startswith("mockkube ready at http://127.0.0.1:"), line + p.stderr.read()
    return p, line.split()[-1]


def _kubectl(kubeconfig: str, *args: str) -> str:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    return subprocess.run([binaries.kubectl(), *args], env=env, capture_output=True, text=True, check=True).stdout


def test_restart_keeps_objects_and_rv_rises(tmp_path):
    db = f"sqlite:///{tmp_path / 'state.db'}"
    kc = str(tmp_path / "kubeconfig")
    p, _ = _start(db, kc)
    try:
        _kubectl(kc, "create", "configmap", "keep", "--from-literal=a=1")
        before = json.loads(_kubectl(kc, "get", "configmap", "keep", "-o", "json"))
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
    p, _ = _start(db, kc)
    try:
        after = json.loads(_kubectl(kc, "get", "configmap", "keep", "-o", "json"))
        assert after["metadata"]["uid"] == before["metadata"]["uid"]
        assert after["data"] == {"a": "1"}
        _kubectl(kc, "create", "configmap", "newer", "--from-literal=a=1")
        newer = json.loads(_kubectl(kc, "get", "configmap", "newer", "-o", "json"))
        assert int(newer["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
        # a watch from the pre-restart resourceVersion still resumes from the persisted event log
        out = _kubectl(
            kc,
            "get",
            "--raw",
            f"/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1"
            f"&resourceVersion={before['metadata']['resourceVersion']}",
        )
        assert '"newer"' in out
    finally:
        p.send_signal(signal.SIGINT)
        assert p.wait(10) == 0
