"""PodLogOptions from a query (``pods/log`` on the API server, ``/containerLogs`` on a
kubelet): one decoder for both, as both sides decode the same v1 PodLogOptions with
apimachinery's parameter codec. A value that does not parse is a 400 with strconv's text (a
``sinceTime`` that is not RFC 3339 too); what decoded is then checked by ``validate``, core
validation's ValidatePodLogOptions, whose errors the API server answers as 422 Invalid
(``PodLogOptions "<pod>" is invalid: ...``) and a kubelet as 422 "Invalid request."."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from mockkube.machinery import errors, fielderrors, meta
from mockkube.machinery.fielderrors import FieldError
from mockkube.machinery.strconv import convert_bool, parse_int64


@dataclass(frozen=True)
class PodLogOptions:
    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: float | None = None  # epoch seconds; beside sinceSeconds, refused by validate
    limit_bytes: int | None = None

    def since(self, now: float) -> float | None:
        """From when the log is asked for (``now``: the cluster clock's), None: all of it."""
        return now - self.since_seconds if self.since_seconds is not None else self.since_time


def decode(query: Mapping[str, str]) -> PodLogOptions:
    """The options a query gives (each parameter's first value), checked."""

    def number(name: str) -> int | None:
        v = query.get(name)
        return parse_int64(v) if v else None

    def flag(name: str) -> bool:
        v = query.get(name)
        return convert_bool(v) if v is not None else False

    since_seconds, since_time = number("sinceSeconds"), None
    if query.get("sinceTime"):
        try:
            since_time = meta.parse_time(query["sinceTime"])
        except ValueError as e:
            raise errors.bad_request(f"invalid sinceTime: {e}") from None
    limit = number("limitBytes")
    tail = query.get("tailLines")
    return PodLogOptions(
        container=query.get("container", ""),
        follow=flag("follow"),
        previous=flag("previous"),
        timestamps=flag("timestamps"),
        tail_lines=None if tail is None else parse_int64(tail),
        since_seconds=since_seconds,
        since_time=since_time,
        limit_bytes=limit,
    )


def validate(opts: PodLogOptions) -> list[FieldError]:
    """ValidatePodLogOptions (pkg/apis/core/validation)."""
    errs = []
    if opts.tail_lines is not None and opts.tail_lines < 0:
        errs.append(fielderrors.invalid("tailLines", opts.tail_lines, "must be greater than or equal to 0"))
    if opts.limit_bytes is not None and opts.limit_bytes < 1:
        errs.append(fielderrors.invalid("limitBytes", opts.limit_bytes, "must be greater than 0"))
    if opts.since_seconds is not None and opts.since_time is not None:
        errs.append(fielderrors.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif opts.since_seconds is not None and opts.since_seconds < 1:
        errs.append(fielderrors.invalid("sinceSeconds", opts.since_seconds, "must be greater than 0"))
    return errs
