"""Strategy building blocks shared by resource declarations."""

from __future__ import annotations

from mockkube.machinery.meta import clone
from mockkube.machinery.registry import Strategy


class SpecStatusStrategy(Strategy):
    """A resource with a status subresource: the main resource ignores status changes,
    the status subresource ignores everything else (upstream's usual split)."""

    tracks_generation = True
    reset_status_on_create = True
    status_keeps_meta: tuple[str, ...] = ()  # metadata a status write may change too

    def initial_status(self, obj: dict) -> dict | None:
        return None

    def prepare_create(self, obj: dict) -> None:
        if self.reset_status_on_create:
            obj.pop("status", None)
            st = self.initial_status(obj)
            if st is not None:
                obj["status"] = st

    def prepare_update(self, new: dict, old: dict) -> None:
        if "status" in old:
            new["status"] = clone(old["status"])
        else:
            new.pop("status", None)

    def prepare_status_update(self, new: dict, old: dict) -> None:
        status = new.get("status")
        keep_meta = new["metadata"]
        rebuilt = clone(old)
        if status is None:
            rebuilt.pop("status", None)
        else:
            rebuilt["status"] = status
        # status writes may carry managedFields and resourceVersion; the rest of metadata is old
        for k in ("resourceVersion", "managedFields") + self.status_keeps_meta:
            if k in keep_meta:
                rebuilt["metadata"][k] = keep_meta[k]
        new.clear()
        new.update(rebuilt)


class GenerationStrategy(Strategy):
    """No status subresource, but a generation that counts spec changes."""

    tracks_generation = True
