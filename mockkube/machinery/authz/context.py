"""What the review kinds (access reviews, TokenReview) ask of the server's security setup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mockkube.machinery.authz.authorizer import Authorizer


@dataclass
class AuthContext:
    authorizer: Authorizer | None = None
    # bearer token -> userInfo (or None): every token authenticator the server has
    authenticate_token: Callable[[str, list[str]], tuple[dict | None, list[str]]] | None = None
    extra: Any = None
