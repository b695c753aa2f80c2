"""``mockkube driver run``'s flags (mockkube/drivers/runner.py runs it). Apart from the runner,
which imports a driver with the client and the API server's registry behind it, so that
building the command line (every ``mockkube`` command, the scheduler's process among them)
does not import them."""

from __future__ import annotations

import argparse


def add_command(dsub: argparse._SubParsersAction) -> None:
    r = dsub.add_parser("run", help="run a built-in driver's kubelet plugin as a process (gRPC)")
    r.add_argument("driver", help="e.g. gpu.example.com")
    r.add_argument("--node", default=None, help="the node whose kubelet it registers with (default: $NODE_NAME)")
    r.add_argument(
        "--registry",
        default="/var/lib/kubelet/plugins_registry",
        help="the kubelet's plugins_registry directory (default: /var/lib/kubelet/plugins_registry, as in a pod)",
    )
    r.add_argument(
        "--plugins",
        default="/var/lib/kubelet/plugins",
        help="the kubelet's plugins directory, for the DRA socket (default: /var/lib/kubelet/plugins)",
    )
    r.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig of the API server (default: $KUBECONFIG, else the in-cluster configuration of a pod)",
    )
    r.add_argument("--cdi-root", default="", help="write a CDI spec per prepared claim here (e.g. /var/run/cdi)")
    r.add_argument(
        "--device-metadata",
        action="store_true",
        help="KEP-5304: write each prepared request's device metadata (metadata.resource.k8s.io/v1alpha1) and a "
        "CDI spec mounting it into the containers (needs --cdi-root), as the kubelet-plugin library's "
        "EnableDeviceMetadata option does",
    )
    r.add_argument(
        "--config", default="", help="the node's driver config as in a profile (JSON), e.g. '{\"count\": 2}'"
    )
    r.add_argument("--settings", default="", help="driver-wide settings as in a profile (JSON)")
    r.add_argument(
        "--versions",
        default="v1.DRAPlugin,v1beta1.DRAPlugin",
        help="the DRA services offered, in order (default v1.DRAPlugin,v1beta1.DRAPlugin)",
    )
    r.add_argument("--log-level", default="WARNING")
    r.set_defaults(fn=_main)


def _main(args: argparse.Namespace) -> int:
    from mockkube.drivers.runner import main

    return main(args)
