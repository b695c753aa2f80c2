"""``mockkube kubelets --kubeconfig FILE --shard I/M``: the simulated kubelets (and their nodes'
DRA drivers) of the nodes whose shard is I, as a process of its own, a client of the API over
HTTP (componentmain.py). ``mockkube serve --node-shards M`` starts M of them.

Each node's kubelet serves the kubelet API on a port of its own on ``--address``
(mockkube/kubelet/kubeletserver.py; HTTPS with ``--tls-cert-file``, clients checked against
``--client-ca-file``), which its Node advertises: the API server forwards pods/log, exec,
attach, port-forward and the node proxy there. A shard simulates its nodes' containers
unless the profile asks for the process runtime (``kubelet.runtime: process``; its pods'
ServiceAccount tokens come from the TokenRequest API); device classes, the FPGA fabric and the control-plane node are shard 0's (or the
control-plane node's shard's); the node lifecycle controller runs in the server.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import ssl
import sys
from pathlib import Path
from typing import Any

from mockkube.client.remote import HTTP
from mockkube.machinery.registry import ResourceType
from mockkube.server import componentmain

USER_AGENT = "kubelet/v1.36.0 (linux/amd64) kubernetes/mockkube"


# What a shard's kubelets and drivers read from the replica, as a kubelet watches its pods,
# its Node, the ConfigMaps and Secrets its pods use and (DRA) claims and slices: the pods'
# informer and the kubelet API (pods), node status and the exec shell's address (nodes), the
# exec shell's environment and volume files (configmaps, secrets), claim preparation and the
# FPGA fabric (resourceclaims), the drivers' slice publishing (resourceslices). Not Leases (a
# kubelet renews its Lease as it last wrote it), not Events (written only): at 5,000 nodes
# those are most of the cluster's changes.
FOLLOWED = {
    ("", "pods"),
    ("", "nodes"),
    ("", "configmaps"),
    ("", "secrets"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceslices"),
}
# ... and, where the profile runs processes, what the Services of process pods route by
# (kubelet/runtime/services.py: a Service's name leads to its ready endpoints' processes)
FOLLOWED_FOR_PROCESSES = {("", "services"), ("discovery.k8s.io", "endpointslices")}


class Host(componentmain.Host):
    """What the kubelets of one shard ask of their server, in a process of their own."""

    name = "kubelets"
    user_agent = USER_AGENT
    strict_reads = True

    def __init__(self, args: argparse.Namespace, http_: HTTP) -> None:
        from mockkube.config.profile import load_profile

        super().__init__(args, http_)
        self.profile = load_profile(self.cluster, args.control_plane)  # as the server resolved it
        self.shard = args.shard
        self.kubeconfig = args.kubeconfig
        self.url = http_.creds.server
        self.temp_dirs: list[str] = []
        self.kubelet_api: Any = None  # kubeletserver.KubeletServer, from the first start on
        self.kubelet_address = args.address
        self.kubelet_ssl = _serving_context(args)

    def kubelet_endpoint(self, node: str) -> tuple[str, int] | None:
        """Where ``node``'s kubelet listens (its Node says so)."""
        return self.kubelet_api.endpoint(node)

    def followed(self) -> list[ResourceType]:
        """What the kubelets and drivers read from the replica (FOLLOWED); anything else they
        read through the client, which asks the API (the replica is strict: a read of an
        unfollowed resource raises)."""
        followed = FOLLOWED | (FOLLOWED_FOR_PROCESSES if self.runs_processes() else set())
        rts: dict[str, ResourceType] = {}
        for rt in self.registry.all():
            if (rt.group, rt.plural) in followed and "watch" in rt.verbs:
                rts.setdefault(rt.storage_key, rt)
        return list(rts.values())

    def runs_processes(self) -> bool:
        """Whether the profile asks for the process runtime on any node (a shard runs
        processes only where it is asked, kubelet.runtime: process)."""
        p = self.profile
        return (p.kubelet or {}).get("runtime") == "process" or any(n.runtime == "process" for n in p.nodes)

    def token_request(self, namespace: str, name: str, body: dict) -> dict:
        """A TokenRequest for ServiceAccount ``namespace/name`` (its spec in ``body``), through
        the API as a kubelet asks for its pods' tokens."""
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", **body}
        return self.http.call("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", request, own=True)

    def in_cluster_endpoint(self) -> tuple[str, str, bytes]:
        """Where programs in this shard's pods reach the API server (their in-cluster
        configuration): where the shard reaches it, with the CA its kubeconfig trusts. Their
        clients speak HTTPS: a server serving plain HTTP is not reachable from them
        (docs/scaling.md)."""
        from urllib.parse import urlsplit

        u = urlsplit(self.url)
        default = 443 if u.scheme == "https" else 80
        return u.hostname or "127.0.0.1", str(u.port or default), self.http.creds.ca_pem.encode()

    async def start_all(self) -> list:
        from mockkube import kubelet
        from mockkube.kubelet.kubeletserver import KubeletServer

        if self.kubelet_api is None:  # one for the process: a node keeps its port across resets
            self.kubelet_api = KubeletServer(self, self.kubelet_address, self.kubelet_ssl)
            await self.kubelet_api.start()
        return await kubelet.start(self)

    async def close(self) -> None:
        if self.kubelet_api is not None:
            await self.kubelet_api.stop()
            self.kubelet_api = None

    async def stop_components(self) -> None:
        await super().stop_components()
        for d in self.temp_dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.temp_dirs = []

    def ca_certificate(self) -> str:
        if self.http.creds.ca_pem:
            return self.http.creds.ca_pem
        from mockkube.controllers.rootcacert import CA_CERTIFICATE

        return CA_CERTIFICATE

    def write_kubeconfig(self, path: str | Path) -> None:
        """Out-of-process drivers reach the API as this process does."""
        shutil.copyfile(self.kubeconfig, path)


def _serving_context(args: argparse.Namespace) -> ssl.SSLContext | None:
    """HTTPS for the kubelet API with ``--tls-cert-file``; with ``--client-ca-file`` a client
    certificate it signed is required (the kubelet's x509 authentication)."""
    if not args.tls_cert_file:
        return None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(args.tls_cert_file, args.tls_private_key_file or args.tls_cert_file)
    if args.client_ca_file:
        ctx.load_verify_locations(cafile=args.client_ca_file)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def main(args: argparse.Namespace) -> int:
    if not Path(args.kubeconfig).is_file():
        print(f"mockkube kubelets: --kubeconfig: no such file: {args.kubeconfig}", file=sys.stderr)
        return 2
    for flag in ("tls_cert_file", "tls_private_key_file", "client_ca_file"):
        path = getattr(args, flag)
        if path and not Path(path).is_file():
            print(f"mockkube kubelets: --{flag.replace('_', '-')}: no such file: {path}", file=sys.stderr)
            return 2
    if bool(args.tls_cert_file) != bool(args.tls_private_key_file):
        print("mockkube kubelets: --tls-cert-file and --tls-private-key-file go together", file=sys.stderr)
        return 2
    return asyncio.run(componentmain.run(args, Host))
