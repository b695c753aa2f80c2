"""``mockkube scheduler``: the scheduler as a process of its own, started by ``mockkube serve``
or, with ``--leader-elect``, by the user beside ``mockkube serve --scheduler none``
(several of them, one acting: docs/scaling.md); mockkube/server/schedulermain.py runs it."""

from __future__ import annotations

import argparse

from mockkube.cli.args import duration, positive_duration


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scheduler", help="run a scheduler against a server (several: --leader-elect)")
    p.add_argument("--kubeconfig", required=True, help="how to reach the API server")
    p.add_argument("--cluster", default=None, help="the cluster profile (its scheduler: settings)")
    p.add_argument("--dra-filter-timeout", dest="filter_timeout", type=duration, default=None, metavar="DURATION")
    p.add_argument("--binding-timeout", type=positive_duration, default=None, metavar="DURATION")
    p.add_argument("--feature-gates", default="", help=argparse.SUPPRESS)  # the server's, merged
    p.add_argument("--runtime-config", default="", help=argparse.SUPPRESS)
    p.add_argument("--clock", default=None, help=argparse.SUPPRESS)  # the server's clock state (JSON)
    p.add_argument("--control", action="store_true", help=argparse.SUPPRESS)  # requests on stdin
    # kube-scheduler's leader election flags and defaults (component-base)
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="act only while holding the Lease kube-system/kube-scheduler (several schedulers, one acting)",
    )
    p.add_argument(
        "--leader-elect-lease-duration",
        type=positive_duration,
        default=15.0,
        metavar="DURATION",
        help="how long a standby waits, after it last saw the Lease change, before taking it (default 15s)",
    )
    p.add_argument(
        "--leader-elect-renew-deadline",
        type=positive_duration,
        default=10.0,
        metavar="DURATION",
        help="how long the leader tries to renew before it stops acting (default 10s)",
    )
    p.add_argument(
        "--leader-elect-retry-period",
        type=positive_duration,
        default=2.0,
        metavar="DURATION",
        help="how often to try to take or renew the Lease (default 2s)",
    )
    p.add_argument("--leader-elect-resource-name", default="kube-scheduler", metavar="NAME", help="the Lease's name")
    p.add_argument(
        "--leader-elect-resource-namespace", default="kube-system", metavar="NAMESPACE", help="the Lease's namespace"
    )
    p.add_argument("--log-level", default="WARNING")
    p.set_defaults(fn=_main)


def _main(args: argparse.Namespace) -> int:
    from mockkube.server import schedulermain  # the scheduler process only: not every command

    return schedulermain.main(args)
