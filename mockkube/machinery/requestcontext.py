"""Who makes the current request: the userInfo that admission sees.

The HTTP layer sets it per request (``mockkube.apiserver.http.identity.request_user``); writes by
in-process components and requests without an identity act as the default admin, as a
kubeconfig with the cluster-admin certificate does on a kind/kubeadm cluster.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

DEFAULT_USER: dict[str, Any] = {
    "username": "kubernetes-admin",
    "groups": ["kubeadm:cluster-admins", "system:authenticated"],
}

_current: contextvars.ContextVar[dict | None] = contextvars.ContextVar("mockkube_user", default=None)


def current_user() -> dict:
    """The userInfo (username, uid, groups, extra) of the request being served."""
    return _current.get() or DEFAULT_USER


def set_user(user: dict | None) -> contextvars.Token:
    """Make ``user`` the identity of the rest of this task (one HTTP request)."""
    return _current.set(user)


@contextlib.contextmanager
def acting_as(user: dict | None) -> Iterator[None]:
    """Make ``user`` the identity of the calls inside the block, then restore the previous
    one (a component that, upstream, is two clients: e.g. the endpoint and endpointslice
    controllers, or a driver's plugin per node)."""
    token = _current.set(user)
    try:
        yield
    finally:
        _current.reset(token)


_verb: contextvars.ContextVar[str] = contextvars.ContextVar("mockkube_request_verb", default="")


def set_request_verb(verb: str) -> contextvars.Token:
    """The authorization verb of the HTTP request being served (authorized requests only)."""
    return _verb.set(verb)


def current_request_verb() -> str:
    """ "" for in-process components' writes, which are not authorized."""
    return _verb.get()
