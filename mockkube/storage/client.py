"""The in-process client: what the scheduler, controllers, kubelets and drivers use.

It goes through the same generic registry as HTTP (strategies, validation, admission,
managedFields), so an in-process write is indistinguishable from a client's. Reads come
from the cache and return the shared, read-only object dicts: copy before changing
(``clone``).
"""

from __future__ import annotations

from typing import Any

from mockkube.machinery import errors
from mockkube.machinery.meta import clone  # noqa: F401  (re-exported: components copy before changing)
from mockkube.machinery.registry import ResourceType
from mockkube.machinery.rest import Resources, WriteOptions


class Client:
    def __init__(self, resources: Resources, manager: str) -> None:
        self.res = resources
        self.store = resources.store
        self.registry = resources.registry
        self.manager = manager

    # -- resource lookup -------------------------------------------------------
    def rt(self, plural: str, group: str = "", version: str = "") -> ResourceType:
        """``client.rt("pods")``, ``client.rt("resourceclaims", "resource.k8s.io")``."""
        if not version:
            for r in self.registry.all():
                if r.plural == plural and r.group == group:
                    return r
            raise KeyError(f"no resource {plural!r} in group {group!r}")
        r = self.registry.get(group, version, plural)
        if r is None:
            raise KeyError(f"no resource {group}/{version}/{plural}")
        return r

    def _opts(self) -> WriteOptions:
        return WriteOptions(field_manager=self.manager, field_validation="Ignore")

    # -- reads -----------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict | None:
        e = self.store.get(rt, namespace, name)
        return e.obj if e else None

    def list(self, rt: ResourceType, namespace: str | None = None, label_selector: str = "",
             field_selector: str = "") -> list[dict]:
        if not label_selector and not field_selector:
            return self.store.objects(rt, namespace)
        return [e.obj for e in self.res.list(rt, namespace, label_selector, field_selector).entries]

    # -- writes ----------------------------------------------------------------
    def create(self, rt: ResourceType, obj: dict, namespace: str | None = None) -> dict:
        ns = namespace if namespace is not None else obj.get("metadata", {}).get("namespace", "")
        return self.res.create(rt, ns, obj, self._opts()).obj

    def update(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        return self.res.update(rt, m.get("namespace", ""), m["name"], obj, self._opts(),
                               check_structure=False).obj

    def update_status(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        return self.res.update(rt, m.get("namespace", ""), m["name"], obj, self._opts(), subresource="status",
                               check_structure=False).obj

    def patch(self, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str = "merge",
              subresource: str = "") -> dict:
        return self.res.patch(rt, namespace, name, patch_type, body, self._opts(), subresource)[0].obj

    def apply(self, rt: ResourceType, obj: dict, force: bool = True, subresource: str = "") -> dict:
        m = obj["metadata"]
        opts = self._opts()
        opts.force = force
        return self.res.patch(rt, m.get("namespace", ""), m["name"], "apply", obj, opts, subresource)[0].obj

    def delete(self, rt: ResourceType, namespace: str, name: str, options: dict | None = None) -> dict | None:
        """Delete; returns the object while deletion is pending, None when it is gone (or was)."""
        try:
            entry, gone = self.res.delete(rt, namespace, name, options)
        except errors.APIError as e:
            if e.code == 404:
                return None
            raise
        return None if gone else entry.obj

    def bind(self, namespace: str, name: str, node: str) -> dict:
        return self.res.bind(namespace, name, node).obj

    def finalize_delete(self, rt: ResourceType, namespace: str, name: str) -> None:
        """Complete a graceful deletion (what a kubelet does once a pod has stopped)."""
        self.res.finalize_delete(rt, namespace, name)
