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


def test_api_resources_lists_bindings_and_componentstatuses(kubectl):
    rows = {line.split()[0]: line.split() for line in kubectl("api-resources", "--api-group=").stdout.splitlines()[1:]}
    assert rows["bindings"] == ["bindings", "v1", "true", "Binding"]
    assert rows["componentstatuses"] == ["componentstatuses", "cs", "v1", "false", "ComponentStatus"]


def test_get_cs_prints_healthy_components_and_the_deprecation_warning(kubectl):
    p = kubectl("get", "cs")
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert sorted(line.split() for line in lines[1:]) == [
        ["controller-manager", "Healthy", "ok"],
        ["etcd-0", "Healthy", "ok"],
        ["scheduler", "Healthy", "ok"],
    ]
    p = kubectl("get", "componentstatus", "kubelet", check=False)
    assert p.returncode != 0 and "Error from server: Component not found: kubelet" in p.stderr


def test_create_a_binding_from_a_manifest(kubectl):
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hand-bound\nspec:\n  schedulerName: by-hand\n"
        "  containers:\n  - name: c\n    image: busybox\n"
    )
    kubectl("apply", "-f", "-", input=pod)
    binding = (
        "apiVersion: v1\nkind: Binding\nmetadata:\n  name: hand-bound\n"
        "target:\n  apiVersion: v1\n  kind: Node\n  name: some-node\n"
    )
    out = kubectl("create", "-f", "-", input=binding)
    # the API answers a Binding with a Status (LegacyBindingREST), which kubectl prints as such
    assert out.stdout == "status/<unknown> created\n"
    assert kubectl("get", "pod", "hand-bound", "-o", "jsonpath={.spec.nodeName}").stdout == "some-node"
    kubectl("delete", "pod", "hand-bound", "--wait=false")


def test_explain_componentstatuses_and_bindings(kubectl):
    out = kubectl("explain", "cs").stdout
    assert "KIND:       ComponentStatus" in out and "conditions" in out
    assert "KIND:       Binding" in kubectl("explain", "bindings").stdout
