"""The in-process client: what the scheduler, controllers, kubelets and drivers use.

It goes through the same generic registry as HTTP (strategies, validation, admission,
managedFields), so an in-process write is indistinguishable from a client's. Reads come
from the cache and return the shared, read-only object dicts: copy before changing
(``clone``).

When the server's authorizer enforces (``--authorization-mode=RBAC,Node``), every write is
authorized for the identity the component acts under, with the attributes the same request
would have over HTTP, and a denial raises the same 403 (mockkube/apiserver/authz/components.py).
Reads are served from the cache unchecked, as upstream components read from informers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockkube.apiserver.authz import components as authz
from mockkube.machinery import errors
from mockkube.machinery.meta import clone  # noqa: F401  (re-exported: components copy before changing)
from mockkube.machinery.registry import ResourceType

if TYPE_CHECKING:
    from mockkube.apiserver.rest import Resources, WriteOptions


class Client:
    awaits_writes = False  # RemoteClient: writes awaited under asyncbridge.spawn (Controller._run)

    def __init__(self, resources: Resources, manager: str) -> None:
        self.res = resources
        self.store = resources.store
        self.registry = resources.registry
        self.manager = manager

    # -- resource lookup -------------------------------------------------------
    def served(self, plural: str, group: str = "") -> bool:
        """Whether the server serves this resource (--runtime-config and feature gates decide
        for some, e.g. DeviceTaintRules)."""
        return any(each.plural == plural and each.group == group for each in self.registry.all())

    def rt(self, plural: str, group: str = "", version: str = "") -> ResourceType:
        """``client.rt("pods")``, ``client.rt("resourceclaims", "resource.k8s.io")``."""
        if not version:
            for each in self.registry.all():
                if each.plural == plural and each.group == group:
                    return each
            raise KeyError(f"no resource {plural!r} in group {group!r}")
        r = self.registry.get(group, version, plural)
        if r is None:
            raise KeyError(f"no resource {group}/{version}/{plural}")
        return r

    def _authorized(self, verb: str, rt: ResourceType, namespace: str, name: str, subresource: str = ""):
        """The write's authorization (a no-op unless the server enforces one)."""
        az = self.store.authorizer
        if az is None:
            return authz.NOOP
        return authz.request(az, verb, rt, namespace, name, subresource)

    def _opts(self) -> "WriteOptions":
        # imported here: the component processes' RemoteClient (a subclass) writes over HTTP,
        # and importing the generic registry would bring the SQL store and SQLAlchemy with it
        from mockkube.apiserver.rest import WriteOptions

        return WriteOptions(field_manager=self.manager, field_validation="Ignore")

    # -- reads -----------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> dict | None:
        e = self.store.get(rt, namespace, name)
        return e.obj if e else None

    def read(self, rt: ResourceType, namespace: str, name: str) -> dict | None:
        """A read that must see the latest write (a retry after a conflict, as client-go's
        live GET): the same as ``get`` here, where the cache is the store's."""
        return self.get(rt, namespace, name)

    def list(
        self, rt: ResourceType, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> list[dict]:
        if not label_selector and not field_selector:
            return self.store.objects(rt, namespace)
        return [e.obj for e in self.res.list(rt, namespace, label_selector, field_selector).entries]

    # -- writes ----------------------------------------------------------------
    def create(self, rt: ResourceType, obj: dict, namespace: str | None = None) -> dict:
        ns = namespace if namespace is not None else obj.get("metadata", {}).get("namespace", "")
        with self._authorized("create", rt, ns, ""):
            return self.res.create(rt, ns, obj, self._opts()).obj

    def update(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        with self._authorized("update", rt, m.get("namespace", ""), m["name"]):
            return self.res.update(rt, m.get("namespace", ""), m["name"], obj, self._opts(), check_structure=False).obj

    def update_status(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        with self._authorized("update", rt, m.get("namespace", ""), m["name"], "status"):
            return self.res.update(
                rt, m.get("namespace", ""), m["name"], obj, self._opts(), subresource="status", check_structure=False
            ).obj

    def patch(
        self, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str = "merge", subresource: str = ""
    ) -> dict:
        with self._authorized("patch", rt, namespace, name, subresource):
            return self.res.patch(rt, namespace, name, patch_type, body, self._opts(), subresource)[0].obj

    def update_scale(self, rt: ResourceType, namespace: str, name: str, replicas: int, path: str = "") -> dict:
        """A write through ``<resource>/scale`` (authorized as that, as the HPA controller's
        scale client is): the replica count at ``path`` (a custom resource's
        specReplicasPath; ``spec.replicas`` otherwise)."""
        with self._authorized("update", rt, namespace, name, "scale"):
            if not path or path == ".spec.replicas":
                body = {"spec": {"replicas": replicas}}
                return self.res.patch(rt, namespace, name, "merge", body, self._opts())[0].obj
            from mockkube.machinery.customresource import set_path

            obj = self.get(rt, namespace, name)
            if obj is None:
                raise errors.not_found(rt.plural, rt.group, name)
            new = clone(obj)
            set_path(new, path, replicas)
            return self.res.update(rt, namespace, name, new, self._opts(), check_structure=False).obj

    def apply(self, rt: ResourceType, obj: dict, force: bool = True, subresource: str = "") -> dict:
        m = obj["metadata"]
        opts = self._opts()
        opts.force = force
        with self._authorized("patch", rt, m.get("namespace", ""), m["name"], subresource):
            return self.res.patch(rt, m.get("namespace", ""), m["name"], "apply", obj, opts, subresource)[0].obj

    def delete(self, rt: ResourceType, namespace: str, name: str, options: dict | None = None) -> dict | None:
        """Delete; returns the object while deletion is pending, None when it is gone (or was)."""
        try:
            with self._authorized("delete", rt, namespace, name):
                entry, gone = self.res.delete(rt, namespace, name, options)
        except errors.APIError as e:
            if e.code == 404:
                return None
            raise
        return None if gone else entry.obj

    def bind(self, namespace: str, name: str, node: str) -> dict:
        az = self.store.authorizer
        with authz.NOOP if az is None else authz.request(az, "create", self.rt("pods"), namespace, name, "binding"):
            return self.res.bind(namespace, name, node).obj

    def finalize_namespace(self, name: str, new: dict) -> None:
        """``namespaces/{name}/finalize``: write ``new``'s spec.finalizers (the namespace
        controller's last step)."""
        self.res.finalize_namespace(name, new)

    def finalize_delete(self, rt: ResourceType, namespace: str, name: str) -> None:
        """Complete a graceful deletion (what a kubelet does once a pod has stopped)."""
        with self._authorized("delete", rt, namespace, name):
            self.res.finalize_delete(rt, namespace, name)
