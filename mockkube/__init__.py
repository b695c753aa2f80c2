"""mockkube: a Kubernetes v1.36 API server with Dynamic Resource Allocation, for tests."""

__version__ = "0.1.0"
