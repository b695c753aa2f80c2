"""The identity of an HTTP request, as admission's `request.userInfo` sees it.

Until authentication is served, a request acts as the default admin, or as whoever the
impersonation headers name (``kubectl --as=... --as-group=...``), which kube-apiserver
honours for an admin. Authentication replaces ``request_user``; nothing else reads headers.
"""

from __future__ import annotations

from urllib.parse import unquote

from aiohttp import web

from mockkube.machinery.admission.identity import DEFAULT_USER

_EXTRA = "impersonate-extra-"


def request_user(request: web.Request) -> dict:
    """userInfo {username, uid, groups, extra} of this request."""
    h = request.headers
    name = h.get("Impersonate-User")
    if not name:
        return DEFAULT_USER
    user: dict = {"username": name}
    if h.get("Impersonate-Uid"):
        user["uid"] = h["Impersonate-Uid"]
    groups = h.getall("Impersonate-Group", [])
    if "system:authenticated" not in groups and name != "system:anonymous":
        groups = [*groups, "system:authenticated"]
    if groups:
        user["groups"] = groups
    extra: dict[str, list[str]] = {}
    for k in h:
        if k.lower().startswith(_EXTRA):
            extra.setdefault(unquote(k[len(_EXTRA):].lower()), []).extend(h.getall(k))
    if extra:
        user["extra"] = extra
    return user
