"""Reading a kubeconfig the way a client does: the current context's server, and how to
reach it (the CA to trust, a client certificate or a bearer token). The writing side is
``mockkube.server.server.kubeconfig``."""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Credentials:
    server: str
    headers: dict = field(default_factory=dict)
    ssl: ssl.SSLContext | None = None
    ca_pem: str = ""  # the CA the cluster entry trusts (kube-controller-manager's root CA fallback)


class NoContext(KeyError):
    """The kubeconfig has no context of the name asked for."""


def load(path: str | Path, context: str | None = None) -> Credentials:
    """The server and credentials of ``context`` (default: the current context) in ``path``."""
    text = Path(path).read_text()
    try:  # the kubeconfigs mockkube writes for its own processes are JSON (which is YAML)
        cfg = json.loads(text) or {}
    except ValueError:
        import yaml

        cfg = yaml.safe_load(text) or {}
    ctx_name = context or cfg.get("current-context")
    contexts = cfg.get("contexts") or [{"context": {}}]
    if context and not any(c.get("name") == context for c in contexts):
        raise NoContext(context)
    ctx = next((c["context"] for c in contexts if c.get("name") == ctx_name), contexts[0].get("context") or {})
    clusters = cfg.get("clusters") or [{"cluster": {}}]
    cluster = next((c["cluster"] for c in clusters if c.get("name") == ctx.get("cluster")), clusters[0]["cluster"])
    user = next((u.get("user") or {} for u in cfg.get("users") or () if u.get("name") == ctx.get("user")), {})
    server = (cluster.get("server") or "").rstrip("/")
    creds = Credentials(server)
    if user.get("token"):
        creds.headers["Authorization"] = f"Bearer {user['token']}"
    if server.startswith("https"):
        creds.ssl = _context(cluster, user)
        ca = cluster.get("certificate-authority-data")
        if ca:
            creds.ca_pem = base64.b64decode(ca).decode()
        elif cluster.get("certificate-authority"):
            creds.ca_pem = Path(cluster["certificate-authority"]).read_text()
    return creds


def _context(cluster: dict, user: dict) -> ssl.SSLContext:
    ca = cluster.get("certificate-authority-data")
    ctx = ssl.create_default_context(
        cadata=base64.b64decode(ca).decode() if ca else None,
        cafile=None if ca else cluster.get("certificate-authority"),
    )
    if user.get("client-certificate-data"):
        with tempfile.TemporaryDirectory() as d:
            crt, key = Path(d, "c.crt"), Path(d, "c.key")
            crt.write_bytes(base64.b64decode(user["client-certificate-data"]))
            key.write_bytes(base64.b64decode(user["client-key-data"]))
            ctx.load_cert_chain(str(crt), str(key))
    elif user.get("client-certificate"):
        ctx.load_cert_chain(user["client-certificate"], user.get("client-key"))
    return ctx


SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def in_cluster(sa_dir: str = SA_DIR) -> Credentials:
    """What a program in a pod uses without a kubeconfig, as client-go's
    ``rest.InClusterConfig``: ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``,
    the mounted ServiceAccount token and the CA in ``ca.crt``."""
    import os

    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise NoContext(
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"
        )
    host = f"[{host}]" if ":" in host else host
    creds = Credentials(f"https://{host}:{port}")
    token = Path(sa_dir, "token").read_text().strip()
    creds.headers["Authorization"] = f"Bearer {token}"
    creds.ssl = ssl.create_default_context(cafile=str(Path(sa_dir, "ca.crt")))
    return creds
