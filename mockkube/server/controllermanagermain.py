"""``mockkube controller-manager --kubeconfig FILE``: kube-controller-manager's controllers
(``components.CONTROLLER_MANAGER``) as a process of its own, a client of the API over HTTP.

With ``--leader-elect`` several run, one acting, over the Lease
``kube-system/kube-controller-manager`` (componentmain.py). Its informers follow every
resource the server serves with list and watch (the garbage collector and the namespace
controller look at them all, as upstream's metadata informers) but Events
(``NOT_FOLLOWED``). Key material the controllers
sign with is taken as kube-controller-manager takes it: ``--service-account-private-key-file``
(the token controller; without it that controller does not run, as upstream's),
``--root-ca-file`` (else the kubeconfig's CA) and ``--cluster-signing-cert-file`` /
``--cluster-signing-key-file``. With ``--use-service-account-credentials`` each controller
writes as its own ServiceAccount (mockkube/client/satokens.py), as kube-controller-manager's.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mockkube.client.remote import HTTP
from mockkube.machinery.registry import ResourceType
from mockkube.server import componentmain

USER_AGENT = "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/mockkube"

# Changes no controller here reacts to, and a third of a pod burst's: Events (five a pod; the
# garbage collector ignores them, as upstream's). The namespace controller lists them through
# the API when it empties a namespace, as upstream's lists every resource live (the client
# asks the API for what the replica does not follow). Leases stay: a node's Lease is owned by
# its Node, and the garbage collector deletes it with the Node.
NOT_FOLLOWED = frozenset({("", "events"), ("events.k8s.io", "events")})


class Host(componentmain.Host):
    """What the controllers ask of their server, in a process of their own."""

    name = "controller-manager"
    user_agent = USER_AGENT

    def __init__(self, args: argparse.Namespace, http_: HTTP) -> None:
        from mockkube.rules.satoken import Signer

        super().__init__(args, http_)
        key = getattr(args, "service_account_private_key_file", None)
        self.sa_signer = Signer(Path(key).read_bytes()) if key else None
        self._root_ca = Path(args.root_ca_file).read_text() if getattr(args, "root_ca_file", None) else ""
        cert, key = getattr(args, "cluster_signing_cert_file", None), getattr(args, "cluster_signing_key_file", None)
        self._signing = (Path(cert).read_bytes(), Path(key).read_bytes()) if cert and key else None
        # custom resources: served here as their CRDs (followed like any resource) say
        self._crd_types: dict[str, list[ResourceType]] = {}
        crd_rt = self.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if crd_rt is not None:
            self.store.hub.add_listener(crd_rt.storage_key, self._crd_changed)
        if getattr(args, "use_service_account_credentials", False):
            from mockkube.client.satokens import ServiceAccountTokens

            http_.authorization = ServiceAccountTokens(http_, self.clock).authorization
        # the `kubernetes` Service's endpoints name the API server the kubeconfig names
        u = urlsplit(http_.creds.server)
        self.address, self.port = u.hostname or "127.0.0.1", u.port or (443 if u.scheme == "https" else 80)

    def followed(self) -> list[ResourceType]:
        rts: dict[str, ResourceType] = {}
        for rt in self.registry.all():  # the first of a resource's versions, as Client.rt picks
            if "list" in rt.verbs and "watch" in rt.verbs and (rt.group, rt.plural) not in NOT_FOLLOWED:
                rts.setdefault(rt.storage_key, rt)
        return list(rts.values())

    def _crd_changed(self, ev: Any) -> None:
        """Serve (and follow) the types a CRD defines once it is established, as the API
        server does; drop them when it goes."""
        from mockkube.apiserver.resources.apiextensions import types_of

        crd = ev.entry.obj
        name = crd["metadata"]["name"]
        old = self._crd_types.pop(name, [])
        new = [] if ev.type == "DELETED" else types_of(crd)
        keep = {(r.group, r.version, r.plural) for r in new}
        for rt in old:
            if (rt.group, rt.version, rt.plural) not in keep:
                self.registry.remove(rt)
                if not any(r.storage_key == rt.storage_key for r in new):
                    self.store.unfollow(rt)
        for rt in new:
            self.store.follow(rt)  # first: an informer made for the new type reads the replica
            self.registry.add(rt)
        if new:
            self._crd_types[name] = new

    async def start_all(self) -> list:
        from mockkube.server.components import CONTROLLER_MANAGER

        started: list = []
        for name in CONTROLLER_MANAGER:
            if name == "mockkube.controllers.tokens" and self.sa_signer is None:
                continue  # upstream: no --service-account-private-key-file, no token controller
            started.extend(await importlib.import_module(name).start(self))
        return started

    def ca_certificate(self) -> str:
        """``--root-ca-file``, else the CA the kubeconfig trusts (upstream's fallback), else
        the server's placeholder for a cluster without TLS."""
        if self._root_ca:
            return self._root_ca
        if self.http.creds.ca_pem:
            return self.http.creds.ca_pem
        from mockkube.controllers.rootcacert import CA_CERTIFICATE

        return CA_CERTIFICATE

    def signing_ca(self) -> tuple[bytes, bytes]:
        """(certificate, key) PEMs of ``--cluster-signing-cert-file``/``-key-file``; without
        them a CA made for this process (nothing verifies against it)."""
        if self._signing is None:
            from mockkube.apiserver import certs

            ca = certs.make_ca()
            self._signing = (ca.cert_pem, ca.key_pem)
        return self._signing


def main(args: argparse.Namespace) -> int:
    for flag in ("service_account_private_key_file", "root_ca_file", "cluster_signing_cert_file"):
        path = getattr(args, flag, None)
        if path and not Path(path).is_file():
            print(f"mockkube controller-manager: --{flag.replace('_', '-')}: no such file: {path}", file=sys.stderr)
            return 2
    if bool(args.cluster_signing_cert_file) != bool(args.cluster_signing_key_file):
        print(
            "mockkube controller-manager: --cluster-signing-cert-file and --cluster-signing-key-file go together",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(componentmain.run(args, Host))
