"""API errors that become `Status` objects, as k8s.io/apimachinery/pkg/api/errors builds them.

Every layer raises ``APIError``; only the HTTP layer renders it. Messages follow upstream
wording exactly because kubectl prints them verbatim ("Error from server (NotFound): ...").
"""

from __future__ import annotations

from typing import Iterable

from mockkube.machinery.fielderrors import FieldError


class APIError(Exception):
    """An error with an HTTP code, a Status reason and optional details."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict | None = None, headers: dict | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:  # StatusDetails' fields are all omitempty upstream
            body["details"] = {k: v for k, v in self.details.items() if v not in ("", None, 0, [])}
        body["code"] = self.code
        return body

    def __repr__(self) -> str:
        return f"APIError({self.code}, {self.reason!r}, {self.message!r})"


def qualified_resource(resource: str, group: str) -> str:
    """``deployments.apps`` / ``pods``: the GroupResource string upstream prints."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, group: str, name: str) -> APIError:
    return APIError(
        404,
        "NotFound",
        f'{qualified_resource(resource, group)} "{name}" not found',
        {"name": name, "group": group, "kind": resource},
    )


def already_exists(resource: str, group: str, name: str) -> APIError:
    return APIError(
        409,
        "AlreadyExists",
        f'{qualified_resource(resource, group)} "{name}" already exists',
        {"name": name, "group": group, "kind": resource},
    )


def conflict(resource: str, group: str, name: str, why: str) -> APIError:
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(resource, group)} "{name}": {why}',
        {"name": name, "group": group, "kind": resource},
    )


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def stale(resource: str, group: str, name: str) -> APIError:
    return conflict(resource, group, name, STALE)


def invalid(kind: str, group: str, name: str, errors: Iterable[FieldError]) -> APIError:
    """422 Invalid: ``Kind.group "name" is invalid: [a: ..., b: ...]``."""
    errs = list(errors)
    qualified = f"{kind}.{group}" if group else kind
    if len(errs) == 1:
        agg = str(errs[0])
    else:
        agg = "[" + ", ".join(str(e) for e in errs) + "]"
    details = {"name": name, "group": group, "kind": kind, "causes": [e.to_cause() for e in errs]}
    return APIError(422, "Invalid", f'{qualified} "{name}" is invalid: {agg}', details)


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def method_not_allowed(message: str) -> APIError:
    return APIError(405, "MethodNotAllowed", message)


def unsupported_media_type(content_type: str, accepted: Iterable[str]) -> APIError:
    return APIError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
    )


def not_acceptable(message: str) -> APIError:
    return APIError(406, "NotAcceptable", message)


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


def too_old(requested: int, oldest: int) -> APIError:
    return expired(f"too old resource version: {requested} ({oldest})")


def too_large_rv(requested: int, current: int) -> APIError:
    return APIError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


def forbidden(resource: str, group: str, name: str, why: str) -> APIError:
    what = f'{qualified_resource(resource, group)} "{name}"' if name else qualified_resource(resource, group)
    return APIError(403, "Forbidden", f"{what} is forbidden: {why}", {"name": name, "group": group, "kind": resource})


def request_entity_too_large(message: str) -> APIError:
    return APIError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def internal(message: str) -> APIError:
    return APIError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})


def server_timeout(resource: str, group: str, operation: str, retry_after: int = 2) -> APIError:
    """kube-apiserver's answer when storage cannot be reached (``storage.IsUnreachable``):
    500 ServerTimeout with a Retry-After, which client-go honours by retrying."""
    return APIError(
        500,
        "ServerTimeout",
        f"The {operation} operation against {qualified_resource(resource, group)} could not be completed at this "
        "time, please try again.",
        {"name": operation, "group": group, "kind": resource, "retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def too_many_requests(message: str, retry_after: int = 1) -> APIError:
    return APIError(
        429, "TooManyRequests", message, {"retryAfterSeconds": retry_after}, headers={"Retry-After": str(retry_after)}
    )


def service_unavailable(message: str) -> APIError:
    return APIError(503, "ServiceUnavailable", message)
