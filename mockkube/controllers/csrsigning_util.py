"""The csrsigning controller's pure part: which requests a built-in signer accepts
(``pkg/controller/certificates/signer``, ``pkg/apis/certificates/helpers.go``) and how the
certificate is made (``pkg/controller/certificates/authority``), with ``cryptography``."""

from __future__ import annotations

import base64
import binascii
import datetime
import re

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"
# the signers kube-controller-manager runs; legacy-unknown is among them, but no request can
# name it: certificates.k8s.io/v1 (the only version v1.36 serves) refuses that signerName
SIGNERS = (KUBELET_SERVING, KUBELET_CLIENT, KUBE_APISERVER_CLIENT, LEGACY_UNKNOWN)
DEFAULT_TTL = datetime.timedelta(days=365)  # --cluster-signing-duration
BACKDATE = datetime.timedelta(minutes=5)

_PEM = re.compile(rb"-----BEGIN CERTIFICATE REQUEST-----.*?-----END CERTIFICATE REQUEST-----", re.S)

_KEY_USAGES = {
    "signing": "digital_signature",
    "digital signature": "digital_signature",
    "content commitment": "content_commitment",
    "key encipherment": "key_encipherment",
    "key agreement": "key_agreement",
    "data encipherment": "data_encipherment",
    "cert sign": "key_cert_sign",
    "crl sign": "crl_sign",
    "encipher only": "encipher_only",
    "decipher only": "decipher_only",
}
_EXT_USAGES = {
    "any": x509.ObjectIdentifier("2.5.29.37.0"),
    "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "ipsec end system": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
    "ipsec tunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    "ipsec user": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"),
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
    "microsoft sgc": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
    "netscape sgc": x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
}
_KUBELET_SERVING_USAGES = (
    {"digital signature", "key encipherment", "server auth"},
    {"digital signature", "server auth"},
)
_KUBELET_CLIENT_USAGES = (
    {"digital signature", "key encipherment", "client auth"},
    {"digital signature", "client auth"},
)


def parse_request(request_b64: str) -> x509.CertificateSigningRequest:
    try:
        pem = base64.b64decode(request_b64 or "", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("PEM block type must be CERTIFICATE REQUEST") from None
    m = _PEM.search(pem)
    if m is None:
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    return x509.load_pem_x509_csr(m.group(0))


def _sans(req: x509.CertificateSigningRequest) -> dict[str, list]:
    try:
        ext = req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return {"dns": [], "ip": [], "email": [], "uri": []}
    return {
        "dns": ext.get_values_for_type(x509.DNSName),
        "ip": ext.get_values_for_type(x509.IPAddress),
        "email": ext.get_values_for_type(x509.RFC822Name),
        "uri": ext.get_values_for_type(x509.UniformResourceIdentifier),
    }


def _orgs(req: x509.CertificateSigningRequest) -> list[str]:
    return [str(a.value) for a in req.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def _cn(req: x509.CertificateSigningRequest) -> str:
    attrs = req.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(attrs[0].value) if attrs else ""


def _usages_str(required: set[str]) -> str:
    return "[" + " ".join(sorted(required)) + "]"


def signer_error(req: x509.CertificateSigningRequest, usages: list[str], signer: str) -> str | None:
    """Why ``signer`` refuses the request (the ``SignerValidationFailure`` message), or None."""
    u = set(usages)
    if signer == KUBELET_SERVING:
        s = _sans(req)
        if _orgs(req) != ["system:nodes"]:
            return "subject organization is not system:nodes"
        if not s["dns"] and not s["ip"]:
            return "DNS or IP subjectAltName is required"
        if s["email"]:
            return "Email subjectAltNames are forbidden"
        if s["uri"]:
            return "URI subjectAltNames are forbidden"
        if u not in _KUBELET_SERVING_USAGES:
            return f"usages did not match {_usages_str(_KUBELET_SERVING_USAGES[0])}"
        if not _cn(req).startswith("system:node:"):
            return "subject common name does not begin with system:node:"
        return None
    if signer == KUBELET_CLIENT:
        s = _sans(req)
        if _orgs(req) != ["system:nodes"]:
            return "subject organization is not system:nodes"
        for key, what in (("dns", "DNS"), ("email", "Email"), ("ip", "IP"), ("uri", "URI")):
            if s[key]:
                return f"{what} subjectAltNames are not allowed"
        if not _cn(req).startswith("system:node:"):
            return "subject common name does not begin with system:node:"
        if u not in _KUBELET_CLIENT_USAGES:
            return f"usages did not match {_usages_str(_KUBELET_CLIENT_USAGES[0])}"
        return None
    if signer == KUBE_APISERVER_CLIENT:
        has_client = False
        for usage in usages:
            if usage in ("digital signature", "key encipherment"):
                continue
            if usage == "client auth":
                has_client = True
                continue
            return f"invalid usage for client certificate: {usage}"
        if not has_client:
            return "missing required usage for client certificate: client auth"
        return None
    return None  # legacy-unknown: no rules


def sign(
    req: x509.CertificateSigningRequest,
    usages: list[str],
    expiration_seconds: int | None,
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    now: datetime.datetime,
) -> bytes:
    """The issued certificate (PEM): the request's subject and names, the CA as issuer, the
    usages as key/extended key usages, valid from 5 minutes ago for the signer's duration or
    the requested ``expirationSeconds`` if shorter, never past the CA."""
    ca = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    ttl = DEFAULT_TTL
    if expiration_seconds is not None:
        ttl = min(ttl, datetime.timedelta(seconds=expiration_seconds))
    not_after = min(now + ttl, ca.not_valid_after_utc)
    b = (
        x509.CertificateBuilder()
        .subject_name(req.subject)
        .issuer_name(ca.subject)
        .public_key(req.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    flags = {v: False for v in _KEY_USAGES.values()}
    for usage in usages:
        if usage in _KEY_USAGES:
            flags[_KEY_USAGES[usage]] = True
    if not flags["key_agreement"]:
        flags["encipher_only"] = flags["decipher_only"] = False
    if any(flags.values()):
        b = b.add_extension(x509.KeyUsage(**flags), critical=True)
    ext = list(dict.fromkeys(_EXT_USAGES[u] for u in usages if u in _EXT_USAGES))
    if ext:
        b = b.add_extension(x509.ExtendedKeyUsage(ext), critical=False)
    b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    try:
        sans = req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        b = b.add_extension(sans, critical=False)
    except x509.ExtensionNotFound:
        pass
    cert = b.sign(ca_key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM)


def approved(csr: dict) -> bool:
    """IsCertificateRequestApproved: Approved and neither Denied nor Failed."""
    types = {c.get("type") for c in (csr.get("status") or {}).get("conditions") or ()}
    return "Approved" in types and "Denied" not in types and "Failed" not in types
