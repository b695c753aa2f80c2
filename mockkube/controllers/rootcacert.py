"""The root-ca-cert-publisher: a ``kube-root-ca.crt`` ConfigMap with the cluster's CA
certificate in every active namespace (what projected service-account volumes mount),
recreated when deleted and restored when edited."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "kube-root-ca.crt"
# A fixed self-signed CA certificate for servers without TLS (nothing verifies against it;
# clients and projected volumes only read it); with TLS the serving CA is published.
CA_CERTIFICATE = """-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUT3nVWliRzajVfER82w0szVD8LmEwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKa3ViZXJuZXRlczAeFw0yNjExMjIyMzE2NTNaFw0zNjExMTky
MzE2NTNaMBUxEzARBgNVBAMMCmt1YmVybmV0ZXMwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQBwR3ILMh3VMg3CA3OngHPa+tOIt+SMvsFlORhjSVT5/qW7JJQmzWH
13i17XY/Q+vD3bt2y4R+MBN5vWaTAsXxo1MwUTAdBgNVHQ4EFgQUuz4vmKGZCkO7
9/tKO398Ts8k16owHwYDVR0jBBgwFoAUuz4vmKGZCkO79/tKO398Ts8k16owDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEA/xFnkvOHyCjJpNa1pMrt
Y/SHc9ChAt1HCJ4PVX4r9M4CIDhfOp6KaKqIdoxtEcd472QCqw9fodqxGy3oCKMo
aWt4
-----END CERTIFICATE-----
"""


class RootCACertPublisher(Controller):
    name = "root-ca-cert-publisher"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        self.ca = server.ca_certificate()
        self.ns_rt = self.client.rt("namespaces")
        self.cm_rt = self.client.rt("configmaps")
        ns_inf = Informer(server.store, self.ns_rt)
        ns_inf.add_handler(lambda t, o, p: t != "DELETED" and self.queue.add(o["metadata"]["name"]))
        cm_inf = Informer(server.store, self.cm_rt)
        cm_inf.add_handler(lambda t, o, p: o["metadata"]["name"] == NAME and self.queue.add(o["metadata"]["namespace"]))
        self.informers += [ns_inf, cm_inf]

    def reconcile(self, key: Hashable) -> None:
        ns = self.client.get(self.ns_rt, "", str(key))
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        data = {"ca.crt": self.ca}
        cur = self.client.get(self.cm_rt, str(key), NAME)
        try:
            if cur is None:
                self.client.create(
                    self.cm_rt,
                    {
                        "metadata": {
                            "name": NAME,
                            "namespace": str(key),
                            "annotations": {
                                "kubernetes.io/description": "Contains a CA bundle that can be used to verify the "
                                "kube-apiserver when using internal endpoints such as the "
                                "internal service IP or kubernetes.default.svc. No other usage "
                                "is guaranteed across distributions of Kubernetes clusters."
                            },
                        },
                        "data": data,
                    },
                )
            elif cur.get("data") != data:
                self.client.update(self.cm_rt, dict(cur, data=data))
        except errors.APIError as e:
            if e.code not in (403, 404, 409):
                raise


async def start(server: "Server") -> list:
    c = RootCACertPublisher(server)
    await c.start()
    return [c]
