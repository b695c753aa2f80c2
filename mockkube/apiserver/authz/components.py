"""Authorization of the in-process components' requests (controllers, scheduler, kubelets,
built-in drivers), so that RBAC mode is honest about them too.

Upstream, these components are API clients like any other: kube-apiserver authorizes each
of their writes with the request attributes of the HTTP request they send, and their
informers' LIST and WATCH. mockkube's components call the store in-process
(``mockkube.client.client.Client``), so the same attributes are built here from the
call: the verb (create/update/patch/delete), the resource and subresource (``status``,
``binding``), the namespace and the name, for the identity the component acts under
(``mockkube.machinery.requestcontext.current_user``, set per component from
``mockkube/rules/identities.py``). A denial raises the same 403 ``Forbidden`` an HTTP client gets.

The server sets ``Store.authorizer`` only when its authorizer enforces (any
``--authorization-mode`` but AlwaysAllow): with the default, a component's call checks one
attribute and builds nothing.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator

from mockkube.apiserver.authz.authorizer import Authorizer, forbidden
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery.requestcontext import current_user, set_request_verb

log = logging.getLogger("mockkube.authz")

NOOP = contextlib.nullcontext()  # what a component's call enters when nothing is enforced


def attributes(user: dict, verb: str, rt, namespace: str, name: str, subresource: str = "") -> Attributes:
    """The request attributes of a component's call, as RequestInfoFactory reads them from the
    path the same call would have over HTTP."""
    return Attributes(
        user=user,
        verb=verb,
        api_group=rt.group,
        api_version=rt.version,
        resource=rt.plural,
        subresource=subresource,
        namespace=namespace if rt.namespaced else "",
        name=name,
    )


def check(
    authorizer: Authorizer, verb: str, rt, namespace: str, name: str, subresource: str = "", user: dict | None = None
) -> None:
    """Raise upstream's 403 unless the acting component may do ``verb`` on the resource."""
    attrs = attributes(user if user is not None else current_user(), verb, rt, namespace, name, subresource)
    ok, why = authorizer.authorize(attrs)
    if not ok:
        raise forbidden(attrs, why)


@contextlib.contextmanager
def request(authorizer: Authorizer, verb: str, rt, namespace: str, name: str, subresource: str = "") -> Iterator[None]:
    """Authorize one write, and make ``verb`` the request's verb while it runs (the checks
    inside a write, such as DRA claim status authorization, read it as for HTTP)."""
    check(authorizer, verb, rt, namespace, name, subresource)
    token = set_request_verb(verb)
    try:
        yield
    finally:
        token.var.reset(token)


def may_list_and_watch(authorizer: Authorizer, user: dict, rt) -> tuple[bool, str]:
    """Whether an informer of ``rt`` may start for ``user`` (a reflector's cluster-wide LIST
    and WATCH); the reason is the 403 message a reflector logs."""
    for verb in ("list", "watch"):
        attrs = attributes(user, verb, rt, "", "")
        ok, why = authorizer.authorize(attrs)
        if not ok:
            return False, forbidden(attrs, why).message
    return True, ""
