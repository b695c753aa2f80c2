"""Command line: ``mockkube serve | kubeconfig | reset | clock | ...``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING

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


class _LineHelp(argparse.HelpFormatter):
    """Help text whose explicit line breaks stay (the --feature-gates list, one gate a line)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        lines: list[str] = []
        for part in text.split("\n"):
            lines += super()._split_lines(part, width)
        return lines


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
        feature_gates=args.feature_gates or None,
        runtime_config=args.runtime_config or None,
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
        components=args.components,
        scheduler_process=args.scheduler == "process",
        run_scheduler=args.scheduler != "none",
        controllers=args.controllers,
        node_shards=args.node_shards,
        run_kubelets=args.kubelets != "none",
        kubelet_client=_kubelet_client(args),
        event_ttl=args.event_ttl,
        # with the scheduler out, the other components are many small writers that
        # yield every 5 ms: on the API's loop they skip the cross-thread hand-offs
        component_thread=args.scheduler == "thread",
        reuse_port=args.reuse_port or args.api_servers > 1,
    )


_KUBELET_CLIENT_FLAGS = (
    ("kubelet_client_certificate", "--kubelet-client-certificate"),
    ("kubelet_client_key", "--kubelet-client-key"),
    ("kubelet_certificate_authority", "--kubelet-certificate-authority"),
)


