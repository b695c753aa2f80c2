"""kube-controller-manager's ``--use-service-account-credentials`` (its
``SAControllerClientBuilder``): each controller acts as its own ServiceAccount in kube-system
(``system:serviceaccount:kube-system:<controller>``), the account created if it is missing
and its token taken from the TokenRequest API with the controller-manager's own credentials,
renewed before it expires. So RBAC judges each controller by its bootstrap role
(``system:controller:<controller>``), as on a real cluster; the shared informers keep the
controller-manager's own credentials, as upstream's do.

Whom a call is for is the acting identity (``requestcontext.current_user``), which each
controller sets for its work (``informer.Controller.identity``, ``acting_as``)."""

from __future__ import annotations

import threading
from typing import Callable

from mockkube.client.remote import HTTP
from mockkube.machinery import errors, meta
from mockkube.machinery.requestcontext import current_user

EXPIRATION = 3600  # seconds, the token's life the builder asks for
RENEW_AT = 0.8  # of its life: a token is replaced once that much of it has passed


class ServiceAccountTokens:
    """The ``HTTP.authorization`` hook of a controller-manager run with
    ``--use-service-account-credentials``."""

    def __init__(self, http_: HTTP, clock: Callable[[], float], namespace: str = "kube-system") -> None:
        self.http = http_
        self.clock = clock
        self.namespace = namespace
        self.prefix = f"system:serviceaccount:{namespace}:"
        self._tokens: dict[str, tuple[str, float]] = {}  # account -> (token, renew after)
        self._lock = threading.Lock()

    def authorization(self) -> str | None:
        """``Bearer <token>`` of the acting controller's ServiceAccount; None for anyone else
        (the informers, the controllers upstream runs with the manager's own credentials)."""
        username = current_user().get("username", "")
        if not username.startswith(self.prefix):
            return None
        name = username[len(self.prefix) :]
        with self._lock:
            have = self._tokens.get(name)
        if have is None or self.clock() >= have[1]:
            have = self._fetch(name)
            with self._lock:
                self._tokens[name] = have
        return f"Bearer {have[0]}"

    def _fetch(self, name: str) -> tuple[str, float]:
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts"
        try:
            self.http.call("GET", f"{path}/{name}", own=True)
        except errors.APIError as e:
            if e.code != 404:
                raise
            sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": self.namespace}}
            try:
                self.http.call("POST", path, sa, own=True)
            except errors.APIError as e2:
                if e2.code != 409:  # made meanwhile
                    raise
        now = self.clock()
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": EXPIRATION},
        }
        out = self.http.call("POST", f"{path}/{name}/token", body, own=True)
        status = out.get("status") or {}
        try:
            expires = meta.parse_time(status["expirationTimestamp"])
        except (KeyError, TypeError, ValueError):
            expires = now + EXPIRATION
        return status["token"], now + RENEW_AT * max(0.0, expires - now)
