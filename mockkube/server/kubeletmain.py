"""``mockkube kubelets --kubeconfig FILE --shard I/M``: the simulated kubelets (and their nodes'
DRA drivers) of the nodes whose shard is I, as a process of its own, a client of the API over
HTTP (componentmain.py). ``mockkube serve --node-shards M`` starts M of them.

A shard simulates its nodes' containers (no processes: exec, logs and the rest are then
answered by the API server from the pod, as for any simulated container); device classes,
the FPGA fabric and the control-plane node are shard 0's (or the control-plane node's
shard's); the node lifecycle controller runs in the server.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

from mockkube.client.remote import HTTP
from mockkube.machinery.registry import ResourceType
from mockkube.server import componentmain

USER_AGENT = "kubelet/v1.36.0 (linux/amd64) kubernetes/mockkube"


class Host(componentmain.Host):
    """What the kubelets of one shard ask of their server, in a process of their own."""

    name = "kubelets"
    user_agent = USER_AGENT

    def __init__(self, args: argparse.Namespace, http_: HTTP) -> None:
        from mockkube.config.profile import load_profile

        super().__init__(args, http_)
        self.profile = load_profile(self.cluster, args.control_plane)  # as the server resolved it
        self.shard = args.shard
        self.kubeconfig = args.kubeconfig
        self.url = http_.creds.server
        self.temp_dirs: list[str] = []

    def followed(self) -> list[ResourceType]:
        rts: dict[str, ResourceType] = {}
        for rt in self.registry.all():
            if "list" in rt.verbs and "watch" in rt.verbs:
                rts.setdefault(rt.storage_key, rt)
        return list(rts.values())

    async def start_all(self) -> list:
        from mockkube import kubelet

        return await kubelet.start(self)

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


def main(args: argparse.Namespace) -> int:
    if not Path(args.kubeconfig).is_file():
        print(f"mockkube kubelets: --kubeconfig: no such file: {args.kubeconfig}", file=sys.stderr)
        return 2
    return asyncio.run(componentmain.run(args, Host))
