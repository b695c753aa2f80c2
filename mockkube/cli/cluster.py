"""``mockkube apply-profile`` and ``mockkube driver health`` / ``mockkube node kubelet``:
thin HTTP clients of the /mockkube/v1 endpoints (mockkube.control.cluster)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mockkube.cli.connection import add_flags, call, request


def post(args: argparse.Namespace, path: str, body: bytes, content_type: str = "application/json") -> int:
    return request(args, "POST", path, body, content_type, end="\n")


def apply_profile(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    return post(args, "/mockkube/v1/profile", text.encode(), "application/yaml")


def driver_health(args: argparse.Namespace) -> int:
    body = {"pool": args.pool, "device": args.device, "healthy": args.state == "healthy"}
    if args.effect:
        body["effect"] = args.effect
    return post(args, f"/mockkube/v1/drivers/{args.driver}/health", json.dumps(body).encode())


def kubelet_state(args: argparse.Namespace) -> int:
    return post(
        args, f"/mockkube/v1/nodes/{args.node}/kubelet", json.dumps({"running": args.state == "start"}).encode()
    )


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the commands on ``mockkube``'s subparsers."""
    a = sub.add_parser("apply-profile", help="apply a cluster profile to a running server")
    a.add_argument("file", help="profile YAML ('-' for stdin)")
    add_flags(a)
    a.set_defaults(fn=apply_profile)
    d = sub.add_parser("driver", help="simulated DRA drivers")
    dsub = d.add_subparsers(dest="driver_command", required=True)
    h = dsub.add_parser("health", help="mark a device healthy or unhealthy")
    h.add_argument("driver", help="e.g. gpu.example.com")
    h.add_argument("pool", help="the node name (node-local devices) or the fabric pool")
    h.add_argument("device", help="e.g. gpu-0")
    h.add_argument("state", choices=["healthy", "unhealthy"])
    h.add_argument("--effect", choices=["NoSchedule", "NoExecute", "None"], default=None)
    add_flags(h)
    h.set_defaults(fn=driver_health)
    from mockkube.cli.driverrun import add_command

    add_command(dsub)  # driver run: a built-in driver's kubelet plugin as a process
    k = sub.add_parser("kubelet", help="stop or start a node's kubelet simulator")
    k.add_argument("state", choices=["stop", "start"])
    k.add_argument("node")
    add_flags(k)
    k.set_defaults(fn=kubelet_state)
    add_explain(sub)
    add_fault_commands(sub)


def explain_pod(args: argparse.Namespace) -> int:
    """``mockkube explain pod NAME``: GET .../pods/NAME/explain and print it."""
    from urllib.parse import quote

    fmt = "json" if args.output == "json" else "text"
    path = f"/mockkube/v1/namespaces/{quote(args.namespace)}/pods/{quote(args.name)}/explain?format={fmt}" + (
        "&all=true" if args.all_devices else ""
    )
    text = call(args, "GET", path)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def add_explain(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("explain", help="why is a pod pending: per node, per plugin, per device")
    esub = e.add_subparsers(dest="explain_kind", required=True)
    p = esub.add_parser("pod", help="explain a pod")
    p.add_argument("name")
    p.add_argument("-n", "--namespace", default="default")
    p.add_argument("-o", "--output", choices=["text", "json"], default="text")
    p.add_argument("--all-devices", action="store_true", help="list every device, also those whose selectors are false")
    add_flags(p)
    p.set_defaults(fn=explain_pod)


_LISTS = ("verbs", "resources", "namespaces", "users", "claims", "devices", "drivers")


def fault_add(args: argparse.Namespace) -> int:
    from mockkube.machinery.durations import parse_duration

    spec: dict = {"kind": args.kind}
    for name in _LISTS:
        value = getattr(args, name)
        if value:
            spec[name] = [v for v in value.split(",") if v]
    for flag, key in (
        ("code", "code"),
        ("probability", "probability"),
        ("seed", "seed"),
        ("count", "count"),
        ("retry_after", "retryAfterSeconds"),
        ("node", "node"),
        ("driver", "driver"),
        ("pool", "pool"),
        ("device", "device"),
        ("effect", "effect"),
        ("message", "message"),
    ):
        value = getattr(args, flag)
        if value is not None:
            spec[key] = value
    for flag, key in (("duration", "durationSeconds"), ("delay", "delaySeconds"), ("after", "afterSeconds")):
        value = getattr(args, flag)
        if value is not None:
            spec[key] = parse_duration(value)
    return request(args, "POST", "/mockkube/v1/faults", json.dumps(spec).encode())


def fault_list(args: argparse.Namespace) -> int:
    return request(args, "GET", "/mockkube/v1/faults")


def fault_delete(args: argparse.Namespace) -> int:
    if not args.all and not args.id:
        print("mockkube: name a fault ID or pass --all", file=sys.stderr)
        return 1
    return request(args, "DELETE", "/mockkube/v1/faults" + ("" if args.all else f"/{args.id}"))


def add_fault_commands(sub: argparse._SubParsersAction) -> None:
    from mockkube.machinery.faults import API_KINDS, CLUSTER_KINDS

    f = sub.add_parser("fault", help="inject, list and clear faults (docs/faults.md)")
    fsub = f.add_subparsers(dest="fault_command", required=True)
    a = fsub.add_parser("add", help="inject a fault")
    a.add_argument("kind", choices=API_KINDS + CLUSTER_KINDS)
    for name in _LISTS:
        a.add_argument(f"--{name}", default=None, help="comma-separated; empty matches all")
    a.add_argument("--code", type=int, default=None, help="error: 409, 429, 500, 503 or 504")
    a.add_argument("--retry-after", type=int, default=None, help="429/504: Retry-After seconds")
    a.add_argument("--probability", type=float, default=None)
    a.add_argument("--seed", type=int, default=None)
    a.add_argument("--count", type=int, default=None, help="fire at most this many times")
    a.add_argument("--duration", default=None, help="end after this long on the server's clock, e.g. 30s")
    a.add_argument("--delay", default=None, help="latency / slow-driver: e.g. 500ms")
    a.add_argument("--after", default=None, help="drop-watch: cut the watch this long after it starts")
    a.add_argument("--node", default=None)
    a.add_argument("--driver", default=None)
    a.add_argument("--pool", default=None)
    a.add_argument("--device", default=None)
    a.add_argument("--effect", default=None, choices=["NoSchedule", "NoExecute", "None"])
    a.add_argument("--message", default=None)
    add_flags(a)
    a.set_defaults(fn=fault_add)
    ls = fsub.add_parser("list", help="list injected faults")
    add_flags(ls)
    ls.set_defaults(fn=fault_list)
    d = fsub.add_parser("delete", help="remove a fault (or --all)")
    d.add_argument("id", nargs="?")
    d.add_argument("--all", action="store_true")
    add_flags(d)
    d.set_defaults(fn=fault_delete)
