"""``mockkube scheduler``: the scheduler as a process of its own, started by ``mockkube serve``
or, with ``--leader-elect``, by the user beside ``mockkube serve --scheduler none``
(several of them, one acting: docs/scaling.md); mockkube/server/schedulermain.py runs it."""

from __future__ import annotations

import argparse

from mockkube.cli.args import add_component_flags, duration, positive_duration


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scheduler", help="run a scheduler against a server (several: --leader-elect)")
    p.add_argument("--dra-filter-timeout", dest="filter_timeout", type=duration, default=None, metavar="DURATION")
    p.add_argument("--binding-timeout", type=positive_duration, default=None, metavar="DURATION")
    add_component_flags(p, "kube-scheduler", "the cluster profile (its scheduler: settings)")
    p.set_defaults(fn=_main, holds_collector=True)  # until its run starts (componentmain)


def _main(args: argparse.Namespace) -> int:
    from mockkube.server import schedulermain  # the scheduler process only: not every command

    return schedulermain.main(args)
