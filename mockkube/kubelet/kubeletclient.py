"""The API server's client of kubelets it reaches over HTTP (upstream's kubelet client and
UpgradeAwareHandler): a kubelet shard's nodes (``mockkube kubelets``, kubeletserver.py)
advertise where their kubelet listens, in ``status.addresses`` and
``status.daemonEndpoints.kubeletEndpoint.Port``, and pods/log, pods/exec, pods/attach,
pods/portforward and nodes/proxy are forwarded there: a plain request's answer streamed back
(``kubectl logs -f``), an upgraded one (WebSocket: exec, attach, port-forward) piped message
by message both ways. A kubelet that cannot be reached gets kube-apiserver's errors (the
transport's ``dial tcp ...`` text: 500 for logs, ``error dialing backend`` for upgrades, 503
``error trying to reach service`` for the node proxy)."""

from __future__ import annotations

import asyncio
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import WSMsgType, web

from mockkube.machinery import errors

# kube-apiserver's --kubelet-preferred-address-types puts Hostname first; a simulated node's
# hostname is its name, which resolves nowhere, so mockkube prefers the InternalIP (as
# `--kubelet-preferred-address-types=InternalIP,...` does): docs/compatibility.md
ADDRESS_TYPES = ("InternalIP", "Hostname", "InternalDNS", "ExternalDNS", "ExternalIP")
KNOWN_ADDRESS_TYPES = frozenset(ADDRESS_TYPES)


def parse_address_types(text: str) -> tuple[str, ...]:
    """``--kubelet-preferred-address-types``: NodeAddressTypes, comma-separated, in the order
    they are tried. ValueError naming a type that is not one."""
    types = tuple(t.strip() for t in text.split(",") if t.strip())
    if not types:
        raise ValueError("at least one address type is required")
    for t in types:
        if t not in KNOWN_ADDRESS_TYPES:
            known = ", ".join(sorted(KNOWN_ADDRESS_TYPES))
            raise ValueError(f"unknown address type {t!r} (one of {known})")
    return types


@dataclass(frozen=True)
class ClientConfig:
    """How an API server reaches kubelets, from kube-apiserver's flags:
    ``--kubelet-client-certificate``/``--kubelet-client-key`` (the client certificate the
    kubelets authenticate), ``--kubelet-certificate-authority`` (what their serving
    certificates are checked against; without it they are not checked, as upstream's kubelet
    transport skips verification with no CA) and ``--kubelet-preferred-address-types``."""

    cert_file: str | None = None
    key_file: str | None = None
    ca_file: str | None = None
    address_types: tuple[str, ...] | None = None

    @property
    def tls(self) -> bool:
        """Whether these flags set up HTTPS to the kubelets (else the server's own default)."""
        return bool(self.cert_file or self.ca_file)

    def ssl_context(self) -> ssl.SSLContext:
        if self.ca_file:
            ctx = ssl.create_default_context(cafile=self.ca_file)
        else:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file or self.cert_file)
        return ctx


# headers a hop does not pass on (net/http/httputil's hopHeaders) and those the forward sets itself
_HOP = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "authorization",
        "content-length",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-protocol",
        "sec-websocket-accept",
        "impersonate-user",
        "impersonate-group",
        "impersonate-uid",
    }
)
_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 500: "InternalError"}


@dataclass(frozen=True)
class Endpoint:
    """Where a node's kubelet API listens."""

    host: str
    port: int

    @property
    def netloc(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def endpoint_of(node: dict, address_types: "tuple[str, ...] | None" = None) -> Endpoint | None:
    """The node's kubelet endpoint: its preferred address (the first of ``address_types``,
    default ``ADDRESS_TYPES``, that it has) and its kubelet port (None without either, as
    upstream's ``GetPreferredNodeAddress`` fails)."""
    status = node.get("status") or {}
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    addresses = status.get("addresses") or []
    for typ in address_types or ADDRESS_TYPES:
        for a in addresses:
            if a.get("type") == typ and a.get("address") and port:
                return Endpoint(a["address"], int(port))
    return None


# OpenSSL's alert reasons as Go's TLS client words them (crypto/tls alert.go)
_TLS_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "certificate required",
    "SSLV3_ALERT_BAD_CERTIFICATE": "bad certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "unknown certificate authority",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "expired certificate",
}


class TLSRefused(Exception):
    """The kubelet ended the TLS handshake with this alert (Go's words for it)."""


