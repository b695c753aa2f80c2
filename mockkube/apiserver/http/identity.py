"""The identity of an HTTP request, as authorization and admission see it.

Authentication (when enabled) stores who made the request under ``USER``; without it a
request acts as the default admin. Impersonation headers (``kubectl --as=... --as-group=...``)
then name whom the request acts as; ``mockkube.apiserver.http.authz`` checks the ``impersonate`` verb
for each of them, as upstream's impersonation filter does.
"""

from __future__ import annotations

from urllib.parse import unquote

from aiohttp import web

from mockkube.apiserver.authz.rbac import SA_PREFIX
from mockkube.machinery.requestcontext import DEFAULT_USER

# request key: the authenticated userInfo
USER = web.RequestKey("mockkube.user", dict) if hasattr(web, "RequestKey") else "mockkube.user"
_EXTRA = "impersonate-extra-"


def authenticated_user(request: web.Request) -> dict:
    """userInfo of whoever sent this request (before impersonation)."""
    return request.get(USER) or DEFAULT_USER


def impersonation(request: web.Request) -> dict | None:
    """The userInfo the impersonation headers ask for, or None without them."""
    h = request.headers
    name = h.get("Impersonate-User")
    if not name:
        return None
    user: dict = {"username": name}
    if h.get("Impersonate-Uid"):
        user["uid"] = h["Impersonate-Uid"]
    groups = list(h.getall("Impersonate-Group", []))
    if name.startswith(SA_PREFIX) and name.count(":") == 3:
        ns = name.split(":")[2]
        groups += [g for g in ("system:serviceaccounts", f"system:serviceaccounts:{ns}") if g not in groups]
    if "system:authenticated" not in groups and name != "system:anonymous":
        groups = [*groups, "system:authenticated"]
    if groups:
        user["groups"] = groups
    extra: dict[str, list[str]] = {}
    for k in h:
        if k.lower().startswith(_EXTRA):
            extra.setdefault(unquote(k[len(_EXTRA) :].lower()), []).extend(h.getall(k))
    if extra:
        user["extra"] = extra
    return user


def request_user(request: web.Request) -> dict:
    """userInfo {username, uid, groups, extra} this request acts as."""
    return impersonation(request) or authenticated_user(request)
