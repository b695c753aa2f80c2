"""Calls to user webhooks (admission and CRD conversion) as kube-apiserver makes them: a
``clientConfig`` with a ``url`` or a ``service`` reference, HTTPS trusting its
``caBundle`` (else the system roots), a JSON POST with a timeout.

Simulated pods have no network, so a ``service`` reference (``https://NAME.NS.svc:PORT``)
connects where the server's service map points it (``mockkube serve --service-address
NS/NAME=HOST:PORT``), still verifying the certificate for ``NAME.NS.svc`` as upstream does;
without a mapping, the address where the process runtime serves the Service
(kubelet/runtime/services.py), else the name resolved as is (e.g. through /etc/hosts).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
from typing import Callable
from urllib.parse import urlparse

ServiceMap = Callable[[str, str], "tuple[str, int] | None"]  # (namespace, name) -> (host, port)


class CallError(Exception):
    """The webhook could not be called or answered nonsense (upstream ErrCallingWebhook's reason)."""


class WebhookClient:
    def __init__(self, client_config: dict, services: ServiceMap | None = None) -> None:
        cc = client_config or {}
        self.url = cc.get("url") or ""
        self.target: tuple[str, int] | None = None
        svc = cc.get("service")
        if not self.url and isinstance(svc, dict):
            port = svc.get("port", 443)
            self.url = f"https://{svc.get('name')}.{svc.get('namespace')}.svc:{port}{svc.get('path') or ''}"
            if services is not None:
                self.target = services(svc.get("namespace", ""), svc.get("name", ""))
                if self.target is not None and not self.target[1]:  # the Service's own port there
                    self.target = (self.target[0], int(port))
        self.ca = cc.get("caBundle") or ""
        self._ctx: ssl.SSLContext | None = None

    def _context(self) -> ssl.SSLContext:
        if self._ctx is None:
            pem = base64.b64decode(self.ca).decode() if self.ca else None
            self._ctx = ssl.create_default_context(cadata=pem) if pem else ssl.create_default_context()
        return self._ctx

    def post(self, body: dict, timeout: float, query: str = "") -> dict:
        """POST ``body`` as JSON and return the JSON answer; CallError on any failure."""
        u = urlparse(self.url)
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        if query:
            path += ("&" if "?" in path else "?") + query
        shown = f"{u.scheme}://{u.netloc}{path}"
        host, port = u.hostname or "", u.port or (443 if u.scheme == "https" else 80)
        target = self.target
        data = json.dumps(body).encode()
        try:
            if u.scheme == "https":
                conn: http.client.HTTPConnection = _Https(host, port, self._context(), target, timeout)
            else:
                conn = http.client.HTTPConnection(*(target or (host, port)), timeout=timeout)
            try:
                conn.request(
                    "POST", path, body=data, headers={"Content-Type": "application/json", "Accept": "application/json"}
                )
                r = conn.getresponse()
                raw = r.read()
            finally:
                conn.close()
        except socket.timeout:
            raise CallError(f'failed to call webhook: Post "{shown}": context deadline exceeded') from None
        except ssl.SSLCertVerificationError as e:
            raise CallError(f'failed to call webhook: Post "{shown}": {_x509_error(e, host)}') from None
        except ssl.SSLError as e:
            raise CallError(f'failed to call webhook: Post "{shown}": tls: {e.reason or e}') from None
        except OSError as e:
            dialled = "%s:%s" % (target or (host, port))
            why = (
                f"connect: {e.strerror.lower()}" if isinstance(e, ConnectionError) and e.strerror else (e.strerror or e)
            )
            raise CallError(f'failed to call webhook: Post "{shown}": dial tcp {dialled}: {why}') from None
        if r.status != 200:
            raise CallError(f"received invalid webhook response with status code {r.status}: {raw[:200]!r}")
        try:
            return json.loads(raw)
        except ValueError as e:
            raise CallError(f"failed to unmarshal webhook response: {e}") from None


# OpenSSL verify codes -> Go crypto/x509's wording of the same failure
_UNKNOWN_AUTHORITY = {18, 19, 20, 21}
_EXPIRED = {9, 10}


def _x509_error(e: ssl.SSLCertVerificationError, host: str) -> str:
    """A certificate failure as Go's TLS client words it (what kube-apiserver logs and returns)."""
    code = getattr(e, "verify_code", None)
    if code in _UNKNOWN_AUTHORITY:
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if code in _EXPIRED:
        return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    if code == 62:  # hostname mismatch
        return f"tls: failed to verify certificate: x509: certificate is not valid for {host}"
    return f"tls: failed to verify certificate: {getattr(e, 'verify_message', '') or e}"


class _Https(http.client.HTTPSConnection):
    """HTTPS to ``target`` when given, verifying the certificate for ``host``."""

    def __init__(
        self, host: str, port: int, context: ssl.SSLContext, target: tuple[str, int] | None, timeout: float
    ) -> None:
        super().__init__(host, port, context=context, timeout=timeout)
        self._target = target

    def connect(self) -> None:
        if self._target is None:
            return super().connect()
        raw = socket.create_connection(self._target, self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


def parse_service_address(text: str) -> tuple[tuple[str, str], tuple[str, int]]:
    """``NS/NAME=HOST:PORT`` (a --service-address value)."""
    key, sep, addr = text.partition("=")
    ns, slash, name = key.partition("/")
    host, colon, port = addr.rpartition(":")
    if not sep or not slash or not ns or not name or not colon or not host or not port.isdigit():
        raise ValueError(f"{text!r}: want NAMESPACE/NAME=HOST:PORT")
    return (ns, name), (host.strip("[]"), int(port))