def _tls_error(e: BaseException) -> str | None:
    """Go's text for a TLS handshake that failed (crypto/tls, crypto/x509), None when ``e``
    is not one."""
    if isinstance(e, TLSRefused):
        return f"remote error: tls: {e}"
    if isinstance(e, aiohttp.ClientConnectorCertificateError):
        cert = e.certificate_error
        code = getattr(cert, "verify_code", 0)
        if code in (18, 19, 20, 21):  # self-signed, self-signed in chain, unknown issuer, unverifiable leaf
            why = "x509: certificate signed by unknown authority"
        elif code == 10:
            why = "x509: certificate has expired or is not yet valid"
        elif code == 62:  # hostname mismatch
            why = f"x509: certificate is not valid for this host ({getattr(cert, 'verify_message', '')})"
        else:
            why = f"x509: {getattr(cert, 'verify_message', '') or cert}"
        return f"tls: failed to verify certificate: {why}"
    cause = getattr(e, "os_error", None) or e.__cause__ or e
    if isinstance(cause, ssl.SSLError):
        reason = getattr(cause, "reason", "") or ""
        alert = _TLS_ALERTS.get(reason)
        return f"remote error: tls: {alert}" if alert else f"tls: {reason.lower().replace('_', ' ') or cause}"
    return None


def _dial_error(e: BaseException, ep: Endpoint) -> str:
    """Go's net.Dial error text for what the connection attempt met (the TLS handshake's
    when that is what failed)."""
    tls = _tls_error(e)
    if tls is not None:
        return tls
    if isinstance(e, aiohttp.ServerDisconnectedError):  # closed before an answer: Go's io.EOF
        return "EOF"
    cause: BaseException = getattr(e, "os_error", None) or e.__cause__ or e
    if isinstance(cause, ConnectionRefusedError):
        why = "connect: connection refused"
    elif isinstance(e, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        why = "i/o timeout"
    elif isinstance(cause, OSError) and cause.strerror:
        why = f"connect: {cause.strerror.lower()}"
    else:
        why = str(cause) or type(cause).__name__
    return f"dial tcp {ep.netloc}: {why}"


class KubeletClient:
    """Connections from the API server to kubelets (HTTPS with ``ssl``: the server's kubelet
    client certificate and the CA the kubelets' serving certificates are checked against;
    plain HTTP without)."""

    CONNECT_TIMEOUT = 5.0

    def __init__(self, ssl_context: ssl.SSLContext | None, client_certificate: bool = True) -> None:
        self.ssl = ssl_context
        self.scheme = "https" if ssl_context is not None else "http"
        # whether ``ssl`` presents a client certificate: what a kubelet that hangs up right
        # after the handshake refused (TLS 1.3 sends that alert after the client's handshake
        # is done, and aiohttp reports only the disconnection)
        self.client_certificate = client_certificate
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self.ssl if self.ssl is not None else False),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.CONNECT_TIMEOUT),
                auto_decompress=False,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def url(self, ep: Endpoint, path: str, query: Any = None) -> str:
        # by name, each name's values in their order (Go's url.Values.Encode): a command's words stay in order
        items = list(query.items() if hasattr(query, "items") else query or ())
        q = urlencode(sorted(items, key=lambda kv: kv[0]))
        return f"{self.scheme}://{ep.netloc}{path}" + (f"?{q}" if q else "")

    async def forward(self, request: web.Request, ep: Endpoint, path: str, query: Any = None) -> web.StreamResponse:
        """``request`` to the kubelet at ``ep`` as ``path?query``; its answer back."""
        url = self.url(ep, path, query)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._upgrade(request, ep, url, headers)
        body = await request.read() if request.can_read_body else None
        try:
            resp = await self.session.request(request.method, url, headers=headers, data=body, allow_redirects=False)
        except (aiohttp.ClientConnectorError, asyncio.TimeoutError, aiohttp.ServerTimeoutError) as e:
            raise self._unreachable(e, ep, request, url, path) from None
        except aiohttp.ServerDisconnectedError as e:
            raise self._unreachable(self._refused(e), ep, request, url, path) from None
        try:
            if resp.status >= 300 and path.startswith("/containerLogs/"):
                raise _kubelet_error(resp.status, await resp.read())
            out = web.StreamResponse(status=resp.status, reason=resp.reason)
            for k, v in resp.headers.items():
                if k.lower() not in _HOP:
                    out.headers[k] = v
            await out.prepare(request)
            try:
                async for chunk in resp.content.iter_any():
                    await out.write(chunk)
                await out.write_eof()
            except (ConnectionResetError, RuntimeError, aiohttp.ClientPayloadError):  # either side left
                pass
            return out
        finally:
            resp.release()

    def _refused(self, e: BaseException) -> BaseException:
        """A kubelet that hung up before answering: over TLS, it refused this client's
        certificate (or its absence) with an alert Go's client reads and aiohttp does not."""
        if self.ssl is None:
            return e
        return TLSRefused("certificate required" if not self.client_certificate else "unknown certificate authority")

    @staticmethod
    def _unreachable(e: BaseException, ep: Endpoint, request: web.Request, url: str, path: str) -> errors.APIError:
        dial = _dial_error(e, ep)
        if request.headers.get("Upgrade"):  # UpgradeAwareHandler's dial (SPDY here; WebSocket in _upgrade)
            return errors.APIError(500, "", f"error dialing backend: {dial}")
        if path.startswith("/containerLogs/"):  # the log streamer's transport error (a Go url.Error)
            return errors.APIError(500, "", f'{request.method.capitalize()} "{url}": {dial}')
        # the node proxy's transport (apimachinery proxy.Transport)
        return errors.APIError(503, "ServiceUnavailable", f"error trying to reach service: {dial}")

    async def _upgrade(self, request: web.Request, ep: Endpoint, url: str, headers: dict) -> web.StreamResponse:
        """An upgraded request (exec, attach, port-forward): the kubelet's WebSocket, piped to
        the client's with the subprotocol the kubelet chose."""
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        try:
            backend = await self.session.ws_connect(
                url,
                protocols=offered,
                headers=headers,
                autoping=True,
                max_msg_size=0,
                timeout=aiohttp.ClientWSTimeout(),
            )
        except aiohttp.WSServerHandshakeError:
            # the kubelet refused the upgrade: its answer says why (the handshake's body is
            # not kept, so it is asked again without the upgrade, which fails the same way)
            async with self.session.get(url, headers=headers) as resp:
                raise _kubelet_error(resp.status, await resp.read()) from None
        except (aiohttp.ClientConnectorError, asyncio.TimeoutError, aiohttp.ServerTimeoutError) as e:
            raise errors.APIError(500, "", f"error dialing backend: {_dial_error(e, ep)}") from None
        except aiohttp.ServerDisconnectedError as e:
            raise errors.APIError(500, "", f"error dialing backend: {_dial_error(self._refused(e), ep)}") from None
        client = web.WebSocketResponse(protocols=(backend.protocol,) if backend.protocol else (), max_msg_size=0)
        try:
            await client.prepare(request)
            await _pipe(client, backend)
        finally:
            await backend.close()
            await client.close()
        return client


