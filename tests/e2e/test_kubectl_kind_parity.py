"""The real kubectl against mockkube where a kind cluster answers something users notice:
wrapped base64 in a Secret manifest, `/version/`, the core resources `api-resources` lists."""

from __future__ import annotations

import base64
import json

import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture
def kubectl(mockkube_empty):
    return mockkube_empty.kubectl


def test_apply_secret_with_wrapped_base64(kubectl):
    data = bytes(range(200))
    flat = base64.b64encode(data).decode()
    lines = "\n".join("    " + flat[i : i + 76] for i in range(0, len(flat), 76))
    manifest = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: wrapped\ndata:\n  cert: |\n{lines}\n"
    for verb in ("apply", "replace"):
        out = kubectl(verb, "-f", "-", input=manifest)
        assert "secret/wrapped" in out.stdout
        got = kubectl("get", "secret", "wrapped", "-o", "jsonpath={.data.cert}").stdout
        assert got == flat  # stored as a Go round trip encodes it: one line
    kubectl("delete", "secret", "wrapped")


def test_get_raw_version_with_trailing_slash(kubectl):
    assert json.loads(kubectl("get", "--raw", "/version/").stdout) == json.loads(
        kubectl("get", "--raw", "/version").stdout
    )
