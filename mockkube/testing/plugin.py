"""pytest plugin (entry point ``mockkube``): fixtures for tests that need a cluster.

- ``mockkube_cluster``: one cluster per test module, served over HTTP from a thread
  (parallel-safe: each pytest-xdist worker gets its own clusters on free ports).
- ``mockkube_fresh``: a new cluster for one test.
- ``mockkube_empty``: one cluster per module with an empty profile (no nodes, drivers or
  device classes): just the API server and its controllers.
- ``kubectl``: ``kubectl("get", "pods")`` against ``mockkube_cluster``.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from mockkube.testing.cluster import ThreadedCluster


@pytest.fixture(scope="module")
def mockkube_cluster(tmp_path_factory) -> Iterator[ThreadedCluster]:
    c = ThreadedCluster(workdir=str(tmp_path_factory.mktemp("mockkube"))).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def mockkube_fresh(tmp_path) -> Iterator[ThreadedCluster]:
    c = ThreadedCluster(workdir=str(tmp_path)).start()
    try:
        yield c
    finally:
        c.stop()


EMPTY_PROFILE = "nodes: []\ndeviceClasses: false\n"


@pytest.fixture(scope="module")
def mockkube_empty(tmp_path_factory) -> Iterator[ThreadedCluster]:
    d = tmp_path_factory.mktemp("mockkube-empty")
    (d / "profile.yaml").write_text(EMPTY_PROFILE)
    c = ThreadedCluster(workdir=str(d), cluster=str(d / "profile.yaml")).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def kubectl(mockkube_cluster: ThreadedCluster):
    return mockkube_cluster.kubectl
