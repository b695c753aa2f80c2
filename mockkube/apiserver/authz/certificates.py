"""The CertificateApproval and CertificateSigning admission plugins
(``plugin/pkg/admission/certificates/{approval,signing}``): approving a
CertificateSigningRequest (``/approval``) needs ``approve``, and setting its
``status.certificate`` (``/status``) needs ``sign``, on ``signers`` in certificates.k8s.io
named for the request's signerName or for its domain (``kubernetes.io/*``). Checked for HTTP
requests; in-process components are not authorized (as for every other check)."""

from __future__ import annotations

from typing import Callable

from mockkube.apiserver.admission.matching import Attributes as Admission
from mockkube.apiserver.authz.authorizer import Authorizer
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery import errors
from mockkube.machinery.requestcontext import current_request_verb

GROUP = "certificates.k8s.io"


def authorized_for_signer(az: Authorizer, user: dict, verb: str, signer: str) -> bool:
    """IsAuthorizedForSignerName: the signer by name, then ``<domain>/*``."""
    names = [signer] + ([signer.split("/")[0] + "/*"] if "/" in signer else [])
    for name in names:
        ok, _ = az.authorize(
            Attributes(user=user, verb=verb, api_group=GROUP, api_version="*", resource="signers", name=name)
        )
        if ok:
            return True
    return False


class SignerAuthorization:
    """A validating admission step on certificatesigningrequests/approval and /status."""

    def __init__(self, authorizer: Callable[[], Authorizer | None]) -> None:
        self.authorizer = authorizer

    def validate(self, a: Admission, warnings: list[str]) -> None:
        az = self.authorizer()
        if (
            az is None
            or not az.enforcing
            or not current_request_verb()
            or a.group != GROUP
            or a.resource != "certificatesigningrequests"
            or a.operation != "UPDATE"
            or a.old is None
            or a.obj is None
        ):
            return
        signer = (a.old.get("spec") or {}).get("signerName", "")
        if a.subresource == "approval":
            verb, what = "approve", "approve"
        elif a.subresource == "status":
            if (a.obj.get("status") or {}).get("certificate") == (a.old.get("status") or {}).get("certificate"):
                return
            verb, what = "sign", "sign"
        else:
            return
        if not authorized_for_signer(az, a.user, verb, signer):
            raise errors.forbidden(
                "certificatesigningrequests",
                GROUP,
                a.name,
                f'user not permitted to {what} requests with signerName "{signer}"',
            )
