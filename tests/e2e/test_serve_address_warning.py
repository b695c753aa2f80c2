"""`mockkube serve` on an address others can reach, with no authorization, says that pods'
commands run on this host (the process runtime)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("address, warned", [("0.0.0.0", True), ("127.0.0.1", False)])
def test_serving_beyond_loopback_without_authorization_warns(tmp_path, address, warned):
    empty = tmp_path / "p.yaml"
    empty.write_text("nodes: []\ndeviceClasses: false\n")
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--address", address, "--port", "0", "--cluster", str(empty)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        assert p.stdout is not None
        for line in p.stdout:
            lines.append(line)
            if "ready at" in line:
                break
        text = "".join(lines)
        assert ("whoever reaches it may create pods, whose commands run on this host" in text) is warned, text
    finally:
        p.terminate()
        p.wait(10)
