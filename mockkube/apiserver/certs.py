"""Certificates for ``--tls``: a cluster CA, the API server's serving certificate and client
certificates (CN = user, O = groups, as kube-apiserver's x509 authenticator reads them),
made with ``cryptography`` and kept in a directory so a restart reuses them."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=365)


@dataclass
class KeyPair:
    cert_pem: bytes
    key_pem: bytes

    @property
    def cert(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)

    @property
    def key(self):
        return serialization.load_pem_private_key(self.key_pem, password=None)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _builder(subject: x509.Name, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def make_ca(common_name: str = "kubernetes") -> KeyPair:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _leaf(ca: KeyPair, subject: x509.Name, usage, sans: list | None = None) -> KeyPair:
    key = _key()
    b = (
        _builder(subject, ca.cert.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
    )
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = b.sign(ca.key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def make_serving(ca: KeyPair, hosts: list[str]) -> KeyPair:
    """kube-apiserver's serving certificate for ``hosts`` (names and addresses)."""
    sans: list = []
    for h in dict.fromkeys(hosts):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    return _leaf(ca, subject, ExtendedKeyUsageOID.SERVER_AUTH, sans)


def make_client(ca: KeyPair, user: str, groups: list[str] | tuple[str, ...] = ()) -> KeyPair:
    """A client certificate kube-apiserver reads as ``user`` in ``groups``."""
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject = x509.Name(attrs + [x509.NameAttribute(NameOID.COMMON_NAME, user)])
    return _leaf(ca, subject, ExtendedKeyUsageOID.CLIENT_AUTH)


def load_or_make_ca(directory: Path) -> KeyPair:
    crt, key = directory / "ca.crt", directory / "ca.key"
    if crt.exists() and key.exists():
        return KeyPair(crt.read_bytes(), key.read_bytes())
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca()
    key.write_bytes(ca.key_pem)
    key.chmod(0o600)
    crt.write_bytes(ca.cert_pem)
    return ca


def write_pair(pair: KeyPair, cert_path: Path, key_path: Path) -> None:
    cert_path.write_bytes(pair.cert_pem)
    key_path.write_bytes(pair.key_pem)
    key_path.chmod(0o600)


def user_of(peercert: dict | None) -> dict | None:
    """The userInfo of a verified client certificate (``ssl`` getpeercert() form)."""
    if not peercert:
        return None
    name, groups = "", []
    for rdn in peercert.get("subject") or ():
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    if not name:
        return None
    user: dict = {"username": name}
    if groups:
        user["groups"] = groups
    return user
