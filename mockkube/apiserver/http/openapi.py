"""``/openapi/v3`` as kube-openapi's handler3 serves it, from the generated documents.

kubectl (``create``/``apply``/``edit``/``explain``) and helm read the index, then fetch each
group-version document at its ``serverRelativeURL``; the ``hash`` in that URL lets them cache
the document forever, so a stale hash is answered with a 301 to the current one. The
documents are built by ``scripts/build_openapi.py`` and served byte for byte from memory.

``/openapi/v2`` is a document without paths or definitions (JSON, or protobuf as kubectl asks
for it): v3 carries every schema. kubectl falls back to v2 for a group-version v3 does not
list; an empty v2 document makes it skip client-side validation and report "no matches for
kind" as a real cluster does, where a 404 would read "failed to download openapi"
(docs/compatibility.md).
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from aiohttp import web

from mockkube.machinery.errors import APIError, not_acceptable
from mockkube.machinery.schema import openapi_dir

_JSON = "application/json"


@dataclass(frozen=True)
class Document:
    body: bytes
    etag: str  # upper-case hex SHA-512 of body, as kube-openapi computes it


@dataclass(frozen=True)
class OpenAPIDocuments:
    """The v3 index and the per-group-version documents, keyed ``api/v1``, ``apis/g/v``."""

    index: Document
    groups: dict[str, Document]


def _document(body: bytes) -> Document:
    return Document(body, hashlib.sha512(body).hexdigest().upper())


def server_relative_url(key: str, etag: str) -> str:
    return f"/openapi/v3/{key}?hash={etag}"


def key_for_filename(name: str) -> str:
    """``apis__resource.k8s.io__v1.json`` -> ``apis/resource.k8s.io/v1``."""
    return name[: -len(".json")].replace("__", "/")


def load_documents(directory: Path) -> OpenAPIDocuments:
    """Read every ``<key>.json`` in ``directory`` and build the index that points at them."""
    groups: dict[str, Document] = {}
    for path in sorted(directory.glob("*.json")):
        groups[key_for_filename(path.name)] = _document(path.read_bytes())
    paths = {key: {"serverRelativeURL": server_relative_url(key, doc.etag)} for key, doc in sorted(groups.items())}
    index = _document(json.dumps({"paths": paths}, separators=(",", ":")).encode())
    return OpenAPIDocuments(index, groups)


class _Lazy:
    """Load the documents on first use (not at import or app construction)."""

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._docs: OpenAPIDocuments | None = None
        self._lock = threading.Lock()

    def get(self) -> OpenAPIDocuments:
        if self._docs is None:
            with self._lock:
                if self._docs is None:
                    self._docs = load_documents(self._directory or openapi_dir() / "v3")
        return self._docs


_DOCS = web.AppKey("mockkube_openapi_docs", _Lazy)
_NOW = web.AppKey("mockkube_openapi_now", object)


def _not_found() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource")


def _error(err: APIError) -> web.Response:
    return web.json_response(err.status(), status=err.code, headers=err.headers or None)


def accepts_json(accept: str) -> bool:
    """Whether an Accept header admits application/json (kube-openapi's negotiation)."""
    if not accept.strip():
        return True
    for clause in accept.split(","):
        media = clause.split(";", 1)[0].strip().lower()
        if media in ("*/*", "application/*", _JSON):
            return True
    return False


def _expires(now: float) -> str:
    """One calendar year ahead, as an HTTP date."""
    t = _dt.datetime.fromtimestamp(now, _dt.timezone.utc)
    try:
        later = t.replace(year=t.year + 1)
    except ValueError:  # 29 February
        later = t.replace(year=t.year + 1, month=3, day=1)
    return email.utils.format_datetime(later, usegmt=True)


def _not_modified(request: web.Request, etag: str) -> bool:
    inm = request.headers.get("If-None-Match", "")
    return bool(inm) and (inm.strip() == "*" or f'"{etag}"' in [t.strip() for t in inm.split(",")])


_REGISTRY = web.AppKey("mockkube_openapi_registry", object)


def _custom(request: web.Request) -> dict[str, Document]:
    """Documents of the custom resources served now (built from their CRDs, cached)."""
    reg = request.app.get(_REGISTRY)
    if reg is None:
        return {}
    from mockkube.apiserver.http.openapi_crd import custom_documents

    cache = request.app.get(_CUSTOM_DOCS)
    out: dict[str, Document] = {}
    for key, body in custom_documents(reg).items():  # type: ignore[arg-type]
        doc = cache.get(key) if cache is not None else None
        if doc is None or doc.body is not body:
            doc = _document(body)
            if cache is not None:
                cache[key] = doc
        out[key] = doc
    return out


_CUSTOM_DOCS = web.AppKey("mockkube_openapi_custom_docs", dict)


def _gv_served(reg: Any, key: str) -> bool:
    """Whether the server serves the group/version a document key names (``api/v1``,
    ``apis/GROUP/VERSION``); other keys always. --runtime-config and feature gates decide."""
    parts = key.split("/")
    if parts[0] == "api" and len(parts) == 2:
        return reg.has_group_version("", parts[1])
    if parts[0] == "apis" and len(parts) == 3:
        return reg.has_group_version(parts[1], parts[2])
    return True


def _served_docs(request: web.Request) -> "OpenAPIDocuments":
    """The built-in documents of the group/versions this server serves."""
    docs = request.app[_DOCS].get()
    reg = request.app.get(_REGISTRY)
    if reg is None:
        return docs
    cache = request.app.get(_SERVED_DOCS)
    served = tuple(reg.group_versions())  # type: ignore[attr-defined]
    if cache is not None and cache[0] == served and cache[1] is docs:
        return cache[2]
    out = docs
    if not all(_gv_served(reg, key) for key in docs.groups):
        groups = {key: doc for key, doc in docs.groups.items() if _gv_served(reg, key)}
        paths = {key: {"serverRelativeURL": server_relative_url(key, doc.etag)} for key, doc in sorted(groups.items())}
        out = OpenAPIDocuments(_document(json.dumps({"paths": paths}, separators=(",", ":")).encode()), groups)
    if cache is not None:
        cache[:] = [served, docs, out]
    return out


_SERVED_DOCS = web.AppKey("mockkube_openapi_served_docs", list)


async def handle_index(request: web.Request) -> web.Response:
    docs = _served_docs(request)
    custom = _custom(request)
    if custom:
        groups = dict(docs.groups)
        groups.update(custom)
        paths = {key: {"serverRelativeURL": server_relative_url(key, doc.etag)} for key, doc in sorted(groups.items())}
        docs = OpenAPIDocuments(_document(json.dumps({"paths": paths}, separators=(",", ":")).encode()), groups)
    headers = {"Etag": f'"{docs.index.etag}"'}
    if _not_modified(request, docs.index.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=docs.index.body, content_type=_JSON, headers=headers)


async def handle_group_version(request: web.Request) -> web.Response:
    docs = _served_docs(request)
    key = request.match_info["gv"].strip("/")
    doc = docs.groups.get(key) or _custom(request).get(key)
    if doc is None:
        return _error(_not_found())
    if not accepts_json(request.headers.get("Accept", "")):
        return _error(not_acceptable(f"only the following media types are accepted: {_JSON}"))
    headers = {"Vary": "Accept", "Etag": f'"{doc.etag}"'}
    wanted = request.query.get("hash", "")
    if wanted:
        if wanted != doc.etag:
            return web.Response(status=301, headers={"Location": server_relative_url(key, doc.etag), "Vary": "Accept"})
        now: Callable[[], float] = request.app[_NOW]  # type: ignore[assignment]
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = _expires(now())
    if _not_modified(request, doc.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=doc.body, content_type=_JSON, headers=headers)


_V2_PROTO = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
# kube-openapi answers both spellings with this one ("@" is not allowed in a media type)
_V2_PROTO_RETURNED = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def _pb_string(number: int, value: bytes) -> bytes:
    """One length-delimited protobuf field (lengths here stay below 128)."""
    return bytes([number << 3 | 2, len(value)]) + value


def v2_document() -> tuple[dict, bytes]:
    """The v2 document as JSON and as gnostic openapi_v2.Document protobuf
    (swagger = 1, info = 2 {title = 1, version = 2}, paths = 8, definitions = 9)."""
    from mockkube.apiserver.http.discovery import KUBE_VERSION  # the served version string

    doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": KUBE_VERSION}, "paths": {}, "definitions": {}}
    info = _pb_string(1, b"Kubernetes") + _pb_string(2, KUBE_VERSION.encode())
    proto = _pb_string(1, b"2.0") + _pb_string(2, info) + _pb_string(8, b"") + _pb_string(9, b"")
    return doc, proto


async def handle_v2(request: web.Request) -> web.Response:
    doc, proto = v2_document()
    accept = request.headers.get("Accept", "")
    if (_V2_PROTO in accept or _V2_PROTO_RETURNED in accept) and not accept.strip().startswith(_JSON):
        return web.Response(body=proto, content_type=_V2_PROTO_RETURNED)
    if not accepts_json(accept):
        return _error(not_acceptable(f"only the following media types are accepted: {_JSON}, {_V2_PROTO}"))
    return web.json_response(doc)


def setup(
    app: web.Application,
    *,
    directory: Path | None = None,
    now: Callable[[], float] = time.time,
    registry: object = None,
) -> None:
    """Add ``GET /openapi/v3``, ``GET /openapi/v3/{gv}`` and ``GET /openapi/v2`` to ``app``.

    ``directory`` overrides where the per-group-version documents are read from (tests);
    ``now`` is the clock used for the ``Expires`` header; ``registry`` (the server's) adds
    the documents of custom resources.
    """
    app[_DOCS] = _Lazy(directory)
    app[_NOW] = now
    if registry is not None:  # custom resources' documents come and go with their CRDs
        app[_REGISTRY] = registry
        app[_SERVED_DOCS] = [None, None, None]
        app[_CUSTOM_DOCS] = {}
    app.router.add_get("/openapi/v3", handle_index)
    app.router.add_get("/openapi/v3/{gv:.+}", handle_group_version)
    app.router.add_get("/openapi/v2", handle_v2)
