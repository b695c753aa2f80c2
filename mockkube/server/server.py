"""Assembles one mockkube process: database, store, generic registry, HTTP app and the
in-process components, with start and stop."""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from aiohttp import web

from mockkube.apiserver.http.app import SERVER_KEY, STARTED, build_app
from mockkube.apiserver.http.serving import Site, Timeouts
from mockkube.apiserver.resources import registry
from mockkube.apiserver.rest import Resources
from mockkube.machinery.clock import Clock
from mockkube.machinery.metrics import Metrics
from mockkube.storage.db import make_engine, migrate
from mockkube.storage.store import Store

if TYPE_CHECKING:
    from mockkube.kubelet.kubeletclient import ClientConfig

log = logging.getLogger("mockkube")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SERVICE_CIDR = "10.96.0.0/12"  # kubeadm's default --service-cluster-ip-range, as the ClusterIPs always were


def kubeconfig(
    url: str, token: str = "mockkube", ca_pem: bytes | None = None, client: tuple[bytes, bytes] | None = None
) -> dict:
    """A kubeconfig whose cluster, user and context are all named ``mockkube``: trusting
    ``ca_pem`` and authenticating with the ``client`` (certificate, key) PEMs or ``token``."""
    import base64

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    cluster: dict = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = b64(ca_pem)
    user: dict = (
        {"client-certificate-data": b64(client[0]), "client-key-data": b64(client[1])} if client else {"token": token}
    )
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "mockkube", "cluster": cluster}],
        "users": [{"name": "mockkube", "user": user}],
        "contexts": [
            {"name": "mockkube", "context": {"cluster": "mockkube", "user": "mockkube", "namespace": "default"}}
        ],
        "current-context": "mockkube",
        "preferences": {},
    }


def write_kubeconfig(
    path: str | Path,
    url: str,
    token: str = "mockkube",
    ca_pem: bytes | None = None,
    client: tuple[bytes, bytes] | None = None,
) -> None:
    import yaml

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(kubeconfig(url, token, ca_pem, client), sort_keys=False))
    p.chmod(0o600)


