"""docs/quickstart.md's commands, run as written against a fresh `mockkube serve` on the
demo cluster (the block between the quickstart-commands markers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mockkube.testing import binaries

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_the_quickstart_commands_run_as_written(tmp_path):
    doc = (ROOT / "docs" / "quickstart.md").read_text()
    block = re.search(r"<!-- quickstart-commands -->\n```sh\n(.*?)```", doc, re.S).group(1)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "kubectl").symlink_to(binaries.kubectl())
    server = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--kubeconfig", str(tmp_path / "kubeconfig")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert server.stdout.readline().startswith("mockkube ready at ")
        (tmp_path / "docs").symlink_to(ROOT / "docs")
        env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", HOME=str(tmp_path))
        p = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 0, p.stdout + p.stderr
        assert re.search(r"pod/trainer\s+1/1\s+Running", p.stdout), p.stdout
        assert "allocated,reserved" in p.stdout and "configmap/settings serverside-applied" in p.stdout
    finally:
        server.terminate()
        server.wait(10)
