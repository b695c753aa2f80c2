"""Reconciles a driver's desired pool content with the ResourceSlices in the API, as the
upstream resourceslice controller does: one set of slices per pool, all with the same
``pool.generation`` (bumped whenever the content changes) and ``resourceSliceCount``."""

from __future__ import annotations

from mockkube.client.client import Client, clone
from mockkube.machinery import errors
from mockkube.machinery.requestcontext import acting_as
from mockkube.rules.identities import driver_user


def slice_name(driver: str, pool: str, index: int) -> str:
    return f"{pool}-{driver}-{index}"


def _content(spec: dict) -> dict:
    s = clone(spec)
    s.get("pool", {}).pop("generation", None)
    return s


class Publisher:
    """Keeps, per (driver, pool), the generation and slice names it last wrote."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.rt = client.rt("resourceslices", "resource.k8s.io")
        self.known: dict[tuple[str, str], tuple[int, list[str], list[dict]]] = {}
        for s in client.list(self.rt):
            spec = s.get("spec") or {}
            key = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))
            gen, names, contents = self.known.get(key, (0, [], []))
            self.known[key] = (
                max(gen, int((spec.get("pool") or {}).get("generation", 0))),
                names + [s["metadata"]["name"]],
                contents + [_content(spec)],
            )

    def sync(self, driver: str, pool: str, specs: list[dict], owner: dict | None = None) -> int:
        """Make the pool's slices equal ``specs``; returns the pool generation now published.
        The driver writes as its own ServiceAccount: its kubelet plugin on the node of a
        node-local pool, its controller for a pool of many nodes (mockkube/rules/identities.py)."""
        node = next((s.get("nodeName") for s in specs if s.get("nodeName")), "")
        with acting_as(driver_user(driver, node)):
            return self._sync(driver, pool, specs, owner)

    def _sync(self, driver: str, pool: str, specs: list[dict], owner: dict | None) -> int:
        key = (driver, pool)
        gen, names, contents = self.known.get(key, (0, [], []))
        wanted = [_content(s) for s in specs]
        if names and wanted == contents:
            return gen
        gen += 1
        new_names = [slice_name(driver, pool, i) for i in range(len(specs))]
        for name, spec in zip(new_names, specs):
            spec = clone(spec)
            spec["pool"]["generation"] = gen
            obj = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": name},
                "spec": spec,
            }
            if owner is not None:
                obj["metadata"]["ownerReferences"] = [owner]
            live = self.client.get(self.rt, "", name)
            if live is None:
                self.client.create(self.rt, obj)
            else:
                upd = clone(live)
                upd["spec"] = spec
                if owner is not None:
                    upd["metadata"]["ownerReferences"] = [owner]
                self.client.update(self.rt, upd)
        for name in set(names) - set(new_names):
            try:
                self.client.delete(self.rt, "", name)
            except errors.APIError as e:  # pragma: no cover - already gone
                if e.code != 404:
                    raise
        self.known[key] = (gen, new_names, wanted)
        return gen

    def remove(self, driver: str, pool: str) -> None:
        _, names, _ = self.known.pop((driver, pool), (0, [], []))
        with acting_as(driver_user(driver)):
            for name in names:
                self.client.delete(self.rt, "", name)
