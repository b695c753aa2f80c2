"""What the review kinds (access reviews, TokenReview) ask of the server's security setup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mockkube.apiserver.authz.authorizer import Authorizer


@dataclass
class AuthContext:
    authorizer: Authorizer | None = None
    # (bearer token, audiences) -> (userInfo or None, audiences): for TokenReview
    authenticate_token: Callable[[str, list[str]], tuple[dict | None, list[str]]] | None = None
    tokens: Any = None  # mockkube.apiserver.resources.serviceaccount_tokens.ServiceAccountTokens
