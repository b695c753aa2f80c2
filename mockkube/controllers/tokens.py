"""The legacy token controller: a Secret of type ``kubernetes.io/service-account-token``
naming a ServiceAccount (``kubernetes.io/service-account.name``) gets a token, the cluster CA
and the namespace in its data, as kube-controller-manager's TokensController fills it (v1.36
no longer makes such Secrets by itself; users still may). A Secret naming a ServiceAccount
that does not exist is deleted, as upstream does."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors
from mockkube.rules.satoken import legacy_claims

if TYPE_CHECKING:
    from mockkube.server.server import Server

TYPE = "kubernetes.io/service-account-token"
SA_NAME, SA_UID = "kubernetes.io/service-account.name", "kubernetes.io/service-account.uid"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class TokensController(Controller):
    name = "serviceaccount-token-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.signer = server.sa_signer
        self.ca = server.ca_certificate()
        self.client = server.client("kube-controller-manager")
        self.secret_rt = self.client.rt("secrets")
        self.sa_rt = self.client.rt("serviceaccounts")
        inf = Informer(server.store, self.secret_rt)
        inf.add_handler(
            lambda t, o, p: (
                t != "DELETED"
                and o.get("type") == TYPE
                and self.queue.add((o["metadata"]["namespace"], o["metadata"]["name"]))
            )
        )
        self.informers.append(inf)

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        secret = self.client.get(self.secret_rt, ns, name)
        if secret is None or secret.get("type") != TYPE or secret["metadata"].get("deletionTimestamp"):
            return
        ann = secret["metadata"].get("annotations") or {}
        sa = self.client.get(self.sa_rt, ns, ann.get(SA_NAME, ""))
        try:
            if sa is None or (ann.get(SA_UID) and ann[SA_UID] != sa["metadata"]["uid"]):
                self.client.delete(self.secret_rt, ns, name)
                return
            data = dict(secret.get("data") or {})
            if data.get("token") and ann.get(SA_UID) and data.get("ca.crt") and data.get("namespace"):
                return
            uid = sa["metadata"]["uid"]
            if not data.get("token"):
                data["token"] = _b64(self.signer.sign(legacy_claims(ns, (sa["metadata"]["name"], uid), name)))
            data.setdefault("ca.crt", _b64(self.ca))
            data.setdefault("namespace", _b64(ns))
            meta = dict(secret["metadata"], annotations={**ann, SA_UID: uid})
            self.client.update(self.secret_rt, dict(secret, metadata=meta, data=data))
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise


async def start(server: "Server") -> list:
    c = TokensController(server)
    await c.start()
    return [c]
