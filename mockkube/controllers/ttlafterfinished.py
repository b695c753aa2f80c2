"""The TTL-after-finished controller (upstream pkg/controller/ttlafterfinished): a Job
with ``ttlSecondsAfterFinished`` is deleted (foreground, with a UID precondition) that
many seconds after its Complete or Failed condition, on the cluster clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import job_util as ju
from mockkube.machinery import errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

NAME = "ttl-after-finished-controller"


def expire_at(job: dict) -> float | None:
    """When a finished Job with a TTL is due for deletion (None: never)."""
    ttl = ju.spec(job).get("ttlSecondsAfterFinished")
    done = ju.finish_time(job)
    if ttl is None or done is None:
        return None
    return done + int(ttl)


class TTLAfterFinishedController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.job_rt = self.client.rt("jobs", "batch")
        self.job_inf = Informer(server.store, self.job_rt)
        self.job_inf.add_handler(self._on_job)
        self.informers = [self.job_inf]

    def _on_job(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ != "DELETED" and expire_at(obj) is not None and not cref.is_terminating(obj):
            self.queue.add((meta.namespace_of(obj), meta.name_of(obj)))

    def resync(self) -> None:
        """The clock moved: TTLs may have run out."""
        for job in self.job_inf.list():
            self._on_job("MODIFIED", job, None)

    def reconcile(self, key: tuple[str, str]) -> None:
        job = self.client.get(self.job_rt, *key)
        if job is None or cref.is_terminating(job):
            return
        at = expire_at(job)
        if at is None:
            return
        now = self.server.clock()
        if now < at:
            self.queue.add_after(key, at - now + 0.01)
            return
        try:
            self.client.delete(
                self.job_rt,
                key[0],
                key[1],
                {"propagationPolicy": "Foreground", "preconditions": {"uid": job["metadata"]["uid"]}},
            )
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise


async def start(server: "Server") -> list:
    c = TTLAfterFinishedController(server)
    await c.start()
    return [c]
