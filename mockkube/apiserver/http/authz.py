"""Authorization of every HTTP request (``--authorization-mode``), and the impersonation
check before it, as kube-apiserver's WithImpersonation and WithAuthorization filters."""

from __future__ import annotations

from aiohttp import web

from mockkube.apiserver.authz.authorizer import Authorizer, forbidden
from mockkube.apiserver.authz.rbac import SA_PREFIX, Policy
from mockkube.apiserver.authz.requestinfo import Attributes, request_attributes
from mockkube.apiserver.http import identity
from mockkube.machinery import errors
from mockkube.machinery.registry import Registry
from mockkube.machinery.requestcontext import set_request_verb

AUTHORIZER = web.AppKey("authorizer", Authorizer)
_STREAMS = ("exec", "attach", "portforward")
_RBAC = "rbac.authorization.k8s.io"


class StorePolicy:
    """The RBAC snapshot of a store, rebuilt only when one of the four kinds changed."""

    def __init__(self, store, registry: Registry) -> None:
        self.store, self.registry = store, registry
        self._key: tuple = ()
        self._policy = Policy()

    def __call__(self) -> Policy:
        rts = [
            self.registry.get(_RBAC, "v1", p) for p in ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
        ]
        caches = [self.store.cache(rt) for rt in rts]
        key = tuple((id(c), c.version) for c in caches)
        if key != self._key:
            self._policy = Policy.of(*[[e.obj for e in c.entries.values()] for c in caches])
            self._key = key
        return self._policy


def attributes(request: web.Request, user: dict) -> Attributes:
    attrs = request_attributes(request.method, request.path, request.query, user)
    if attrs.resource == "pods" and attrs.subresource in _STREAMS:
        attrs.verb = "create"  # upstream checks create for WebSocket (GET) streams too
    return attrs


def check_impersonation(authorizer: Authorizer, request: web.Request, acting: dict) -> None:
    """403 unless the authenticated user may impersonate every header's value."""
    h = request.headers
    wanted: list[tuple[str, str, str, str]] = []  # (group, resource, namespace, name)
    name = h.get("Impersonate-User", "")
    if not name and (
        h.get("Impersonate-Group")
        or h.get("Impersonate-Uid")
        or any(k.lower().startswith("impersonate-extra-") for k in h)
    ):
        raise errors.bad_request("requested impersonation of groups, uid or extra without impersonating a user")
    if not name:
        return
    parts = name.split(":")
    if name.startswith(SA_PREFIX) and len(parts) == 4:
        wanted.append(("", "serviceaccounts", parts[2], parts[3]))
    else:
        wanted.append(("", "users", "", name))
    wanted += [("", "groups", "", g) for g in h.getall("Impersonate-Group", [])]
    if h.get("Impersonate-Uid"):
        wanted.append(("authentication.k8s.io", "uids", "", h["Impersonate-Uid"]))
    for k in h:
        if k.lower().startswith("impersonate-extra-"):
            key = k[len("impersonate-extra-") :].lower()
            wanted += [("authentication.k8s.io", f"userextras/{key}", "", v) for v in h.getall(k)]
    for group, resource, ns, value in wanted:
        res, _, sub = resource.partition("/")
        attrs = Attributes(
            user=acting, verb="impersonate", api_group=group, resource=res, subresource=sub, namespace=ns, name=value
        )
        ok, why = authorizer.authorize(attrs)
        if not ok:
            raise forbidden(attrs, why)


@web.middleware
async def authorize(request: web.Request, handler):
    authorizer = request.app.get(AUTHORIZER)
    if authorizer is not None and authorizer.enforcing:
        check_impersonation(authorizer, request, identity.authenticated_user(request))
        attrs = attributes(request, identity.request_user(request))
        authorizer.check(attrs)
        set_request_verb(attrs.verb)  # for checks inside the write (DRA claim status)
    return await handler(request)
