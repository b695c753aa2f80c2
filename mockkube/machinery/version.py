"""Which release this is, and which Kubernetes release it serves (``GET /version``)."""

MOCKKUBE_VERSION = "0.1.0"
KUBE_VERSION = "v1.36.0"
