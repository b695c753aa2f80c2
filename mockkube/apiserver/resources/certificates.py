"""certificates.k8s.io/v1 CertificateSigningRequests, with the status and approval
subresources (``pkg/apis/certificates/validation``, ``pkg/registry/certificates/certificates``).

Create records the requesting user in spec (username, uid, groups, extra) and starts with an
empty status; the main resource changes only metadata; ``/approval`` changes only the
conditions (Approved/Denied), ``/status`` everything in status but those; conditions get
their timestamps as upstream's ``populateConditionTimestamps``. The
CertificateSubjectRestriction admission plugin refuses ``kubernetes.io/kube-apiserver-client``
requests for the ``system:masters`` group. The csrsigning controller
(``mockkube/controllers/csrsigning.py``) issues the certificates.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import errors, names
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.meta import clone
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource
from mockkube.machinery.requestcontext import current_user

LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
USAGES = sorted(
    [
        "signing",
        "digital signature",
        "content commitment",
        "key encipherment",
        "key agreement",
        "data encipherment",
        "cert sign",
        "crl sign",
        "encipher only",
        "decipher only",
        "any",
        "server auth",
        "client auth",
        "code signing",
        "email protection",
        "s/mime",
        "ipsec end system",
        "ipsec tunnel",
        "ipsec user",
        "timestamping",
        "ocsp signing",
        "microsoft sgc",
        "netscape sgc",
    ]
)
_TRUE_ONLY = ("Approved", "Denied", "Failed")
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)


def _b64(value: Any) -> bytes:
    if not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def parse_csr(request_b64: Any):
    """certificates.ParseCSR: the x509 request (``cryptography``) or a ValueError with
    upstream's message."""
    from cryptography import x509

    pem = _b64(request_b64)
    m = _PEM_BLOCK.search(pem)
    if m is None or m.group(1) != b"CERTIFICATE REQUEST":
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        return x509.load_pem_x509_csr(m.group(0))
    except ValueError as e:
        raise ValueError(f"x509: malformed certificate request: {e}") from None


def _csr_error(request_b64: Any) -> str | None:
    try:
        csr = parse_csr(request_b64)
    except ValueError as e:
        return str(e)
    if not csr.is_signature_valid:
        return "x509: ECDSA verification failure"
    return None


def _certificate_error(cert_b64: Any) -> str | None:
    """validateCertificate (status.certificate: CERTIFICATE PEM blocks only)."""
    from cryptography import x509

    data = _b64(cert_b64)
    if not data:
        return None
    blocks = list(_PEM_BLOCK.finditer(data))
    if not blocks:
        return "must contain at least one CERTIFICATE PEM block"
    for b in blocks:
        if b.group(1) != b"CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{b.group(1).decode()}"'
        if b":" in b.group(2).split(b"\n\n")[0] and b"\n\n" in b.group(2):
            return "no PEM block headers are permitted"
        try:
            x509.load_pem_x509_certificate(b.group(0))
        except ValueError as e:
            return f"x509: malformed certificate: {e}"
    return None


