"""`mockkube` commands find their server as kubectl does (--server, --kubeconfig, $KUBECONFIG,
--context, the kubeconfig's CA and credentials), are a kubectl plugin, and say what went
wrong in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mockkube.testing import binaries

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``mockkube ARGS`` with only the $KUBECONFIG the test gives (none of the machine's)."""
    full = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "mockkube", *args], capture_output=True, text=True, timeout=60, env=full
    )


def test_kubeconfig_environment_flag_and_context(mockkube, tmp_path):
    shown = run("clock", "show", env={"KUBECONFIG": mockkube.kubeconfig, "HOME": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    assert "now" in json.loads(shown.stdout)
    assert run("clock", "show", "--kubeconfig", mockkube.kubeconfig).returncode == 0
    # a second context in another file of $KUBECONFIG's list, pointing nowhere: --context picks it
    cfg = yaml.safe_load(Path(mockkube.kubeconfig).read_text())
    other = tmp_path / "other"
    cfg["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:1"
    cfg["contexts"][0]["name"] = "elsewhere"
    cfg["current-context"] = "elsewhere"
    other.write_text(yaml.safe_dump(cfg))
    both = {"KUBECONFIG": os.pathsep.join([mockkube.kubeconfig, str(other)]), "HOME": str(tmp_path)}
    assert run("clock", "show", env=both).returncode == 0  # the first file's current context
    gone = run("clock", "show", "--context", "elsewhere", env=both)
    assert gone.returncode == 1
    assert gone.stderr.strip() == "mockkube: cannot reach http://127.0.0.1:1: [Errno 111] Connection refused"
    # --server wins over the kubeconfig's server, as with kubectl
    assert run("clock", "show", "--context", "elsewhere", "--server", mockkube.url, env=both).returncode == 0
    missing = run("clock", "show", "--context", "nope", env=both)
    assert (missing.returncode, missing.stderr) == (2, 'mockkube: context "nope" does not exist\n')


@pytest.mark.mockkube(auth=True)
def test_a_tls_server_is_reached_with_the_kubeconfigs_ca_and_credentials(mockkube, tmp_path):
    assert mockkube.url.startswith("https://")
    ok = run("fault", "list", env={"KUBECONFIG": mockkube.kubeconfig, "HOME": str(tmp_path)})
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["kind"] == "FaultList"
    # a user without rights: the server's 403, in one line
    bob = mockkube.kubeconfig_for(user="bob")
    denied = run("fault", "list", "--kubeconfig", bob)
    assert denied.returncode == 1 and denied.stderr.count("\n") == 1, denied.stderr
    assert denied.stderr.startswith("mockkube: ") and "forbidden" in denied.stderr


def test_kubectl_runs_the_commands_as_a_plugin(mockkube, tmp_path):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", KUBECONFIG=mockkube.kubeconfig)
    mockkube.kubectl("create", "namespace", "plugin-ns")
    out = subprocess.run(
        [binaries.kubectl(), "mockkube", "explain", "pod", "nope", "-n", "plugin-ns"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("kubectl mockkube: ") and "nope" in out.stderr and out.stderr.count("\n") == 1
    shown = subprocess.run(
        [binaries.kubectl(), "mockkube", "clock", "show"], capture_output=True, text=True, timeout=60, env=env
    )
    assert shown.returncode == 0, shown.stderr
    assert "now" in json.loads(shown.stdout)


def test_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes:\n  - name: n1\n    capacity:\n      cpu: lots\n")
    served = run("serve", "--port", "0", "--cluster", str(bad))
    assert served.returncode == 2
    assert served.stderr.startswith("mockkube: invalid cluster profile: line 4: nodes[0].capacity.cpu: ")
    assert served.stderr.count("\n") == 1 and "Traceback" not in served.stderr
    missing = run("serve", "--port", "0", "--cluster", str(tmp_path / "none.yaml"))  # a path that is not there
    assert (missing.returncode, missing.stderr) == (
        2,
        f'mockkube: invalid cluster profile: the path "{tmp_path / "none.yaml"}" does not exist\n',
    )
    unreachable = run("reset", "--server", "http://127.0.0.1:1")
    assert (unreachable.returncode, unreachable.stderr.count("\n")) == (1, 1)
    assert run("reset", "--kubeconfig", str(tmp_path / "none")).stderr == (
        f"mockkube: stat {tmp_path / 'none'}: no such file or directory\n"
    )
    usage = run("clock", "sideways")
    assert usage.returncode == 2 and "invalid choice" in usage.stderr
    debug = run("serve", "--port", "0", "--cluster", str(bad), "--debug")
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "ProfileError" in debug.stderr
