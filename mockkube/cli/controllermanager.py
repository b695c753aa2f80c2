"""``mockkube controller-manager``: kube-controller-manager's controllers as a process of
their own, started by ``mockkube serve --controllers process`` or, with ``--leader-elect``, by
the user beside ``mockkube serve --controllers none`` (several, one acting:
docs/scaling.md); mockkube/server/controllermanagermain.py runs it."""

from __future__ import annotations

import argparse

from mockkube.cli.args import add_component_flags


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("controller-manager", help="run the controllers against a server (several: --leader-elect)")
    add_component_flags(p, "kube-controller-manager", "the cluster profile")
    # kube-controller-manager's flags for the key material its controllers sign with
    p.add_argument(
        "--service-account-private-key-file",
        metavar="FILE",
        help="PEM private key the token controller signs ServiceAccount token Secrets with "
        "(without it that controller does not run)",
    )
    p.add_argument(
        "--root-ca-file",
        metavar="FILE",
        help="the CA bundle put in token Secrets and kube-root-ca.crt ConfigMaps (default: the kubeconfig's CA)",
    )
    p.add_argument("--cluster-signing-cert-file", metavar="FILE", help="PEM CA certificate CSRs are signed with")
    p.add_argument("--cluster-signing-key-file", metavar="FILE", help="PEM private key of that CA")
    p.add_argument(
        "--use-service-account-credentials",
        action="store_true",
        help="each controller acts as its own ServiceAccount in kube-system (created if missing, its "
        "token from the TokenRequest API), so RBAC judges it by its role system:controller:<name>",
    )
    p.set_defaults(fn=_main, holds_collector=True)  # until its run starts (componentmain)


def _main(args: argparse.Namespace) -> int:
    from mockkube.server import controllermanagermain

    return controllermanagermain.main(args)
