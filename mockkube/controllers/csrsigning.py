"""kube-controller-manager's csrsigning controllers (``pkg/controller/certificates/signer``):
an approved CertificateSigningRequest of a built-in signer gets ``status.certificate``,
signed by the cluster CA (``Server.signing_ca``); a request its signer refuses gets the
``Failed`` condition (reason ``SignerValidationFailure``). The other signers' requests are
left to whoever runs them."""

from __future__ import annotations

import base64
import datetime
from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors, meta
from mockkube.machinery.meta import clone

if TYPE_CHECKING:
    from mockkube.server.server import Server


class CSRSigningController(Controller):
    name = "csrsigning-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.rt = self.client.rt("certificatesigningrequests", "certificates.k8s.io")
        self.csrs = Informer(server.store, self.rt)
        self.csrs.add_handler(lambda t, o, p: t != "DELETED" and self.queue.add(o["metadata"]["name"]))
        self.informers.append(self.csrs)

    def reconcile(self, key: Hashable) -> None:
        csr = self.csrs.get("", str(key))
        if csr is None:
            return
        # cryptography loads with the first CertificateSigningRequest, not with every server
        from mockkube.controllers import csrsigning_util as cu

        spec, status = csr.get("spec") or {}, csr.get("status") or {}
        if status.get("certificate") or not cu.approved(csr) or spec.get("signerName") not in cu.SIGNERS:
            return
        now = self.server.clock()
        new = clone(csr)
        try:
            req = cu.parse_request(spec.get("request", ""))
        except ValueError as e:
            why: str | None = f"unable to parse csr {csr['metadata']['name']!r}: {e}"
        else:
            why = cu.signer_error(req, spec.get("usages") or [], spec["signerName"])
        if why is not None:
            new.setdefault("status", {}).setdefault("conditions", []).append(
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "SignerValidationFailure",
                    "message": why,
                    "lastUpdateTime": meta.rfc3339(now),
                }
            )
        else:
            ca_cert, ca_key = self.server.signing_ca()
            pem = cu.sign(
                req,
                spec.get("usages") or [],
                spec.get("expirationSeconds"),
                ca_cert,
                ca_key,
                datetime.datetime.fromtimestamp(now, datetime.timezone.utc),
            )
            new.setdefault("status", {})["certificate"] = base64.b64encode(pem).decode()
        try:
            self.client.update_status(self.rt, new)
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise


async def start(server: "Server") -> list:
    c = CSRSigningController(server)
    await c.start()
    return [c]
