"""mockkube: a Kubernetes v1.36 API server with Dynamic Resource Allocation, for tests.

``mockkube.Cluster`` (see mockkube/testing/handle.py) runs one from Python:
``with mockkube.Cluster(profile=...) as cluster: ...``.
"""

from mockkube.machinery.version import MOCKKUBE_VERSION as __version__

__all__ = ["Cluster", "__version__"]


def __getattr__(name: str):
    if name == "Cluster":  # imported on first use: `import mockkube` stays light for the CLI
        from mockkube.testing.handle import Cluster

        return Cluster
    raise AttributeError(f"module 'mockkube' has no attribute {name!r}")