def _address_types(text: str) -> tuple[str, ...]:
    from mockkube.kubelet.kubeletclient import parse_address_types

    try:
        return parse_address_types(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _kubelet_client(args: argparse.Namespace):
    """kube-apiserver's kubelet client flags as a ``kubeletclient.ClientConfig`` (None when
    none is given: the server reaches kubelets as it sets them up itself)."""
    from mockkube.kubelet.kubeletclient import ClientConfig

    config = ClientConfig(
        args.kubelet_client_certificate,
        args.kubelet_client_key,
        args.kubelet_certificate_authority,
        args.kubelet_preferred_address_types,
    )
    return config if config != ClientConfig() else None


def _check_kubelet_client(args: argparse.Namespace) -> list[str]:
    """The kubelet client flags checked (UsageError, one line); returned as the further API
    servers' flags, which reach the same kubelets."""
    from pathlib import Path

    from mockkube.cli.connection import UsageError

    out = []
    for attr, flag in _KUBELET_CLIENT_FLAGS:
        path = getattr(args, attr)
        if path is not None:
            if not Path(path).is_file():
                raise UsageError(f"{flag}: no such file: {path}")
            out += [flag, str(Path(path).resolve())]
    if bool(args.kubelet_client_certificate) != bool(args.kubelet_client_key):
        raise UsageError("--kubelet-client-certificate and --kubelet-client-key go together")
    tls = args.kubelet_client_certificate or args.kubelet_certificate_authority
    if tls and args.node_shards and args.components and args.kubelets != "none":
        raise UsageError(
            "--kubelet-client-certificate and --kubelet-certificate-authority are for kubelets started "
            "elsewhere (--kubelets none); the shards --node-shards starts are set up by this server"
        )
    if args.kubelet_preferred_address_types:
        out += ["--kubelet-preferred-address-types", ",".join(args.kubelet_preferred_address_types)]
    return out


def _serve(args: argparse.Namespace) -> int:
    import os
    import time

    from mockkube.cli.connection import UsageError

    if args.api_servers < 1:
        raise UsageError("--api-servers must be at least 1")
    if args.node_shards < 0:
        raise UsageError("--node-shards must be 0 or more")
    if args.api_servers > 1:
        if not (args.db or "").startswith(("postgresql", "postgres:")):
            raise UsageError("--api-servers above 1 needs --db postgresql://... (the API servers share it)")
        if (
            args.tls
            or args.token_auth_file
            or args.client_ca_file
            or args.authorization_mode != "AlwaysAllow"
            or not args.anonymous_auth
        ):
            raise UsageError("--api-servers above 1 serves without authentication or TLS (docs/scaling.md)")

    kubelet_flags = _check_kubelet_client(args)
    if args.address not in ("127.0.0.1", "::1", "localhost") and args.authorization_mode == "AlwaysAllow":
        print(
            f"mockkube: serving on {args.address} with --authorization-mode AlwaysAllow: whoever reaches it may "
            "create pods, whose commands run on this host (the process runtime); consider "
            "--authorization-mode Node,RBAC or kubelet.runtime: simulated (docs/security.md)",
            file=sys.stderr,
        )
    from mockkube.server.server import serve_forever

    server = server_of(args)
    replicas = None
    if args.api_servers > 1:
        from mockkube.server.apireplicas import APIReplicas

        extra = ["--log-level", args.log_level]
        # where the kubelets are, so that the others reach a shard's nodes at their kubelets too
        extra += ["--node-shards", str(args.node_shards)] if args.node_shards else []
        extra += ["--kubelets", "none"] if args.kubelets == "none" else []
        extra += kubelet_flags
        replicas = APIReplicas(args.api_servers - 1, args.db, args.address, extra)
    code = 0
    try:
        asyncio.run(serve_forever(server, replicas=replicas, stop_with_stdin=args.stop_with_stdin))
    except OSError as e:
        print(f"mockkube: cannot serve on {args.address}:{args.port}: {e.strerror or e}", file=sys.stderr)
        code = 1
    except RuntimeError as e:
        print(f"mockkube: {e}", file=sys.stderr)
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
    import yaml

    sys.stdout.write(yaml.safe_dump(kubeconfig(args.server, ca_pem=ca, client=client), sort_keys=False))
    return 0


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``only="serve"``: with that command alone (a server's start need not
    build, nor import, every other command's flags)."""
    p = argparse.ArgumentParser(prog="mockkube", description="A Kubernetes v1.36 API server with DRA, for tests.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run a cluster", formatter_class=_LineHelp)
    s.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=6443, help="port; 0 picks a free one (default 6443)")
    s.add_argument(
        "--db",
        default=None,
        help="SQLAlchemy URL (default: embedded SQLite in a temporary file, removed at exit; sqlite:// in memory)",
    )
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
    from mockkube.config.features import gate_help

    s.add_argument(
        "--feature-gates",
        default="",
        metavar="KEY=BOOL,...",
        help="kube-apiserver's feature gates, on top of v1.36's defaults and the profile's featureGates "
        "(the demo cluster turns on DRANodeAllocatableResources); a gate needs the gates it depends on "
        "on too, as upstream declares them (GangScheduling needs GenericWorkload). Alpha and beta gates "
        "(GA and deprecated ones are accepted too; docs/compatibility.md lists all):\n" + gate_help(),
    )
    s.add_argument(
        "--runtime-config",
        default="",
        metavar="KEY=BOOL,...",
        help="kube-apiserver's --runtime-config: api/all, api/ga, api/beta, api/alpha, group/version or "
        "group/version/resource =true|false (default: GA versions served, beta and alpha ones not, as v1.36)",
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
        choices=("process", "thread", "none"),
        default="process",
        help="where the scheduler runs: a process of its own, a client of the API as kube-scheduler "
        "(default; it works on a second core), a thread of the server's process, or none (run "
        "`mockkube scheduler --leader-elect` processes beside it: docs/scaling.md)",
    )
    s.add_argument(
        "--controllers",
        choices=("server", "process", "none"),
        default="server",
        help="where kube-controller-manager's controllers run: in the server's process (default), a "
        "process of their own (`mockkube controller-manager`, a client of the API), or none (run "
        "`mockkube controller-manager --leader-elect` processes beside it: docs/scaling.md)",
    )
    s.add_argument(
        "--node-shards",
        type=int,
        default=0,
        metavar="M",
        help="run the simulated kubelets in M processes of their own (`mockkube kubelets --shard I/M`, "
        "simulated containers unless the profile asks for processes; the API server reaches their "
        "kubelet API for logs, exec, attach, "
        "port-forward and the node proxy: docs/scaling.md); default 0: in the server's process",
    )
    s.add_argument(
        "--kubelets",
        choices=("server", "none"),
        default="server",
        help="none: run no simulated kubelets here (`mockkube kubelets --shard I/M` processes run "
        "elsewhere; docs/scaling.md); the node lifecycle controller stays",
    )
    s.add_argument(
        "--kubelet-client-certificate",
        default=None,
        metavar="PATH",
        help="the client certificate the API server presents to kubelets (with --kubelet-client-key; "
        "kube-apiserver's flag): kubelet shards elsewhere with their own serving certificates, "
        "docs/scaling.md (default: one the server's CA signed when it has one, else plain HTTP)",
    )
    s.add_argument("--kubelet-client-key", default=None, metavar="PATH", help="the key of --kubelet-client-certificate")
    s.add_argument(
        "--kubelet-certificate-authority",
        default=None,
        metavar="PATH",
        help="the CA the kubelets' serving certificates are checked against (without it, with "
        "--kubelet-client-certificate, they are not checked, as kube-apiserver's)",
    )
    s.add_argument(
        "--kubelet-preferred-address-types",
        type=_address_types,
        default=None,
        metavar="TYPES",
        help="the Node address types to reach kubelets at, in order (default: InternalIP,Hostname,"
        "InternalDNS,ExternalDNS,ExternalIP; a simulated node's hostname resolves nowhere)",
    )
    s.add_argument(
        "--api-servers",
        type=int,
        default=1,
        metavar="N",
        help="N API server processes on one port (SO_REUSEPORT) sharing --db postgresql://...; the first "
        "also runs the components (default 1; docs/scaling.md)",
    )
    s.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)  # a further API server's
    s.add_argument("--stop-with-stdin", action="store_true", help=argparse.SUPPRESS)  # ... which ends with the first
    s.add_argument(
        "--components",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the simulated cluster (scheduler, controllers, kubelets, drivers); --no-components "
        "serves the API only, as a further API server of a cluster on PostgreSQL (docs/scaling.md)",
    )
    s.set_defaults(fn=_serve, holds_collector=True)  # collections resume once it has settled
    if only == "serve":
        return p
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
    from mockkube.cli import controllermanager as controller_manager_command

    controller_manager_command.add_command(sub)  # the controllers as a process of their own
    from mockkube.cli import kubelets as kubelets_command

    kubelets_command.add_command(sub)  # one shard of the simulated kubelets as a process
    return p


def main(argv: list[str] | None = None, prog: str = "mockkube") -> int:
    """Run one command. Errors are one line on stderr: exit status 2 for what the command was
    given (a flag, a profile, a kubeconfig), 1 for what the server answered or an unreachable
    server; ``--debug`` (anywhere on the line) shows the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    parser = build_parser("serve" if argv[:1] == ["serve"] else None)
    parser.prog = prog
    args = parser.parse_args(argv)
    if not getattr(args, "holds_collector", False):
        from mockkube.server import gctuning

        gctuning.release()  # held by the executable (cli/entry.py) over its imports
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
    from mockkube.config.features import FeatureGateError
    from mockkube.config.profile import ProfileError

    if isinstance(e, FeatureGateError):
        return 2, str(e)
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
