"""A real HTTPS webhook server for tests (admission and conversion webhooks): a
self-signed certificate for 127.0.0.1 and ``<name>.<namespace>.svc`` names (openssl CLI),
served from a thread so the API server's loop is never involved.

    with WebhookServer(answer) as hook:   # answer(path, review) -> response body (dict)
        hook.url("/validate"), hook.ca_bundle, hook.requests
"""

from __future__ import annotations

import base64
import http.server
import json
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

Answer = Callable[[str, dict], Any]


def self_signed(directory: Path, names: tuple[str, ...] = ()) -> tuple[str, str, bytes]:
    """(cert file, key file, PEM) for 127.0.0.1 and ``names``; needs the openssl CLI."""
    if shutil.which("openssl") is None:
        raise RuntimeError("openssl not installed")
    crt, key = directory / "tls.crt", directory / "tls.key"
    san = ",".join(["IP:127.0.0.1", *(f"DNS:{n}" for n in names)])
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(crt),
            "-days",
            "1",
            "-subj",
            "/CN=webhook",
            "-addext",
            f"subjectAltName={san}",
        ],
        check=True,
        capture_output=True,
    )
    return str(crt), str(key), crt.read_bytes()


def review_response(review: dict, allowed: bool = True, **response: Any) -> dict:
    """An AdmissionReview v1 answer to ``review`` (``status``, ``patch`` list, ``warnings``...)."""
    resp: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": allowed}
    ops = response.pop("patch", None)
    if ops is not None:
        resp["patchType"] = "JSONPatch"
        resp["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
    resp.update(response)
    return {"apiVersion": review.get("apiVersion", "admission.k8s.io/v1"), "kind": "AdmissionReview", "response": resp}


class WebhookServer:
    """HTTPS server calling ``answer(path, review)`` per POST; ``requests`` records
    (path with query, review). ``delay`` seconds are waited before answering."""

    def __init__(self, answer: Answer, names: tuple[str, ...] = (), delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.requests: list[tuple[str, dict]] = []
        self._tmp = tempfile.TemporaryDirectory()
        crt, key, pem = self_signed(Path(self._tmp.name), names)
        self.ca_bundle = base64.b64encode(pem).decode()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, review))
                if outer.delay:
                    time.sleep(outer.delay)
                out = outer.answer(self.path.split("?")[0], review)
                status = 200
                if isinstance(out, tuple):
                    status, out = out
                body = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> "WebhookServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._tmp.cleanup()
