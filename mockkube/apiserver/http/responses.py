"""JSON responses as upstream's serializer writes them, with ``Warning`` headers."""

from __future__ import annotations

from aiohttp import web

JSON_CT = "application/json"


def json_response(body: bytes, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    """A JSON body as upstream's serializer writes it: Go's json.Encoder ends it with a
    newline (clients that print error bodies, like the Python client's utils, show it)."""
    if not body.endswith(b"\n"):
        body += b"\n"
    headers = {}
    resp = web.Response(body=body, status=status, content_type=JSON_CT, headers=headers)
    for w in warnings or []:
        resp.headers.add("Warning", warning_header(w))
    return resp


def warning_header(text: str) -> str:
    """``299 - "text"`` with the text quoted as upstream does (quotes and backslashes
    escaped; control and non-ASCII characters escaped so the header stays valid)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return f'299 - "{"".join(out)}"'
