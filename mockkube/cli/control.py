"""``mockkube reset`` and ``mockkube clock``: thin HTTP clients of /mockkube/v1/reset and
/mockkube/v1/clock (mockkube.control.reset), for test suites not written in Python."""

from __future__ import annotations

import argparse
import json

from mockkube.cli.cluster import post
from mockkube.cli.connection import add_flags, request


def reset(args: argparse.Namespace) -> int:
    return post(args, "/mockkube/v1/reset", b"")


def clock(args: argparse.Namespace) -> int:
    path = "/mockkube/v1/clock"
    action = args.action
    if action == "show":
        return request(args, "GET", path)
    if action in ("advance", "set") and not args.value:
        import sys

        print(f"mockkube: clock {action} needs a value (advance 10m, set 2030-01-01T00:00:00Z)", file=sys.stderr)
        return 2
    body = {
        "advance": {"advance": args.value},
        "set": {"set": args.value},
        "freeze": {"freeze": True},
        "unfreeze": {"freeze": False},
        "reset": {"reset": True},
    }[action]
    return post(args, path, json.dumps(body).encode())


def add_commands(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("reset", help="return a running cluster to the state it settled into after start")
    add_flags(r)
    r.set_defaults(fn=reset)
    c = sub.add_parser("clock", help="show, freeze or move a running cluster's clock")
    c.add_argument("action", choices=("show", "advance", "set", "freeze", "unfreeze", "reset"))
    c.add_argument("value", nargs="?", help="advance: a duration such as 10m or 1h30m; set: an RFC 3339 time")
    add_flags(c)
    c.set_defaults(fn=clock)
