"""How one server serves TLS (``--tls``, ``--tls-cert-file``/``--tls-private-key-file``,
``--client-ca-file``, ``--cert-dir``) and reads client certificates."""

from __future__ import annotations

import ssl
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from mockkube.apiserver import certs


def _certs() -> Any:
    """The certificate module (cryptography): imported by servers that serve TLS only."""
    from mockkube.apiserver import certs

    return certs


ADMIN = ("kubernetes-admin", ["system:masters"])


class TLSConfig:
    def __init__(
        self,
        directory: Path,
        ca: "certs.KeyPair | None",
        cert_file: str | None,
        key_file: str | None,
        client_ca_pem: bytes | None,
    ) -> None:
        self.dir = directory
        self.ca = ca  # the CA the server made (or found in the cert dir); None with the user's certificate
        self.cert_file, self.key_file = cert_file, key_file
        self.client_ca_pem = client_ca_pem
        self._admin: tuple[bytes, bytes] | None = None

    @classmethod
    def choose(
        cls,
        on: bool,
        cert_file: str | None,
        key_file: str | None,
        client_ca_file: str | None,
        cert_dir: str | None,
        temp_dirs: list[str],
    ) -> "TLSConfig | None":
        if not (on or cert_file):
            return None
        if bool(cert_file) != bool(key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        if cert_dir:
            directory = Path(cert_dir)
        else:
            directory = Path(tempfile.mkdtemp(prefix="mockkube-certs-"))
            temp_dirs.append(str(directory))
        ca = None if cert_file else _certs().load_or_make_ca(directory)
        client_ca = Path(client_ca_file).read_bytes() if client_ca_file else (ca.cert_pem if ca else None)
        return cls(directory, ca, cert_file, key_file, client_ca)

    @property
    def ca_pem(self) -> bytes | None:
        """What a kubeconfig trusts: the server's CA (None with the user's own certificate)."""
        return self.ca.cert_pem if self.ca else None

    @property
    def ca_file(self) -> str | None:
        return str(self.dir / "ca.crt") if self.ca else None

    def server_context(self, address: str) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        cert, key = self.cert_file, self.key_file
        if self.ca is not None:
            pair = _certs().make_serving(
                self.ca,
                [
                    "127.0.0.1",
                    "::1",
                    "localhost",
                    "kubernetes",
                    "kubernetes.default",
                    "kubernetes.default.svc",
                    address,
                ],
            )
            cert, key = str(self.dir / "apiserver.crt"), str(self.dir / "apiserver.key")
            _certs().write_pair(pair, Path(cert), Path(key))
        ctx.load_cert_chain(cert, key)
        if self.client_ca_pem:
            # a certificate is asked for but not required; one the client CA did not sign
            # fails the handshake (kube-apiserver answers 401 instead: docs/compatibility.md)
            ctx.load_verify_locations(cadata=self.client_ca_pem.decode())
            ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx

    def authenticate(self, request: web.Request) -> dict | None:
        """The user of a verified client certificate, or None."""
        return _certs().user_of(request.transport.get_extra_info("peercert") if request.transport else None)

    def client_cert(self, user: str, groups: list[str] | tuple[str, ...] = ()) -> tuple[bytes, bytes] | None:
        """(certificate, key) PEMs for ``user`` signed by the server's CA (None without one)."""
        if self.ca is None:
            return None
        pair = _certs().make_client(self.ca, user, groups)
        return pair.cert_pem, pair.key_pem

    def admin_client(self) -> tuple[bytes, bytes] | None:
        if self._admin is None and self.ca is not None:
            self._admin = self.client_cert(*ADMIN)
            _certs().write_pair(_certs().KeyPair(*self._admin), self.dir / "admin.crt", self.dir / "admin.key")
        return self._admin

    def client_context(self) -> ssl.SSLContext:
        """For in-process tests: trusts the CA and presents the admin certificate."""
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode() if self.ca_pem else None)
        if self.admin_client():
            ctx.load_cert_chain(str(self.dir / "admin.crt"), str(self.dir / "admin.key"))
        return ctx
