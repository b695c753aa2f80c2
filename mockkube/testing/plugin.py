"""pytest plugin (entry point ``mockkube``): fixtures for tests that need a cluster.

Per test, reset between tests (the way to write new suites):

- ``mockkube``: a ``mockkube.Cluster`` for this test. Each pytest-xdist worker starts one
  server per distinct cluster choice, once, and resets it before every test that uses it
  (tens of milliseconds), so tests never see each other's objects and run in parallel
  under ``pytest -n auto``. Choose the cluster with a marker:
  ``@pytest.mark.mockkube(profile=..., filter_timeout=..., binding_timeout=...,
  frozen_clock=True, control_plane=True, feature_gates=..., runtime_config=...)`` (``profile``: a
  path, inline YAML or a dict; none: the demo cluster; ``control_plane``: kind's control plane
  and kube-system add-ons, off by default in tests to keep resets and starts fast;
  ``feature_gates``/``runtime_config``: kube-apiserver's flags as a string or a dict, on top of
  v1.36's defaults and the profile's own, e.g. ``feature_gates={"DRADeviceTaintRules": True},
  runtime_config={"resource.k8s.io/v1beta2": True}``).
- ``mockkube_namespace``: a fresh namespace in that cluster (deleted after the test).
- ``mockkube_api_client``: an official-Python-client ``ApiClient`` for it.

Older fixtures, a whole server each:

- ``mockkube_cluster``: one cluster per test module (no reset between its tests).
- ``mockkube_fresh``: a new cluster for one test.
- ``mockkube_empty``: one cluster per module with an empty profile (no nodes, drivers or
  device classes): just the API server and its controllers.
- ``kubectl``: ``kubectl("get", "pods")`` against ``mockkube_cluster``.
"""

from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:  # the server is imported when a fixture first needs one: collection stays fast
    from mockkube.testing.cluster import ThreadedCluster
    from mockkube.testing.handle import Cluster

MARKER = "mockkube"
OPTIONS = (
    "profile",
    "filter_timeout",
    "binding_timeout",
    "frozen_clock",
    "control_plane",
    "auth",
    "feature_gates",
    "runtime_config",
)  # auth: reserved


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    _rewrite_only_testing_helpers(early_config)


def _rewrite_only_testing_helpers(config: pytest.Config) -> None:
    """Keep pytest's assertion rewriting to ``mockkube.testing``, not the whole server.

    pytest marks every top-level package of a distribution that declares a pytest11 plugin
    for assertion rewriting, so each worker would parse and recompile all of mockkube's
    server modules from source through the rewriting hook (its cached copies are only
    written where bytecode may be written), about 1.5 CPU-seconds per worker here. The
    server is not test code: only the helpers tests call get rewritten asserts. pytest has
    no public way to narrow what a distribution marks, so this adjusts its hook's set and
    does nothing if that ever changes."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "mockkube" in marked:
        marked.discard("mockkube")
        marked.add("mockkube.testing")
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mockkube(profile=None, filter_timeout=None, binding_timeout=None, frozen_clock=False, control_plane=False, "
        "auth=None, feature_gates=None, runtime_config=None): "
        "the cluster the `mockkube` fixture gives this test",
    )


class ClusterPool:
    """This worker's clusters, one per distinct choice, started on first use."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        self.clusters: dict[str, Cluster] = {}
        self.used: set[str] = set()
        self.reset_seconds: list[float] = []

    def get(self, options: dict) -> Cluster:
        key = json.dumps(options, sort_keys=True, default=str)
        c = self.clusters.get(key)
        if c is None:
            from mockkube.server import gctuning
            from mockkube.testing.handle import Cluster

            # The start imports the server and builds the cluster: a few hundred thousand
            # objects that live on, which CPython's thresholds traverse again and again (a full
            # collection among them); as the server process, it runs with collections held
            # (gctuning.hold). The test's own code runs with the collector as it had it.
            gctuning.hold()
            try:
                c = Cluster(**options, workdir=str(self._tmp.mktemp("mockkube"))).start()
            finally:
                gctuning.release()
            self.clusters[key] = c
            # What lives now (the server's modules and schemas, the settled cluster) lives until
            # the process ends: out of the collector's view, full collections stay cheap. pytest
            # runs ten of them at its end (to report unraisable exceptions), which over this
            # heap held the process for a second or more after its last test. (The ~2,000
            # objects the start left in cycles are frozen with it: a full collection here
            # would cost the first test ~50 ms.)
            gc.freeze()
        elif key in self.used:
            t0 = time.perf_counter()
            c.reset()
            self.reset_seconds.append(time.perf_counter() - t0)
        self.used.add(key)
        return c

    def close(self) -> None:
        self._write_stats()
        for c in self.clusters.values():
            c.stop()
        self.clusters.clear()
        # The session is over and the process about to end: what lives now (the stopped
        # clusters, the objects the tests' resets made) is left to the exit rather than to
        # the collector. pytest runs a full collection at its end (to report unraisable
        # exceptions); over the objects made since the start it took 0.1-0.3 s here.
        gc.freeze()

    def _write_stats(self) -> None:
        """With MOCKKUBE_POOL_STATS=DIR, leave this worker's start and reset times there
        (tests/bench/bench_pytest_plugin.py reads them)."""
        out = os.environ.get("MOCKKUBE_POOL_STATS")
        if not out:
            return
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        stats = {
            "start_seconds": [c.start_seconds for c in self.clusters.values()],
            "reset_seconds": self.reset_seconds,
        }
        Path(out, f"{worker}.json").write_text(json.dumps(stats))


