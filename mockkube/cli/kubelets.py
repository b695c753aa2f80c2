"""``mockkube kubelets --shard I/M``: the simulated kubelets of one shard of the nodes as a
process of its own, started by ``mockkube serve --node-shards M`` (docs/scaling.md);
mockkube/server/kubeletmain.py runs it."""

from __future__ import annotations

import argparse

from mockkube.cli.args import add_component_flags, shard


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kubelets", help="run the simulated kubelets of one shard of the nodes against a server")
    p.add_argument("--shard", type=shard, required=True, metavar="I/M", help="simulate the nodes whose shard is I of M")
    add_component_flags(p, "kubelet", "the cluster profile (its nodes and drivers)")
    p.add_argument(
        "--control-plane",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the control-plane node (default: the profile's)",
    )
    p.add_argument(
        "--address",
        default="127.0.0.1",
        help="where the nodes' kubelets serve the kubelet API (a port each), which their Nodes "
        "advertise and the API server connects to (default 127.0.0.1)",
    )
    p.add_argument(
        "--tls-cert-file", default=None, metavar="PATH", help="serve the kubelet API over HTTPS with this certificate"
    )
    p.add_argument("--tls-private-key-file", default=None, metavar="PATH", help="the key of --tls-cert-file")
    p.add_argument(
        "--client-ca-file",
        default=None,
        metavar="PATH",
        help="with --tls-cert-file: admit only clients whose certificate this CA signed (the API server's "
        "--kubelet-client-certificate)",
    )
    p.set_defaults(fn=_main, holds_collector=True)  # until its run starts (componentmain)


def _main(args: argparse.Namespace) -> int:
    from mockkube.server import kubeletmain

    return kubeletmain.main(args)