async def _pipe(client: web.WebSocketResponse, backend: aiohttp.ClientWebSocketResponse) -> None:
    """Messages both ways until either side closes; the close code goes on to the other."""

    async def copy(src: Any, dst: Any) -> None:
        async for msg in src:
            if msg.type == WSMsgType.BINARY:
                await dst.send_bytes(msg.data)
            elif msg.type == WSMsgType.TEXT:
                await dst.send_str(msg.data)
        code = src.close_code
        # 1005, 1006 and 1015 say what a side saw, they are never sent (RFC 6455 7.4.1): a side
        # that went away (or closed its connection right after its close frame) ends normally
        await dst.close(code=code if code and code not in (1005, 1006, 1015) else 1000)

    # both to their end: a side's close reaches the other, whose close handshake ends its copy
    up = asyncio.ensure_future(copy(client, backend))
    down = asyncio.ensure_future(copy(backend, client))
    try:
        await asyncio.gather(up, down, return_exceptions=True)
    finally:
        for t in (up, down):
            t.cancel()


def _kubelet_error(status: int, body: bytes) -> errors.APIError:
    """A kubelet's refusal as the API server answers it: its Status as it is, or its text
    with the status code's reason (upstream's generic response checker)."""
    try:
        st = json.loads(body)
    except ValueError:
        st = None
    if isinstance(st, dict) and st.get("kind") == "Status":
        return errors.APIError(
            int(st.get("code") or status), st.get("reason", ""), st.get("message", ""), st.get("details")
        )
    text = body.decode(errors="replace").strip()
    return errors.APIError(status, _REASONS.get(status, ""), text)