def _options(request: pytest.FixtureRequest) -> dict:
    opts: dict = {}
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        unknown = set(marker.kwargs) - set(OPTIONS)
        if unknown or marker.args:
            raise pytest.UsageError(
                f"@pytest.mark.mockkube takes keyword arguments {', '.join(OPTIONS)}; "
                f"got {sorted(unknown) or list(marker.args)}"
            )
        opts.update(marker.kwargs)
    param = getattr(request, "param", None)  # indirect parametrisation: a dict of options
    if isinstance(param, dict):
        opts.update(param)
    return opts


@pytest.fixture(scope="session")
def mockkube_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPool]:
    pool = ClusterPool(tmp_path_factory)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def mockkube(request: pytest.FixtureRequest, mockkube_pool: ClusterPool) -> "Cluster":
    return mockkube_pool.get(_options(request))


@pytest.fixture
def mockkube_namespace(mockkube: "Cluster") -> Iterator[str]:
    name = mockkube.create_namespace()
    try:
        yield name
    finally:
        mockkube.delete_namespace(name)


@pytest.fixture
def mockkube_api_client(mockkube: "Cluster"):
    return mockkube.api_client


@pytest.fixture(scope="module")
def mockkube_cluster(tmp_path_factory) -> Iterator["ThreadedCluster"]:
    from mockkube.testing.cluster import ThreadedCluster

    c = ThreadedCluster(workdir=str(tmp_path_factory.mktemp("mockkube"))).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def mockkube_fresh(tmp_path) -> Iterator["ThreadedCluster"]:
    from mockkube.testing.cluster import ThreadedCluster

    c = ThreadedCluster(workdir=str(tmp_path)).start()
    try:
        yield c
    finally:
        c.stop()


EMPTY_PROFILE = "nodes: []\ndeviceClasses: false\n"


@pytest.fixture(scope="module")
def mockkube_empty(tmp_path_factory) -> Iterator["ThreadedCluster"]:
    d = tmp_path_factory.mktemp("mockkube-empty")
    (d / "profile.yaml").write_text(EMPTY_PROFILE)
    from mockkube.testing.cluster import ThreadedCluster

    c = ThreadedCluster(workdir=str(d), cluster=str(d / "profile.yaml")).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def kubectl(mockkube_cluster: "ThreadedCluster"):
    return mockkube_cluster.kubectl