class Server:
    """One cluster: ``await start()`` returns its URL, ``await stop()`` ends it cleanly."""

    def __init__(
        self,
        address: str = "127.0.0.1",
        port: int = 6443,
        db_url: str | None = None,
        kubeconfig_path: str | None = None,
        cluster: str | None = None,
        clock: Callable[[], float] | None = None,
        components: bool = True,
        event_window: int | None = None,
        component_thread: bool = True,
        filter_timeout: float | None = None,
        binding_timeout: float | None = None,
        authorization_mode: str = "AlwaysAllow",
        service_account_key_file: str | None = None,
        service_account_issuer: str | None = None,
        token_auth_file: str | None = None,
        anonymous_auth: bool = True,
        authentication: bool | None = None,
        tls: bool = False,
        tls_cert_file: str | None = None,
        tls_private_key_file: str | None = None,
        client_ca_file: str | None = None,
        cert_dir: str | None = None,
        service_addresses: dict[str, str] | list[str] | None = None,
        scheduler_process: bool = False,
        run_scheduler: bool = True,
        controllers: str = "server",
        node_shards: int = 0,
        run_kubelets: bool = True,
        kubelet_client: "ClientConfig | None" = None,
        reuse_port: bool = False,
        control_plane: bool | None = None,
        feature_gates: "Mapping[str, bool] | str | None" = None,
        runtime_config: "Mapping[str, bool] | str | None" = None,
        event_ttl: float | None = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        self.address = address
        self.port = port
        self.db_url = db_url
        self.kubeconfig_path = kubeconfig_path
        self.cluster = cluster
        # what every time-based behaviour reads; a Clock can be frozen and moved at run time
        self.clock = clock if clock is not None else Clock()
        self.with_components = components
        # components on their own loop and thread (the default, as `mockkube serve` runs);
        # False keeps them on the caller's loop, for asyncio tests that reach into them
        self.component_thread = component_thread
        self._component_loop = None
        # the scheduler as a process of its own (`mockkube serve`'s default): it works on the
        # machine's other core and reaches the API over HTTP, as kube-scheduler does
        self.scheduler_process = scheduler_process and components
        # False: no scheduler here (`--scheduler none`): `mockkube scheduler --leader-elect`
        # processes run beside the server, one acting (docs/scaling.md)
        self.run_scheduler = run_scheduler
        # SO_REUSEPORT: further API server processes listen on the same port (--api-servers)
        self.reuse_port = reuse_port
        self.scheduler_child = None  # mockkube.server.childprocess.Child while it runs
        # kube-controller-manager's controllers: "server" (here), "process" (`mockkube
        # controller-manager`, started with the components) or "none" (run elsewhere,
        # leader-elected: docs/scaling.md)
        if controllers not in ("server", "process", "none"):
            raise ValueError(f"controllers must be server, process or none, not {controllers!r}")
        self.controllers = controllers
        self.controller_manager_child = None
        # M > 0: the simulated kubelets in M `mockkube kubelets --shard I/M` processes
        self.node_shards = node_shards
        # False (`--kubelets none`): `mockkube kubelets --shard I/M` processes run elsewhere
        self.run_kubelets = run_kubelets
        # kube-apiserver's --kubelet-client-certificate/-key, --kubelet-certificate-authority and
        # --kubelet-preferred-address-types: how this server reaches kubelets elsewhere
        self.kubelet_client = kubelet_client
        self.kubelet_preferred_address_types = kubelet_client.address_types if kubelet_client else None
        # DynamicResources filterTimeout in seconds (0 = none); None: the profile's, else 10 s
        self.filter_timeout = filter_timeout
        self.event_window = event_window
        from mockkube.controllers.eventttl import DEFAULT_TTL

        # --event-ttl: an Event not written for this long is deleted (0: kept for ever)
        self.event_ttl = DEFAULT_TTL if event_ttl is None else event_ttl
        # connection timeouts as kube-apiserver's (idle 90 s, request headers 32 s, TLS
        # handshake 32 s); tests shorten them
        self.timeouts = timeouts if timeouts is not None else Timeouts()
        self.binding_timeout = binding_timeout  # seconds; None = the profile's, else 10 minutes
        # kind's control plane and kube-system add-ons; None: the profile's `controlPlane`
        self.control_plane = control_plane
        self._configure_features(feature_gates, runtime_config)
        self.temp_dirs: list[str] = []  # removed when the server stops
        from mockkube.apiserver.webhookclient import parse_service_address

        # where webhook ``service`` references go (simulated pods have no network):
        # {"NS/NAME": "HOST:PORT"} or ["NS/NAME=HOST:PORT", ...] (--service-address)
        pairs = (
            service_addresses.items()
            if isinstance(service_addresses, dict)
            else [tuple(x.split("=", 1)) for x in service_addresses or ()]
        )
        self.service_addresses = dict(parse_service_address(f"{k}={v}") for k, v in pairs)
        from mockkube.apiserver.authz.authorizer import parse_modes

        self.authorization_modes = parse_modes(authorization_mode)  # --authorization-mode
        from mockkube.rules.satoken import ISSUER, Signer

        key = Path(service_account_key_file).read_bytes() if service_account_key_file else None
        self.sa_signer = Signer(key, service_account_issuer or ISSUER)  # ServiceAccount tokens
        from mockkube.apiserver.http import authn

        # authentication is on when any flag asks for it (or ``authentication=True``); off, every
        # request is the default admin, as before
        self.token_auth_file = token_auth_file
        self.anonymous_auth = anonymous_auth
        self.static_tokens = authn.read_token_file(token_auth_file) if token_auth_file else {}
        enabled = (
            authentication
            if authentication is not None
            else bool(
                token_auth_file
                or not anonymous_auth
                or client_ca_file
                or tls
                or tls_cert_file
                or self.authorization_modes != ["AlwaysAllow"]
            )
        )
        self.authn = authn.Authentication(enabled=enabled, anonymous=anonymous_auth)
        # clients send credentials only over TLS (client-go drops them on http://): whatever
        # turns authentication on serves HTTPS, as kube-apiserver always does
        from mockkube.apiserver.tlsconfig import TLSConfig

        self.tls = TLSConfig.choose(
            enabled or tls, tls_cert_file, tls_private_key_file, client_ca_file, cert_dir, self.temp_dirs
        )
        # the credential the written kubeconfig holds: an admin token (system:masters) when
        # authentication is on, as kind's kubeconfig holds an admin certificate
        self.admin_token = "mockkube"
        if enabled:
            import secrets

            from mockkube.apiserver.authz.authorizer import MASTERS

            self.admin_token = secrets.token_urlsafe(32)
            self.static_tokens[self.admin_token] = {"username": "kubernetes-admin", "groups": [MASTERS]}
        from mockkube.config.features import served_registry

        # this server also serves what is defined at run time; not what --runtime-config or
        # a feature gate turns off
        self.registry = served_registry(registry(), self.feature_gates, self.runtime_config)
        self.metrics = Metrics()
        gates = self.feature_gates
        self.metrics.gauge_family(  # as component-base's featuregate records it
            "kubernetes_feature_enabled",
            "[BETA] This metric records the data about the stage and enablement of a k8s feature.",
            ["name", "stage"],
            lambda: [((name, gates.specs[name].metric_stage), 1.0 if on else 0.0) for name, on in gates.items()],
        )
        from mockkube.machinery.faults import Faults

        self.faults = Faults(self.clock, self.metrics)  # injected faults (docs/faults.md); cleared by reset
        from mockkube.server import controllermetrics

        controllermetrics.register(self)  # workqueue depth/adds per controller, simulated nodes
        self.store: Store | None = None
        self.resources: Resources | None = None
        self._runner: web.AppRunner | None = None
        self._pod_endpoint: tuple[str, str, bytes] | None = None  # in_cluster_endpoint(), made once
        # where a Service is served when --service-address does not say (the process
        # runtime's Services: (host, 0), 0 meaning the Service's own port)
        self.service_fallback: Callable[[str, str], tuple[str, int] | None] | None = None
        self._pod_endpoint_lock = threading.Lock()
        self._api_loop: asyncio.AbstractEventLoop | None = None
        self.url = ""
        self.components: list = []
        self.cleanups: list[threading.Thread] = []  # clean-up still running after stop()
        self.baseline = None  # mockkube.storage.reset.Baseline: what a reset returns to
        self._baseline_task: asyncio.Task | None = None
        self._reset_hooks: list[Callable] = []

    def _configure_features(
        self, feature_gates: "Mapping[str, bool] | str | None", runtime_config: "Mapping[str, bool] | str | None"
    ) -> None:
        """``feature_gates`` and ``runtime_config`` (flags, markers) on top of the cluster
        profile's ``featureGates``/``runtimeConfig``: a bad name or value is a start-up error
        (FeatureGateError) saying where it came from."""
        from mockkube.config.features import (
            FeatureGateError,
            FeatureGates,
            RuntimeConfig,
            gate_overrides,
            parse_runtime_config,
        )
        from mockkube.config.profile import load_profile

        self.profile = load_profile(self.cluster, self.control_plane)  # the same one the components use

        def raw(value) -> str:
            return value if isinstance(value, str) else ",".join(f"{k}={v}" for k, v in (value or {}).items())

        try:
            FeatureGates(gate_overrides(self.profile.feature_gates))
        except FeatureGateError as e:
            raise FeatureGateError(f"cluster profile featureGates: {e}") from None
        try:
            gates = {**gate_overrides(self.profile.feature_gates), **gate_overrides(feature_gates)}
            # --feature-gates: what every part of this cluster asks before acting on a gated feature
            self.feature_gates = FeatureGates(gates)
        except FeatureGateError as e:
            raise FeatureGateError(f'invalid argument "{raw(feature_gates)}" for "--feature-gates" flag: {e}') from None
        where = "--runtime-config" if runtime_config else "cluster profile runtimeConfig"
        try:
            # --runtime-config: which built-in group/versions are served
            self.runtime_config = RuntimeConfig(
                {**parse_runtime_config(self.profile.runtime_config), **parse_runtime_config(runtime_config)}
            )
            self.runtime_config.validate(registry().group_versions())
        except FeatureGateError as e:
            raise FeatureGateError(f"{where}: {e}") from None

    def open_store(self) -> None:
        engine = make_engine(self.db_url)
        migrate(engine)
        self.store = Store(engine, self.registry, **({"event_window": self.event_window} if self.event_window else {}))
        from mockkube.apiserver.resources import apiextensions

        # custom resources defined before a restart are served again before the caches fill
        apiextensions.load_stored(self.registry, self.store.stored_objects(apiextensions.STORAGE_KEY))
        self.store.load()
        self.resources = Resources(self.store, self.registry, self.clock)
        self.resources.feature_gates = self.feature_gates
        self.resources.webhooks.services = lambda ns, name: (
            self.service_addresses.get((ns, name))
            or (self.service_fallback(ns, name) if self.service_fallback is not None else None)
        )
        crds = apiextensions.CRDServing(self.resources)
        self.store.on_remote.append(crds.on_remote)  # CRDs written through another API server
        self.on_reset(lambda: crds.after_reset(self.baseline))  # a reset writes the store directly
        from mockkube.apiserver.resources.quota import QuotaAdmission

        self.resources.admission.append(QuotaAdmission(self.resources))
        from mockkube.apiserver.resources import ipallocation

        self.resources.after_commit.append(ipallocation.after_commit(self.resources))  # one IPAddress per ClusterIP
        if self.store.shared:
            # API servers starting together on one PostgreSQL database: one bootstraps at a
            # time, the next finds the objects there
            with self.store.engine.connect() as conn:
                conn.exec_driver_sql("SELECT pg_advisory_lock(7312)")
                try:
                    self._bootstrap()
                finally:
                    conn.exec_driver_sql("SELECT pg_advisory_unlock(7312)")
                    conn.commit()
        else:
            self._bootstrap()

    def _bootstrap(self) -> None:
        """What a fresh kube-apiserver creates: the system namespaces and the ``kubernetes``
        Service, the RBAC policy, ... On an empty embedded store, the writes a first start
        recorded are committed again with fresh uids and times (``bootstraptemplate``)."""
        from mockkube.server import bootstraptemplate as tpl

        if self.store.shared or self.store.rv != 0 or not tpl.enabled():
            self._bootstrap_objects()
            return
        key = tpl.key(self.feature_gates, self.registry)
        template = tpl.load(key)
        if template is not None:
            self.store.replay(tpl.fresh(template, self.resources.now()))
            return
        first = self.resources.now()
        writes = self.store.record_writes()
        try:
            self._bootstrap_objects()
        finally:
            self.store.stop_recording()
        tpl.save(key, tpl.make(writes, first, self.resources.now()))

    def _bootstrap_objects(self) -> None:
        """The bootstrap's objects one by one through the generic registry, each created
        when missing (a restart, another API server on PostgreSQL)."""
        from mockkube.apiserver.rest import WriteOptions
        from mockkube.controllers import apfconfig
        from mockkube.machinery.errors import APIError

        def by(manager: str = "kube-apiserver") -> WriteOptions:
            # kube-apiserver makes these through its loopback client, whose user agent names the
            # field manager (the APF configuration producer sets its own), so each is recorded
            return WriteOptions(field_manager=manager, field_validation="Ignore")

        def create(rt: Any, ns: str, obj: dict, opts: WriteOptions) -> Any:
            """The object made, or None when a create that failed finds it made meanwhile by
            another API server (on PostgreSQL; its AlreadyExists, or its ClusterIP taken): as
            kube-apiserver's bootstrap controllers take AlreadyExists, the bootstrap goes on."""
            try:
                return self.resources.create(rt, ns, obj, opts)
            except APIError:
                self.store.sync()
                if self.store.get(rt, ns, obj["metadata"]["name"]) is None:
                    raise
                return None

        self.store.sync()  # what another API server bootstrapped already (PostgreSQL)
        ns_rt = self.registry.get("", "v1", "namespaces")
        for ns in SYSTEM_NAMESPACES:
            if self.store.get(ns_rt, "", ns) is None:
                create(ns_rt, "", {"metadata": {"name": ns}}, by())
        cidr_rt = self.registry.get("networking.k8s.io", "v1", "servicecidrs")
        if self.store.get(cidr_rt, "", "kubernetes") is None:
            # the default ServiceCIDR (--service-cluster-ip-range) and its Ready condition, as
            # kube-apiserver's default-servicecidr-repair-controller writes them
            made = create(cidr_rt, "", {"metadata": {"name": "kubernetes"}, "spec": {"cidrs": [SERVICE_CIDR]}}, by())
            if made is not None:
                ready = dict(made.obj)
                ready["status"] = {
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "lastTransitionTime": self.resources.now(),
                            "reason": "",
                            "message": "Kubernetes default Service CIDR is ready",
                        }
                    ]
                }
                self.resources.update(cidr_rt, "", "kubernetes", ready, by(), subresource="status")
        svc_rt = self.registry.get("", "v1", "services")
        if self.store.get(svc_rt, "default", "kubernetes") is None:
            create(
                svc_rt,
                "default",
                {
                    "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
                    "spec": {
                        "clusterIP": "10.96.0.1",
                        "sessionAffinity": "None",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                    },
                },
                by(),
            )
        from mockkube.apiserver.resources.builtin import bootstrap_objects
        from mockkube.apiserver.resources.rbac_bootstrap import reconciled_rules

        for rt, ns, obj in bootstrap_objects(self.registry, self.feature_gates):
            have = self.store.get(rt, ns, obj["metadata"]["name"])
            if have is None:
                for c in (obj.get("status") or {}).get("conditions") or ():
                    c["lastTransitionTime"] = self.resources.now()
                create(rt, ns, obj, by(apfconfig.PRODUCER) if rt.group == apfconfig.GROUP else by())
            elif rt.kind == "ClusterRole" and (rules := reconciled_rules(have.obj, obj)) is not None:
                # as the rbac/bootstrap-roles hook reconciles: a role made before a gate was
                # turned on gains that gate's rules
                try:
                    self.resources.update(rt, ns, obj["metadata"]["name"], {**have.obj, "rules": rules}, by())
                except APIError as e:
                    if e.code != 409:  # another API server reconciled it first
                        raise
        apfconfig.write_dangling(self)

    async def start(self) -> str:
        if self.store is None:
            self.open_store()
        app = build_app(self.resources, self.registry, self.metrics)
        app[SERVER_KEY] = self
        self._setup_auth(app)
        from mockkube import control
        from mockkube.apiserver.http import oidc
        from mockkube.apiserver.http.subresources import NODE_KEY
        from mockkube.kubelet.streaming import NodeStreams

        app[NODE_KEY] = NodeStreams(self)  # pods/log, exec, attach and portforward reach the node through it
        oidc.setup(app)  # ServiceAccount issuer discovery
        control.setup(app)  # mockkube's own endpoints: /mockkube/v1/... and the dashboard
        self.app = app
        # kube-apiserver takes long request lines (huge label selectors); aiohttp stops at 8 KiB
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=2.0,
            max_line_size=1 << 20,
            max_field_size=1 << 20,
        )
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET6 if ":" in self.address else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((self.address, self.port))
        self.port = sock.getsockname()[1]
        site = Site(self._runner, sock, self.tls.server_context(self.address) if self.tls else None, self.timeouts)
        await site.start()
        self._api_loop = asyncio.get_running_loop()
        self._pod_endpoint = None
        host = f"[{self.address}]" if ":" in self.address else self.address
        self.url = f"{'https' if self.tls else 'http'}://{host}:{self.port}"
        if self.kubeconfig_path:
            self.write_kubeconfig(self.kubeconfig_path)
        if self.with_components:
            await self._start_components()
        app[STARTED].set()  # /readyz's post-start hooks pass from here
        self._baseline_task = asyncio.get_running_loop().create_task(self._take_baseline())
        return self.url

    def _setup_auth(self, app: web.Application) -> None:
        from mockkube.apiserver.authz.authorizer import Authorizer
        from mockkube.apiserver.http.app import API_KEY
        from mockkube.apiserver.http.authz import AUTHORIZER, StorePolicy
        from mockkube.apiserver.resources.serviceaccount_tokens import ServiceAccountTokens

        self.authorizer = Authorizer(self.authorization_modes, StorePolicy(self.store, self.registry))
        # in-process components' writes are authorized too, only when something is enforced
        self.store.authorizer = self.authorizer if self.authorizer.enforcing else None
        self.sa_tokens = ServiceAccountTokens(self.resources, self.sa_signer)
        app[AUTHORIZER] = self.authorizer
        self.resources.authorize = self._cel_authorize
        from mockkube.apiserver.http import authn

        if self.tls:
            self.authn.request_authenticators[:] = [self.tls.authenticate]
        self.authn.token_authenticators[:] = [
            authn.static_tokens(self.static_tokens),
            lambda token: self.sa_tokens.authenticate(token)[0],
        ]
        app[authn.AUTHN] = self.authn
        if not getattr(self, "_escalation_checked", False):  # one check per store, across restarts
            from mockkube.apiserver.authz import node
            from mockkube.apiserver.authz.escalation import EscalationCheck

            self.resources.validating.append(EscalationCheck(lambda: self.authorizer, self._role_rules).validate)
            self.resources.validating.append(lambda a, warnings: node.restrict(a))  # NodeRestriction
            from mockkube.apiserver.authz.draclaims import ClaimStatusAuthorization

            self.resources.validating.append(ClaimStatusAuthorization(lambda: self.authorizer).validate)
            from mockkube.apiserver.authz.certificates import SignerAuthorization

            self.resources.validating.append(SignerAuthorization(lambda: self.authorizer).validate)  # approve/sign
            self._escalation_checked = True
        auth = app[API_KEY].auth
        auth.authorizer, auth.tokens, auth.authenticate_token = self.authorizer, self.sa_tokens, self.authenticate_token

    def in_cluster_endpoint(self) -> tuple[str, str, bytes]:
        """Where programs in pods reach this server with their in-cluster configuration
        (host, port, the CA PEM their ``ca.crt`` holds). Clients in a pod always speak HTTPS
        and verify that CA: a server serving TLS is reached as it is; a plain-HTTP one opens,
        the first time a pod needs it, a second listener serving TLS with a CA of its own
        (same API, same authentication). Any thread may call it."""
        with self._pod_endpoint_lock:
            if self._pod_endpoint is not None:
                return self._pod_endpoint
            host = "127.0.0.1" if self.address in ("", "0.0.0.0") else "::1" if self.address == "::" else self.address
            if self.tls is not None:
                self._pod_endpoint = (host, str(self.port), self.tls.ca_pem or b"")
                return self._pod_endpoint
            from mockkube.apiserver.tlsconfig import TLSConfig

            tls = TLSConfig.choose(True, None, None, None, None, self.temp_dirs)
            assert tls is not None and self._runner is not None and self._api_loop is not None
            ctx = tls.server_context(host)
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, 0))
            sock.listen(128)  # connections wait in the backlog until the site below accepts them
            site = web.SockSite(self._runner, sock, ssl_context=ctx)
            self._api_loop.call_soon_threadsafe(lambda: asyncio.ensure_future(site.start()))
            self._pod_endpoint = (host, str(sock.getsockname()[1]), tls.ca_pem or b"")
            return self._pod_endpoint

    def client(self, manager: str):
        """An in-process client writing as ``manager`` (what components use)."""
        from mockkube.client.client import Client

        return Client(self.resources, manager)

    def write_kubeconfig(self, path: str | Path) -> None:
        """A kubeconfig for this server's admin: with TLS it trusts the CA and holds a client
        certificate for ``kubernetes-admin`` in ``system:masters`` (as kind's does) when the
        server made its CA, else the admin token."""
        ca = self.tls.ca_pem if self.tls else None
        client = self.tls.admin_client() if self.tls else None
        write_kubeconfig(path, self.url, self.admin_token, ca, client)

    def ca_certificate(self) -> str:
        """The cluster CA as pods see it (kube-root-ca.crt, token Secrets): the serving CA with
        TLS, else a fixed placeholder certificate."""
        if self.tls and self.tls.ca_pem:
            return self.tls.ca_pem.decode()
        from mockkube.controllers.rootcacert import CA_CERTIFICATE

        return CA_CERTIFICATE

    def signing_ca(self) -> tuple[bytes, bytes]:
        """(certificate, key) PEMs the csrsigning controller signs with: the cluster CA when
        the server made it (--tls), so an issued client certificate authenticates; else a CA
        made for this server (nothing verifies against it; docs/compatibility.md)."""
        if self.tls and self.tls.ca is not None:
            return self.tls.ca.cert_pem, self.tls.ca.key_pem
        if getattr(self, "_signing_ca", None) is None:
            from mockkube.apiserver import certs

            ca = certs.make_ca()
            self._signing_ca = (ca.cert_pem, ca.key_pem)
        return self._signing_ca

    @property
    def kubelet_client_ssl(self) -> "ssl.SSLContext | None":
        """How this server reaches kubelets over HTTPS (kube-apiserver's
        ``--kubelet-client-certificate`` and ``--kubelet-certificate-authority``): a client
        certificate its CA signed for ``kube-apiserver-kubelet-client`` in ``system:masters``
        (kubeadm's), the kubelets' serving certificates checked against the same CA. None
        (plain HTTP) when the server has no CA of its own (no TLS, or the user's certificate).
        The flags, when given, say instead (``kubelet_client``)."""
        if self.kubelet_client is not None and self.kubelet_client.tls:
            return self.kubelet_client.ssl_context()
        if self.tls is None or self.tls.ca is None:
            return None
        from mockkube.apiserver import certs

        crt, key = self.tls.dir / "apiserver-kubelet-client.crt", self.tls.dir / "apiserver-kubelet-client.key"
        if not crt.exists():
            certs.write_pair(
                certs.make_client(self.tls.ca, "kube-apiserver-kubelet-client", ["system:masters"]), crt, key
            )
        ctx = ssl.create_default_context(cadata=self.tls.ca.cert_pem.decode())
        ctx.load_cert_chain(str(crt), str(key))
        return ctx

    def kubelet_serving_files(self, directory: str) -> list[str]:
        """``mockkube kubelets`` flags for a shard this server starts: a serving certificate
        its CA signed and the CA its clients' certificates must carry (kubeadm's kubelet
        setup); none when the server reaches kubelets over plain HTTP."""
        if self.tls is None or self.tls.ca is None:
            return []
        from mockkube.apiserver import certs

        d = Path(directory)
        certs.write_pair(
            certs.make_serving(self.tls.ca, ["127.0.0.1", "::1", "localhost"]), d / "kubelet.crt", d / "kubelet.key"
        )
        (d / "ca.crt").write_bytes(self.tls.ca.cert_pem)
        return [
            "--tls-cert-file",
            str(d / "kubelet.crt"),
            "--tls-private-key-file",
            str(d / "kubelet.key"),
            "--client-ca-file",
            str(d / "ca.crt"),
        ]

    def add_token(self, user: str, groups: list[str] | None = None, uid: str = "") -> str:
        """A new static bearer token for ``user`` (as a line of --token-auth-file would give)."""
        import secrets

        token = secrets.token_urlsafe(24)
        info: dict = {"username": user, "uid": uid}
        if groups:
            info["groups"] = list(groups)
        self.static_tokens[token] = info
        return token

    def _cel_authorize(self, user: dict, attrs: dict) -> tuple[bool, str]:
        """CEL's ``authorizer`` checks (admission policies) through this server's authorizer."""
        from mockkube.apiserver.authz.requestinfo import Attributes

        if "path" in attrs:
            a = Attributes(user=user, verb=attrs.get("verb", ""), resource_request=False, path=attrs["path"])
        else:
            a = Attributes(
                user=user,
                verb=attrs.get("verb", ""),
                api_group=attrs.get("group", ""),
                resource=attrs.get("resource", ""),
                subresource=attrs.get("subresource", ""),
                namespace=attrs.get("namespace", ""),
                name=attrs.get("name", ""),
            )
        return self.authorizer.authorize(a)

    def _role_rules(self, ref: dict, namespace: str) -> list[dict]:
        """The rules of a binding's roleRef (404 when the role does not exist)."""
        from mockkube.machinery import errors

        cluster = ref.get("kind") == "ClusterRole"
        rt = self.registry.get("rbac.authorization.k8s.io", "v1", "clusterroles" if cluster else "roles")
        entry = self.store.get(rt, "" if cluster else namespace, ref.get("name", ""))
        if entry is None:
            raise errors.not_found(rt.plural, rt.group, ref.get("name", ""))
        return list(entry.obj.get("rules") or [])

    def authenticate_token(self, token: str, audiences: list[str] | None = None) -> tuple[dict | None, list[str]]:
        """(userInfo, audiences) of a bearer token this cluster accepts, else (None, [])."""
        user = self.static_tokens.get(token)
        if user is not None:
            from mockkube.apiserver.http.authn import with_authenticated

            return with_authenticated(user), list(audiences or self.sa_tokens.audiences)
        return self.sa_tokens.authenticate(token, audiences)

    async def _take_baseline(self) -> None:
        from mockkube.storage.reset import Baseline, quiesce

        if self.components:
            await self.on_cluster(quiesce, self.components)
        self.baseline = Baseline.take(self.store)

    async def settled(self) -> None:
        """Wait until the cluster has settled after start (components idle) and its
        baseline for ``reset()`` is taken."""
        if self._baseline_task is not None:
            await asyncio.shield(self._baseline_task)

    def on_reset(self, hook: Callable) -> None:
        """Run ``hook()`` (sync or async, on the components' side) at every reset: for state
        outside the store, such as injected faults."""
        self._reset_hooks.append(hook)

    async def reset(self) -> dict:
        """Back to the settled state after start without a restart (see mockkube/storage/reset.py):
        returns what was changed and how long it took."""
        from mockkube.server import components as comps
        from mockkube.storage.reset import quiesce, restore

        t0 = time.perf_counter()
        await self.settled()
        await self.on_cluster(self.faults.clear)  # undo cluster faults while the components run
        if self.components:
            await self.on_cluster(self._stop_components)
            self.components = []
        counts = restore(self.store, self.baseline)
        if hasattr(self.clock, "reset"):
            self.clock.reset()
        for hook in list(self._reset_hooks):
            await self.on_cluster(hook)
        if self.with_components:
            if self._component_loop is not None:
                self.components = await self._component_loop.submit(comps.start_all, self)
            else:
                self.components = await comps.start_all(self)
            await self.on_cluster(quiesce, self.components)
        return {
            "deleted": counts.deleted,
            "created": counts.created,
            "updated": counts.updated,
            "seconds": round(time.perf_counter() - t0, 4),
        }

    def clock_changed(self) -> int:
        """Ask every component with ``resync()`` to look again at time-based state (call on
        the components' side after moving the clock)."""
        n = 0
        for c in list(self.components):
            fn = getattr(c, "resync", None)
            if callable(fn):
                fn()
                n += 1
        return n

    async def move_clock(self, change: Callable[[], object]) -> dict:
        """Apply ``change()`` to the clock where the components live, then resync them."""

        def apply() -> dict:
            change()
            self.clock_changed()
            return self.clock.state() if hasattr(self.clock, "state") else {"now": self.clock(), "frozen": False}

        return await self.on_cluster(apply)

    async def _start_components(self) -> None:
        from mockkube.config.profile import load_profile
        from mockkube.server import components

        if self.profile is None:
            self.profile = load_profile(self.cluster, self.control_plane)

        if self.component_thread:
            from mockkube.server.componentloop import ComponentLoop

            self._component_loop = ComponentLoop()
            self.components = await self._component_loop.submit(components.start_all, self)
        else:
            self.components = await components.start_all(self)

    async def _stop_components(self) -> None:
        for c in reversed(self.components):
            try:
                await c.stop()
            except Exception:  # pragma: no cover - shutdown must go on
                log.exception("component stop failed")

    async def on_cluster(self, fn: Callable, *args):
        """Run ``fn(*args)`` where the components live and return its result.

        HTTP handlers that read or change component state (profiles, driver health,
        clocks, faults) go through here rather than touching that state directly, so
        the components may run on a loop of their own."""
        cl = self._component_loop
        if cl is not None and not cl.on_loop:
            return await cl.submit(fn, *args)
        out = fn(*args)
        if asyncio.iscoroutine(out):
            out = await out
        return out

    def run_on_cluster(self, fn: Callable, *args, timeout: float | None = 60):
        """``on_cluster`` for synchronous callers on another thread (tests, scripts)."""
        cl = self._component_loop
        if cl is None:
            raise RuntimeError("components run on the server's own loop; call them there")
        return cl.run(fn, *args, timeout=timeout)

    async def stop(self) -> None:
        """Stop within about two seconds whatever the components are doing: first every
        component is asked to drop long work (a running allocation stops at its next
        step), then stopped on its own loop."""
        for c in self.components:
            request_stop = getattr(c, "request_stop", None)
            if request_stop is not None:
                request_stop()
        if self._baseline_task is not None and not self._baseline_task.done():
            self._baseline_task.cancel()
        t0 = time.perf_counter()
        cl, self._component_loop = self._component_loop, None
        if cl is not None:
            try:
                await asyncio.wait_for(cl.submit(self._stop_components), 1.0)
            except (asyncio.TimeoutError, RuntimeError):
                log.warning("components did not stop within 1 s; leaving them to the process exit")
            cl.close(0.3)
        elif self.components:
            await self._stop_components()
        self.components = []
        t1 = time.perf_counter()
        if self.temp_dirs:
            _remove_later(self.temp_dirs)
        self.temp_dirs = []
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        from mockkube.apiserver.http.subresources import NODE_KEY

        node = self.app.get(NODE_KEY) if getattr(self, "app", None) is not None else None
        if node is not None:
            await node.close()  # its connections to kubelets elsewhere
        if self.store is not None:
            self.store.close()
            self.store = None
        log.info("stopped: components %.3fs, http and store %.3fs", t1 - t0, time.perf_counter() - t1)


