"""The pytest plugin and mockkube.Cluster as a user runs them: the example suites of
docs/testing.md, copied into a fresh directory and run in a child pytest (serially and
with two xdist workers) and with unittest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_documented_pytest_suite_passes(tmp_path, workers):
    shutil.copy(EXAMPLES / "test_pytest_suite.py", tmp_path)
    p = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, "test_pytest_suite.py"],
        tmp_path,
    )
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert "5 passed" in p.stdout


def test_the_documented_unittest_suite_passes(tmp_path):
    shutil.copy(EXAMPLES / "test_unittest_suite.py", tmp_path)
    p = run([sys.executable, "-m", "unittest", "-v", "test_unittest_suite"], tmp_path)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "Ran 3 tests" in p.stderr and "OK" in p.stderr


def test_a_leak_between_tests_would_be_caught(tmp_path):
    """The isolation the suite relies on: a second test on the same worker does not see the
    first one's objects, while both run on one server (started once)."""
    (tmp_path / "test_leak.py").write_text("""
import gc, os

THRESHOLDS = gc.get_threshold()

def test_first(mockkube, mockkube_pool):
    mockkube.kubectl("create", "configmap", "leftover")
    os.environ["FIRST_URL"] = mockkube.url
    assert gc.get_threshold() == THRESHOLDS  # the cluster started with its own; the tests keep theirs

def test_second(mockkube, mockkube_pool):
    assert mockkube.url == os.environ["FIRST_URL"]          # the same server
    assert mockkube.get("configmap", "leftover", "default") is None
    assert len(mockkube_pool.reset_seconds) == 1

import pytest

@pytest.mark.parametrize("mockkube", [{"profile": "nodes: []\\ndeviceClasses: false\\n"}], indirect=True)
def test_indirect_profile(mockkube, mockkube_pool):
    assert mockkube.kubectl("get", "nodes", "-o", "name").stdout == ""
    assert mockkube.url != os.environ["FIRST_URL"] and len(mockkube_pool.clusters) == 2
""")
    p = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-n",
            "0",
            "test_leak.py",
        ],
        tmp_path,
    )
    assert p.returncode == 0 and "3 passed" in p.stdout, p.stdout[-4000:] + p.stderr[-2000:]


def test_cli_moves_the_clock_and_resets(tmp_path):
    import mockkube

    with mockkube.Cluster(profile="nodes: []\ndeviceClasses: false\n") as c:
        mk = [sys.executable, "-m", "mockkube"]
        p = run(mk + ["clock", "freeze", "--server", c.url], tmp_path)
        assert p.returncode == 0 and '"frozen": true' in p.stdout, p.stderr
        p = run(mk + ["clock", "advance", "1h", "--server", c.url], tmp_path)
        assert p.returncode == 0, p.stderr
        p = run(mk + ["clock", "advance", "later", "--server", c.url], tmp_path)
        assert p.returncode == 1 and "invalid duration 'later'" in p.stderr
        c.kubectl("create", "namespace", "scratch")
        p = run(mk + ["reset", "--server", c.url], tmp_path)
        assert p.returncode == 0 and '"deleted"' in p.stdout, p.stderr
        assert c.get("namespace", "scratch") is None and not c.clock.frozen
