"""PodLogOptions from a query (``pods/log`` on the API server, ``/containerLogs`` on a
kubelet): one decoder for both, as both sides decode the same v1 PodLogOptions with
apimachinery's parameter codec. A value that does not parse is a 400 with strconv's text;
the checks after it (``sinceSeconds`` and ``limitBytes`` above 0, a ``sinceTime`` that is
RFC 3339) are 400s too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from mockkube.machinery import errors, meta
from mockkube.machinery.strconv import convert_bool, parse_int64


@dataclass(frozen=True)
class PodLogOptions:
    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: float | None = None  # epoch seconds
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
    if since_seconds is not None and since_seconds < 1:
        raise errors.bad_request("sinceSeconds must be greater than 0")
    if since_seconds is None and query.get("sinceTime"):
        try:
            since_time = meta.parse_time(query["sinceTime"])
        except ValueError as e:
            raise errors.bad_request(f"invalid sinceTime: {e}") from None
    limit = number("limitBytes")
    if limit is not None and limit < 1:
        raise errors.bad_request("limitBytes must be greater than 0")
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
