"""Authentication of every HTTP request when it is enabled, as kube-apiserver's
WithAuthentication filter: request authenticators (client certificates) first, then bearer
tokens (``--token-auth-file``, ServiceAccount tokens), then anonymous (``--anonymous-auth``).
A bearer token nobody accepts is 401 and never falls through to anonymous; the answer does
not say why, so it never tells whether a user exists."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from aiohttp import web

from mockkube.apiserver.http.identity import USER
from mockkube.machinery import errors

ANONYMOUS = {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
AUTHENTICATED = "system:authenticated"

TokenAuthenticator = Callable[[str], "dict | None"]
RequestAuthenticator = Callable[[web.Request], "dict | None"]


@dataclass
class Authentication:
    """One server's authenticators; ``enabled`` False keeps every request the default admin."""

    enabled: bool = False
    anonymous: bool = True
    request_authenticators: list[RequestAuthenticator] = field(default_factory=list)
    token_authenticators: list[TokenAuthenticator] = field(default_factory=list)

    def authenticate(self, request: web.Request) -> dict:
        for authenticate in self.request_authenticators:
            user = authenticate(request)
            if user is not None:
                return with_authenticated(user)
        scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token:
            for authenticate in self.token_authenticators:
                user = authenticate(token)
                if user is not None:
                    return with_authenticated(user)
            raise unauthorized()
        if self.anonymous:
            return dict(ANONYMOUS)
        raise unauthorized()


AUTHN = web.AppKey("authn", Authentication)


def unauthorized() -> errors.APIError:
    return errors.APIError(401, "Unauthorized", "Unauthorized")


def with_authenticated(user: dict) -> dict:
    groups = list(user.get("groups") or [])
    if AUTHENTICATED not in groups and user.get("username") != ANONYMOUS["username"]:
        groups.append(AUTHENTICATED)
    return {**user, "groups": groups}


def read_token_file(path: str | Path) -> dict[str, dict]:
    """``--token-auth-file``: CSV lines ``token,user,uid[,"group1,group2"]`` (kube-apiserver's format)."""
    out: dict[str, dict] = {}
    with open(path, newline="") as f:
        for n, record in enumerate(csv.reader(f), 1):
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            if len(record) < 3:
                raise ValueError(
                    f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                    f"found {len(record)}"
                )
            token, name, uid = (c.strip() for c in record[:3])
            user: dict = {"username": name, "uid": uid}
            if len(record) > 3:
                groups = [g.strip() for g in record[3].split(",") if g.strip()]
                if groups:
                    user["groups"] = groups
            out[token] = user
    return out


def static_tokens(tokens: dict[str, dict]) -> TokenAuthenticator:
    return lambda token: tokens.get(token)


@web.middleware
async def authenticate(request: web.Request, handler):
    authn = request.app.get(AUTHN)
    if authn is not None and authn.enabled:
        request[USER] = authn.authenticate(request)
    return await handler(request)
