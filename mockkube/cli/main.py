"""Command line: ``mockkube serve | kubeconfig | reset | clock | ...``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from mockkube.server.server import Server

from mockkube.cli.args import duration, positive_duration


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("true", "1", "t", "yes"):
        return True
    if low in ("false", "0", "f", "no"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def _authorization_mode(text: str) -> str:
    from mockkube.apiserver.authz.authorizer import parse_modes

    try:
        parse_modes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def server_of(args: argparse.Namespace) -> "Server":
    """The server ``mockkube serve`` runs, built from its flags."""
    from mockkube.server.server import Server

    return Server(
        address=args.address,
        port=args.port,
        db_url=args.db,
        kubeconfig_path=args.kubeconfig,
        cluster=args.cluster,
        filter_timeout=args.dra_filter_timeout,
        binding_timeout=args.binding_timeout,
        control_plane=args.control_plane,
        authorization_mode=args.authorization_mode,
        token_auth_file=args.token_auth_file,
        anonymous_auth=args.anonymous_auth,
        service_account_key_file=args.service_account_signing_key_file,
        service_account_issuer=args.service_account_issuer,
        tls=args.tls,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        client_ca_file=args.client_ca_file,
        cert_dir=args.cert_dir,
        service_addresses=args.service_address,
        scheduler_process=args.scheduler == "process",
        event_ttl=args.event_ttl,
        # with the scheduler out, the other components are many small writers that
        # yield every 5 ms: on the API's loop they skip the cross-thread hand-offs
        component_thread=args.scheduler != "process",
    )


def _serve(args: argparse.Namespace) -> int:
    import os
    import time

    from mockkube.server.server import serve_forever

    server = server_of(args)
    code = 0
    try:
        asyncio.run(serve_forever(server))
    except OSError as e:
        print(f"mockkube: cannot serve on {args.address}:{args.port}: {e.strerror or e}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:  # pragma: no cover - SIGINT before the handler is set
        pass
    # The server has stopped and the database is closed. Let clean-up threads (temporary
    # plugin directories) finish, then leave without tearing down a large heap object by
    # object: a 5,000-node cluster takes seconds to free, and SIGTERM must end within 2 s.
    deadline = time.monotonic() + 1.5
    for t in server.cleanups:
        t.join(max(0.0, deadline - time.monotonic()))
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _kubeconfig(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mockkube.server.server import kubeconfig

    ca = client = None
    if args.cert_dir:  # a server started with --tls --cert-dir DIR: trust its CA, act as its admin
        d = Path(args.cert_dir)
        try:
            ca = (d / "ca.crt").read_bytes()
            if (d / "admin.crt").exists():
                client = ((d / "admin.crt").read_bytes(), (d / "admin.key").read_bytes())
        except OSError as e:
            print(f"mockkube kubeconfig: {e}", file=sys.stderr)
            return 1
    sys.stdout.write(yaml.safe_dump(kubeconfig(args.server, ca_pem=ca, client=client), sort_keys=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mockkube", description="A Kubernetes v1.36 API server with DRA, for tests.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run a cluster")
    s.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=6443, help="port; 0 picks a free one (default 6443)")
    s.add_argument("--db", default=None, help="SQLAlchemy URL (default: embedded in-memory SQLite)")
    s.add_argument("--kubeconfig", default=None, help="write a kubeconfig for this server to PATH")
    s.add_argument("--cluster", default=None, help="cluster profile YAML (default: the built-in demo cluster)")
    s.add_argument(
        "--dra-filter-timeout",
        type=duration,
        default=None,
        metavar="DURATION",
        help="DynamicResources filterTimeout: how long Filter may search for devices on one node "
        "(e.g. 10s, 500ms; 0 turns it off; default: the profile's scheduler.filterTimeout, else 10s)",
    )
    s.add_argument(
        "--control-plane",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="kind's control plane: node mockkube-control-plane, its static pods, CoreDNS, kube-proxy and "
        "kindnet in kube-system (default: the profile's controlPlane; the demo cluster has it)",
    )
    s.add_argument("--log-level", default="WARNING")
    s.add_argument(
        "--binding-timeout",
        type=positive_duration,
        default=None,
        metavar="DURATION",
        help="how long the scheduler waits in PreBind for device binding conditions, e.g. 90s or 10m "
        "(default: the cluster profile's scheduler.bindingTimeout, else 10m)",
    )
    s.add_argument(
        "--event-ttl",
        type=duration,
        default=None,
        metavar="DURATION",
        help="how long an Event is kept after its last write, as kube-apiserver's flag (default 1h; 0 keeps them)",
    )
    s.add_argument(
        "--authorization-mode",
        type=_authorization_mode,
        default="AlwaysAllow",
        metavar="MODES",
        help="comma-separated authorizers as kube-apiserver's flag: AlwaysAllow (default), RBAC, Node, "
        "AlwaysDeny; system:masters is always allowed",
    )
    s.add_argument(
        "--service-address",
        action="append",
        default=[],
        metavar="NS/NAME=HOST:PORT",
        help="where a webhook clientConfig.service reference connects (repeatable; simulated pods have "
        "no network); the certificate is still checked for NAME.NS.svc",
    )
    s.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a generated CA and serving certificate (authentication turns it on too); "
        "the kubeconfig trusts the CA and holds an admin client certificate",
    )
    s.add_argument(
        "--cert-dir",
        default=None,
        metavar="DIR",
        help="where the generated CA and certificates live (reused at the next start; default: a temporary directory)",
    )
    s.add_argument("--tls-cert-file", default=None, metavar="PATH", help="serve HTTPS with this certificate")
    s.add_argument("--tls-private-key-file", default=None, metavar="PATH", help="the key of --tls-cert-file")
    s.add_argument(
        "--client-ca-file",
        default=None,
        metavar="PATH",
        help="client certificates signed by this CA authenticate as CN (user) and O (groups)",
    )
    s.add_argument(
        "--token-auth-file",
        default=None,
        metavar="PATH",
        help='static bearer tokens, kube-apiserver\'s CSV format: token,user,uid[,"group1,group2"] '
        "(turns authentication on)",
    )
    s.add_argument(
        "--anonymous-auth",
        type=_bool,
        default=True,
        metavar="BOOL",
        help="serve requests without credentials as system:anonymous (default true; false turns "
        "authentication on and answers them 401)",
    )
    s.add_argument(
        "--service-account-signing-key-file",
        default=None,
        metavar="PATH",
        help="PEM private key (EC or RSA) that signs ServiceAccount tokens (default: one made at start)",
    )
    s.add_argument(
        "--service-account-issuer",
        default=None,
        metavar="URL",
        help="the iss claim of ServiceAccount tokens (default https://kubernetes.default.svc.cluster.local)",
    )
    s.add_argument(
        "--scheduler",
        choices=("process", "thread"),
        default="process",
        help="where the scheduler runs: a process of its own, a client of the API as kube-scheduler "
        "(default; it works on a second core), or a thread of the server's process",
    )
    s.set_defaults(fn=_serve)
    k = sub.add_parser("kubeconfig", help="print a kubeconfig for a running server")
    k.add_argument("--server", default="http://127.0.0.1:6443")
    k.add_argument(
        "--cert-dir",
        default=None,
        metavar="DIR",
        help="the --cert-dir of a server serving TLS: trust its CA and use its admin certificate",
    )
    k.set_defaults(fn=_kubeconfig)
    from mockkube.cli.cluster import add_commands

    add_commands(sub)  # apply-profile, driver health, kubelet stop|start
    from mockkube.cli import control as cli_control

    cli_control.add_commands(sub)  # reset, clock
    from mockkube.cli import scheduler as scheduler_command

    scheduler_command.add_command(sub)  # the scheduler as a process of its own
    return p


def main(argv: list[str] | None = None, prog: str = "mockkube") -> int:
    """Run one command. Errors are one line on stderr: exit status 2 for what the command was
    given (a flag, a profile, a kubeconfig), 1 for what the server answered or an unreachable
    server; ``--debug`` (anywhere on the line) shows the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser()
    parser.prog = prog
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(args, "log_level", "WARNING"), format="%(asctime)s %(name)s %(message)s")
    try:
        return args.fn(args)
    except Exception as e:
        if debug:
            raise
        code, message = _one_line(e)
        print(f"{prog}: {message}", file=sys.stderr)
        return code


def _one_line(e: Exception) -> tuple[int, str]:
    from mockkube.cli.connection import CommandError, UsageError
    from mockkube.config.profile import ProfileError

    if isinstance(e, ProfileError):
        return 2, "invalid cluster profile: " + "; ".join(e.problems)
    if isinstance(e, UsageError):
        return 2, str(e)
    if isinstance(e, CommandError):
        return 1, str(e)
    return 1, f"{type(e).__name__}: {e} (--debug shows where)"


def plugin() -> int:
    """``kubectl mockkube ...``: kubectl runs ``kubectl-mockkube`` with the words after ``mockkube``."""
    return main(prog="kubectl mockkube")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
