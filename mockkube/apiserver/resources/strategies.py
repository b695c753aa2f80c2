"""Strategy building blocks shared by resource declarations."""

from __future__ import annotations

from typing import Any

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


class ConvertingStrategy:
    """Mixin for a built-in resource served at a version other than the one it is stored at
    (autoscaling/v1 HorizontalPodAutoscalers, resource.k8s.io/v1beta1 and v1beta2): a write
    through that version is converted to the storage version before validation, and every
    read converts back (``converter.convert(objs, api_version)``; the generic paths find it as
    ``ResourceType.strategy_converts``). Put it before the base strategy in the bases."""

    storage_api_version = ""
    converter: Any = None

    def storage_default(self, obj: dict, now: str | None = None) -> None:
        """The storage version's defaulting, run on a converted object (as upstream's decode
        of the stored bytes defaults them)."""

    def stored_form(self, obj: dict) -> None:
        """Last touches on an object about to be stored (e.g. drop round-trip annotations)."""

    def to_storage(self, obj: dict, now: str | None = None) -> None:
        """Convert ``obj`` to the storage version in place (the generic registry holds on to
        the dict and its metadata)."""
        if obj.get("apiVersion") != self.storage_api_version:
            converted = self.converter.convert([obj], self.storage_api_version)[0]
            self.storage_default(converted, now)
            replace_in_place(obj, converted)
        self.stored_form(obj)

    def default_through_storage(self, obj: dict, now: str | None = None) -> None:
        """Default an object at its own version with the storage version's rules: convert,
        default, convert back (for versions whose defaults upstream are the storage version's
        under another shape)."""
        served = obj.get("apiVersion")
        if served == self.storage_api_version or not served:
            self.storage_default(obj, now)
            return
        stored = self.converter.convert([obj], self.storage_api_version)[0]
        self.storage_default(stored, now)
        replace_in_place(obj, self.converter.convert([stored], served)[0])

    def prepare_create(self, obj: dict) -> None:
        self.to_storage(obj)
        super().prepare_create(obj)  # type: ignore[misc]

    def prepare_update(self, new: dict, old: dict) -> None:
        self.to_storage(new)
        super().prepare_update(new, old)  # type: ignore[misc]

    def prepare_status_update(self, new: dict, old: dict) -> None:
        self.to_storage(new)
        super().prepare_status_update(new, old)  # type: ignore[misc]


def replace_in_place(obj: dict, new: dict) -> None:
    """Make ``obj`` equal to ``new``, keeping ``obj``'s metadata dict (callers hold it)."""
    meta = obj.get("metadata")
    obj.clear()
    obj.update(new)
    if isinstance(meta, dict) and isinstance(new.get("metadata"), dict) and new["metadata"] is not meta:
        fresh = new["metadata"]
        meta.clear()
        meta.update(fresh)
        obj["metadata"] = meta