def validate_signer_name(value: str, path: str) -> list[fe.FieldError]:
    """ValidateSignerName: ``<domain>/<path>``."""
    if not value:
        return [fe.required(path, "")]
    parts = value.split("/")
    if len(parts) != 2:
        return [
            fe.invalid(path, value, "must be a fully qualified domain and path of the form 'example.com/signer-name'")
        ]
    domain, rest = parts
    errs: list[fe.FieldError] = []
    if len(domain) > 253:
        errs.append(fe.too_long(path, domain, 253))
    labels = domain.split(".")
    for lbl in labels:
        msgs = names.dns1123_label(lbl)
        if msgs:
            errs += [fe.invalid(path, domain, f'validating label "{lbl}": {m}') for m in msgs]
            break
    if len(labels) < 2:
        errs.append(fe.invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    max_path = 253 - len(domain) - 1
    if len(rest) > max_path:
        errs.append(fe.too_long(path, rest, max_path))
    errs += [fe.invalid(path, rest, m) for m in names.dns1123_subdomain(rest)]
    return errs


def _conditions(obj: dict) -> list[dict]:
    return ((obj.get("status") or {}).get("conditions")) or []


def _of_type(obj: dict, t: str) -> list[dict]:
    return [c for c in _conditions(obj) if c.get("type") == t]


def _options(new: dict, old: dict | None) -> dict[str, bool]:
    """getValidationOptions: what a persisted object's existing problems excuse."""
    if old is None:
        return dict.fromkeys(("both", "legacy", "dup_types", "empty_type", "arbitrary", "unknown", "dup_usages"), False)
    types = [c.get("type") for c in _conditions(old)]
    usages = (old.get("spec") or {}).get("usages") or []
    new_cert = (new.get("status") or {}).get("certificate")
    old_cert = (old.get("status") or {}).get("certificate")
    return {
        "both": "Approved" in types and "Denied" in types,
        "legacy": (old.get("spec") or {}).get("signerName") == LEGACY_UNKNOWN,
        "dup_types": len(types) != len(set(types)),
        "empty_type": "" in types or None in types,
        "arbitrary": (new_cert or "") == (old_cert or "") or _certificate_error(old_cert) is not None,
        "unknown": any(u not in USAGES for u in usages),
        "dup_usages": len(usages) != len(set(usages)),
    }


def validate_csr(obj: dict, opts: dict[str, bool]) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs: list[fe.FieldError] = []
    err = _csr_error(spec.get("request"))
    if err is not None:
        errs.append(fe.invalid("spec.request", spec.get("request", ""), err))
    usages = spec.get("usages") or []
    if not usages:
        errs.append(fe.required("spec.usages", ""))
    if not opts["unknown"]:
        errs += [fe.not_supported(f"spec.usages[{i}]", u, USAGES) for i, u in enumerate(usages) if u not in USAGES]
    if not opts["dup_usages"]:
        seen: set = set()
        for i, u in enumerate(usages):
            if u in seen:
                errs.append(fe.duplicate(f"spec.usages[{i}]", u))
            seen.add(u)
    signer = spec.get("signerName") or ""
    if not opts["legacy"] and signer == LEGACY_UNKNOWN:
        errs.append(fe.invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    else:
        errs += validate_signer_name(signer, "spec.signerName")
    exp = spec.get("expirationSeconds")
    if exp is not None and exp < 600:
        errs.append(
            fe.invalid("spec.expirationSeconds", exp, "may not specify a duration less than 600 seconds (10 minutes)")
        )
    errs += _validate_conditions(obj, opts)
    if not opts["arbitrary"]:
        cerr = _certificate_error((obj.get("status") or {}).get("certificate"))
        if cerr is not None:
            errs.append(fe.invalid("status.certificate", "<certificate data>", cerr))
    return errs


def _validate_conditions(obj: dict, opts: dict[str, bool]) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    seen: set = set()
    approved = denied = False
    for i, c in enumerate(_conditions(obj)):
        p = f"status.conditions[{i}]"
        t, s = c.get("type") or "", c.get("status") or ""
        if not opts["empty_type"] and not t:
            errs.append(fe.required(f"{p}.type", ""))
        allowed = ["True"] if t in _TRUE_ONLY else ["False", "True", "Unknown"]
        if not s:
            errs.append(fe.required(f"{p}.status", ""))
        elif s not in allowed:
            errs.append(fe.not_supported(f"{p}.status", s, allowed))
        if not opts["both"]:
            if t == "Approved":
                approved = True
                if denied:
                    errs.append(fe.invalid(f"{p}.type", t, "Approved and Denied conditions are mutually exclusive"))
            elif t == "Denied":
                denied = True
                if approved:
                    errs.append(fe.invalid(f"{p}.type", t, "Approved and Denied conditions are mutually exclusive"))
        if not opts["dup_types"]:
            if t in seen:
                errs.append(fe.duplicate(f"{p}.type", t))
            seen.add(t)
    return errs


def validate_csr_update(new: dict, old: dict, approval: bool = False, certificate: bool = False) -> list[fe.FieldError]:
    opts = _options(new, old)
    errs = validate_csr(new, opts)
    for t in ("Approved", "Denied", "Failed"):
        if len(_of_type(new, t)) < len(_of_type(old, t)):
            errs.append(fe.forbidden("status.conditions", f'updates may not remove a condition of type "{t}"'))
    if not approval:
        for t in ("Approved", "Denied"):
            o, n = _of_type(old, t), _of_type(new, t)
            if len(n) > len(o):
                errs.append(fe.forbidden("status.conditions", f'updates may not add a condition of type "{t}"'))
            elif len(n) == len(o) and n != o:
                errs.append(fe.forbidden("status.conditions", f'updates may not modify a condition of type "{t}"'))
    new_cert = (new.get("status") or {}).get("certificate") or ""
    old_cert = (old.get("status") or {}).get("certificate") or ""
    if new_cert != old_cert:
        if not certificate:
            errs.append(fe.forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            errs.append(fe.forbidden("status.certificate", "updates may not modify existing certificate content"))
    return errs


def populate_condition_timestamps(new: dict, old: dict, now: str) -> None:
    for c in _conditions(new):
        if not c.get("lastUpdateTime"):
            c["lastUpdateTime"] = now
        if not c.get("lastTransitionTime"):
            prev = next(
                (
                    o
                    for o in _conditions(old)
                    if o.get("type") == c.get("type")
                    and o.get("status") == c.get("status")
                    and o.get("lastTransitionTime")
                ),
                None,
            )
            c["lastTransitionTime"] = prev["lastTransitionTime"] if prev else now


def _subject_orgs(request_b64: Any) -> list[str]:
    from cryptography.x509.oid import NameOID

    try:
        csr = parse_csr(request_b64)
    except ValueError:
        return []
    return [a.value for a in csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


class CertificateSigningRequestStrategy(SpecStatusStrategy):
    tracks_generation = False

    def initial_status(self, obj: dict) -> dict:
        return {}

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        for k in ("username", "uid", "groups", "extra"):
            spec.pop(k, None)
        user = current_user()
        if user.get("username"):
            spec["username"] = user["username"]
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("groups"):
            spec["groups"] = list(user["groups"])
        if user.get("extra"):
            spec["extra"] = {k: list(v) for k, v in user["extra"].items()}

    def admit(self, obj: dict, old: dict | None, res: Any) -> None:
        """CertificateSubjectRestriction (creates only)."""
        spec = obj.get("spec") or {}
        if old is None and spec.get("signerName") == KUBE_APISERVER_CLIENT:
            if "system:masters" in _subject_orgs(spec.get("request")):
                raise errors.forbidden(
                    "certificatesigningrequests",
                    "certificates.k8s.io",
                    (obj.get("metadata") or {}).get("name", ""),
                    f"use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed",
                )

    def prepare_update(self, new: dict, old: dict) -> None:
        """The main resource changes metadata only."""
        new["spec"] = clone(old.get("spec"))
        super().prepare_update(new, old)

    def prepare_status_update(self, new: dict, old: dict) -> None:
        """Everything in status but the Approved/Denied conditions (kept when their count
        did not change, else left for validation to refuse)."""
        super().prepare_status_update(new, old)
        conds = _conditions(new)
        for t in ("Approved", "Denied"):
            olds, news = _of_type(old, t), [i for i, c in enumerate(conds) if c.get("type") == t]
            if len(olds) == len(news):
                for i, o in zip(news, olds):
                    conds[i] = clone(o)

    def prepare_approval_update(self, new: dict, old: dict) -> None:
        """Only the conditions change."""
        conds = clone(_conditions(new))
        status = clone(old.get("status") or {})
        rebuilt = clone(old)
        rebuilt["metadata"] = new["metadata"]
        if conds:
            status["conditions"] = conds
        else:
            status.pop("conditions", None)
        rebuilt["status"] = status
        new.clear()
        new.update(rebuilt)

    def stamp_update(self, new: dict, old: dict, now: str, subresource: str) -> None:
        """populateConditionTimestamps, on the status and approval subresources."""
        if subresource in ("status", "approval"):
            populate_condition_timestamps(new, old, now)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_csr(obj, _options(obj, None))

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_csr_update(new, old)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_csr_update(new, old, certificate=True)

    def validate_approval_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return validate_csr_update(new, old, approval=True)


csrs = REGISTRY.add(
    ResourceType(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        namespaced=False,
        short_names=("csr",),
        subresources=(
            Subresource("approval", "CertificateSigningRequest"),
            Subresource("status", "CertificateSigningRequest"),
        ),
        strategy=CertificateSigningRequestStrategy(),
        name_validator=lambda name, prefix: [],  # "We don't care what you call your certificate requests."
        selectable_fields={"spec.signerName": lambda o: (o.get("spec") or {}).get("signerName", "")},
    )
)