def _remove_later(paths: list[str]) -> None:
    """Remove directory trees in one detached process: thousands of node directories take a
    second or more, and SIGTERM must not wait for them. One process for all of them: each
    reset leaves the kubelets' directory of the cluster before it, and a pytest session's
    server stopping after a hundred resets spent a second starting a process per directory."""
    import subprocess
    import sys

    try:
        subprocess.Popen(
            [sys.executable, "-c", "import shutil, sys\nfor p in sys.argv[1:]: shutil.rmtree(p, True)", *paths],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)


async def serve_forever(server: Server, ready_line: bool = True, replicas=None, stop_with_stdin: bool = False) -> None:
    """Run ``server`` until SIGTERM/SIGINT; ``replicas`` (``apireplicas.APIReplicas``) start
    on its port once it listens, before the ready line, and stop before it.
    ``stop_with_stdin``: also stop when stdin closes (the server that started this one ended)."""
    from mockkube.server import gctuning

    gctuning.tune()
    url = await server.start()
    if replicas is not None:
        try:
            replicas.spawn(server.port)
            await asyncio.to_thread(replicas.wait_ready)
        except RuntimeError:
            await server.stop()
            raise
    loop = asyncio.get_running_loop()
    pacer = gctuning.Pacer(loop, activity=lambda: server.store.rv)
    from mockkube.server import memdebug

    memdebug.start(loop)  # only with MOCKKUBE_MEMDEBUG set
    server.on_reset(pacer.owe)  # the retired components are garbage in cycles

    def settle() -> None:
        gctuning.settle()
        pacer.start()  # full collections paced by memory too

    # once the start-up burst is over (not before the ready line: a full collection takes a while)
    loop.call_later(1.0, settle)
    if ready_line:
        print(f"mockkube ready at {url}", flush=True)
    stop = asyncio.Event()
    import signal

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except NotImplementedError:  # pragma: no cover
            pass
    if stop_with_stdin:
        import sys

        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def until_closed() -> None:
            while await reader.read(4096):
                pass
            stop.set()

        watching = loop.create_task(until_closed())
    await stop.wait()
    if stop_with_stdin:
        watching.cancel()
    pacer.stop()
    if replicas is not None:
        await asyncio.to_thread(replicas.stop)
    await server.stop()
