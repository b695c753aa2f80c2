"""``mockkube scheduler``: the scheduler as a process of its own, started by ``mockkube serve``
(mockkube/server/schedulermain.py runs it)."""

from __future__ import annotations

import argparse

from mockkube.cli.args import duration, positive_duration


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scheduler", help=argparse.SUPPRESS)  # started by `mockkube serve`
    p.add_argument("--kubeconfig", required=True, help="how to reach the API server")
    p.add_argument("--cluster", default=None, help="the cluster profile (its scheduler: settings)")
    p.add_argument("--dra-filter-timeout", dest="filter_timeout", type=duration, default=None, metavar="DURATION")
    p.add_argument("--binding-timeout", type=positive_duration, default=None, metavar="DURATION")
    p.add_argument("--clock", default=None, help=argparse.SUPPRESS)  # the server's clock state (JSON)
    p.add_argument("--control", action="store_true", help=argparse.SUPPRESS)  # requests on stdin
    p.add_argument("--log-level", default="WARNING")
    p.set_defaults(fn=_main)


def _main(args: argparse.Namespace) -> int:
    from mockkube.server import schedulermain  # the scheduler process only: not every command

    return schedulermain.main(args)
