"""``/healthz``, ``/livez`` and ``/readyz`` as k8s.io/apiserver's healthz package serves them.

``kubectl get --raw '/readyz?verbose'`` lists every check (``[+]etcd ok``) and ends with
``readyz check passed``; ``/readyz/<check>`` asks one check; ``?exclude=<check>`` skips one.
Pure: the HTTP layer passes in whether the server is shutting down and whether its
post-start hooks (mockkube's components: nodes, slices, device classes) have finished; until
they have, the ``poststarthook/...`` checks fail as upstream's ``postStartHookHealthz`` does, so
a client polling ``/readyz`` never sees an empty cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

_COMMON = (
    "ping",
    "log",
    "etcd",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/bootstrap-controller",
)
CHECKS: dict[str, tuple[str, ...]] = {
    "healthz": _COMMON,
    "livez": _COMMON,
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync") + _COMMON[3:] + ("shutdown",),
}


@dataclass(frozen=True)
class Reply:
    status: int
    text: str


def _failing(check: str, stopping: bool, starting: bool) -> bool:
    return (stopping and check == "shutdown") or (starting and check.startswith("poststarthook/"))


def root(
    endpoint: str, query: Mapping[str, str] | Sequence[tuple[str, str]], stopping: bool, starting: bool = False
) -> Reply:
    """The reply to ``GET /<endpoint>`` (handleRootHealth): "ok", or the verbose report.

    ``query`` is the request's query as (key, value) pairs (``exclude`` may repeat).
    """
    items = list(query.items()) if isinstance(query, Mapping) else list(query)
    excluded = [v for k, v in items if k == "exclude"]
    unknown = sorted(set(excluded) - set(CHECKS[endpoint]))
    lines, failed = [], False
    for check in CHECKS[endpoint]:
        if check in excluded:
            lines.append(f"[+]{check} excluded: ok")
        elif _failing(check, stopping, starting):
            lines.append(f"[-]{check} failed: reason withheld")
            failed = True
        else:
            lines.append(f"[+]{check} ok")
    if unknown:
        lines.append(
            "warn: some health checks cannot be excluded: no matches for " + ",".join(f'"{u}"' for u in unknown)
        )
    report = "".join(line + "\n" for line in lines)
    if failed:  # always verbose on failure; http.Error appends a newline
        return Reply(500, f"{report}{endpoint} check failed\n")
    if not any(k == "verbose" for k, _ in items):
        return Reply(200, "ok")
    return Reply(200, f"{report}{endpoint} check passed\n")


def single(endpoint: str, check: str, stopping: bool, starting: bool = False) -> Reply | None:
    """The reply to ``GET /<endpoint>/<check>``; None when there is no such check (404)."""
    if check not in CHECKS[endpoint]:
        return None
    if _failing(check, stopping, starting):
        reason = "not finished" if check.startswith("poststarthook/") else "process is shutting down"
        return Reply(500, f"internal server error: {reason}\n")
    return Reply(200, "ok")
