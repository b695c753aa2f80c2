"""``mockkube serve --node-shards M``: the simulated kubelets (and their nodes' drivers) in M
processes (``mockkube kubelets --shard I/M``, kubeletmain.py), each the server's component
(childprocess.py); the node lifecycle controller, which the node simulation runs in the
server otherwise, runs here (also with ``--kubelets none``, the shards started elsewhere).
"""

from __future__ import annotations

from typing import Any

from mockkube.server.childprocess import ChildComponent


class KubeletShardProcess(ChildComponent):
    """The component standing for one kubelet shard process in ``server.components``."""

    name = "kubelets"

    def __init__(self, server: Any, index: int, count: int) -> None:
        super().__init__(server)
        self.index, self.count = index, count
        self.attr = f"kubelet_shard_{index}_child"
        # one identity for the shard's kubelets (not system:node:<name> each): docs/scaling.md
        self.user = {"username": f"mockkube:kubelet-shard-{index}", "groups": ["system:masters"]}

    def extra_args(self, workdir: str) -> list[str]:
        cp = self.server.profile.control_plane if self.server.profile is not None else None
        out = ["--shard", f"{self.index}/{self.count}", *self.server.kubelet_serving_files(workdir)]
        if cp is not None:
            out.append("--control-plane" if cp else "--no-control-plane")
        return out


async def start(server: Any) -> list:
    from mockkube.kubelet.nodelifecycle import NodeLifecycleController

    lifecycle = NodeLifecycleController(server.client("kube-controller-manager"), server.clock)
    await lifecycle.start()
    out: list = [lifecycle]
    for i in range(server.node_shards if getattr(server, "run_kubelets", True) else 0):
        component = KubeletShardProcess(server, i, server.node_shards)
        await component.start()
        out.append(component)
    return out
