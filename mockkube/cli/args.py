"""Argument types shared by the ``mockkube`` commands: argparse reports a bad value as a
usage error (exit 2, one line) rather than a traceback."""

from __future__ import annotations

import argparse

from mockkube.machinery.durations import parse_duration


def duration(text: str) -> float:
    """A Go-style duration ("1m30s", "250ms") in seconds."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_duration(text: str) -> float:
    seconds = duration(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive, got {text!r}")
    return seconds


def shard(text: str) -> tuple[int, int]:
    """``I/M``: shard I of M (0 <= I < M)."""
    i, sep, m = text.partition("/")
    try:
        index, count = int(i), int(m)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard wants I/M (e.g. 0/2), got {text!r}") from None
    if not sep or count < 1 or not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"--shard wants I/M with 0 <= I < M, got {text!r}")
    return index, count


def add_component_flags(p: argparse.ArgumentParser, lease: str, cluster_help: str) -> None:
    """What every component process takes (``mockkube scheduler``, ``mockkube
    controller-manager``): how to reach the API, the server's settings when the server
    starts it, and upstream's leader election flags and defaults (component-base) with
    ``lease`` as the Lease's name."""
    p.add_argument("--kubeconfig", required=True, help="how to reach the API server")
    p.add_argument("--cluster", default=None, help=cluster_help)
    p.add_argument("--feature-gates", default="", help=argparse.SUPPRESS)  # the server's, merged
    p.add_argument("--runtime-config", default="", help=argparse.SUPPRESS)
    p.add_argument("--clock", default=None, help=argparse.SUPPRESS)  # the server's clock state (JSON)
    p.add_argument("--control", action="store_true", help=argparse.SUPPRESS)  # requests on stdin
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help=f"act only while holding the Lease kube-system/{lease} (several processes, one acting)",
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
    p.add_argument("--leader-elect-resource-name", default=lease, metavar="NAME", help="the Lease's name")
    p.add_argument(
        "--leader-elect-resource-namespace", default="kube-system", metavar="NAMESPACE", help="the Lease's namespace"
    )
    p.add_argument("--log-level", default="WARNING")
