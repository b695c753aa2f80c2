"""helm v4 installs, upgrades and uninstalls a chart (release Secrets in protobuf, SSA)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
CHART = str(Path(__file__).parent / "manifests" / "chart")


def test_install_upgrade_uninstall(mockkube_fresh):
    c = mockkube_fresh
    c.helm("install", "rel", CHART)
    cm = json.loads(c.kubectl("get", "configmap", "rel-cm", "-o", "json", "--show-managed-fields").stdout)
    assert cm["data"] == {"v": "1"}
    assert any(m["manager"] == "helm" and m["operation"] == "Apply" for m in cm["metadata"]["managedFields"])
    c.kubectl("get", "deviceclass", "rel-gpu")
    secrets = c.kubectl("get", "secrets", "-l", "owner=helm", "-o", "name").stdout.split()
    assert secrets == ["secret/sh.helm.release.v1.rel.v1"]
    c.helm("upgrade", "rel", CHART, "--set", "v=2")
    cm = json.loads(c.kubectl("get", "configmap", "rel-cm", "-o", "json").stdout)
    assert cm["data"] == {"v": "2"}
    listed = json.loads(c.helm("list", "-o", "json").stdout)
    assert [(r["name"], r["revision"], r["status"]) for r in listed] == [("rel", "2", "deployed")]
    c.helm("uninstall", "rel")
    assert c.kubectl("get", "configmap", "rel-cm", check=False).returncode != 0
    assert c.kubectl("get", "deviceclass", "rel-gpu", check=False).returncode != 0
    assert json.loads(c.helm("list", "-o", "json").stdout) == []
