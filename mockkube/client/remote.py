"""The client of a component in a process of its own: the in-process ``Client``'s verbs
over HTTP to the API, reads from a ``Replica`` (its informers' caches).

A write made from synchronous code running under ``asyncbridge.spawn`` (the scheduler's
binding cycle) is awaited there, so the event loop goes on with other work while the API
answers; elsewhere it blocks on a keep-alive connection of its own. Events are sent
without waiting, as upstream's event broadcaster does.
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import ssl
from typing import Any, Callable
from urllib.parse import quote, urlencode, urlsplit

import aiohttp

from mockkube.client import asyncbridge
from mockkube.client.client import Client
from mockkube.client.kubeconfigs import Credentials
from mockkube.machinery import errors, jsoncodec
from mockkube.machinery.registry import Registry, ResourceType

log = logging.getLogger("mockkube.remote")

PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


def path_of(rt: ResourceType, namespace: str = "", name: str = "", subresource: str = "") -> str:
    base = f"/api/{rt.version}" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    if rt.namespaced and namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{rt.plural}"
    if name:
        base += f"/{quote(name, safe='')}"
    if subresource:
        base += f"/{subresource}"
    return base


def status_error(status: int, body: bytes) -> errors.APIError:
    """The APIError of a non-2xx answer, from its Status body."""
    try:
        st = jsoncodec.loads(body)
    except ValueError:
        st = {}
    if not isinstance(st, dict):
        st = {}
    return errors.APIError(
        status, st.get("reason") or "Unknown", st.get("message") or body.decode(errors="replace"), st.get("details")
    )


class HTTP:
    """One API server: a blocking keep-alive connection and an aiohttp session."""

    def __init__(self, creds: Credentials, user_agent: str) -> None:
        self.creds = creds
        u = urlsplit(creds.server)
        self._host, self._port, self._tls = u.hostname or "127.0.0.1", u.port, u.scheme == "https"
        self.headers = {**creds.headers, "User-Agent": user_agent, "Accept": "application/json"}
        self._conn: http.client.HTTPConnection | None = None
        self._session: aiohttp.ClientSession | None = None
        self._watch_session: aiohttp.ClientSession | None = None
        self._pending: set[asyncio.Task] = set()
        # writes are refused while this says no (a leader-elected component that does not
        # hold its Lease: leaderelection.LeaderElector.holds)
        self.guard: Callable[[], bool] | None = None
        # the Authorization header of a component's call when it is not the kubeconfig's (a
        # controller's own ServiceAccount token: satokens.py); None: the kubeconfig's
        self.authorization: Callable[[], str | None] | None = None

    def _check_guard(self, method: str) -> None:
        if method != "GET" and self.guard is not None and not self.guard():
            raise errors.APIError(503, "ServiceUnavailable", "not writing: this process does not hold its leader lease")

    # -- blocking ----------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        extra: dict | None = None,
    ) -> Any:
        data, own = self._prepare(method, body, content_type, extra)
        headers = {**self.headers, **own}
        for attempt in (0, 1):  # a keep-alive connection the server closed is reopened once
            if self._conn is None:
                self._conn = (
                    http.client.HTTPSConnection(
                        self._host, self._port, context=self.creds.ssl or ssl.create_default_context(), timeout=60
                    )
                    if self._tls
                    else http.client.HTTPConnection(self._host, self._port, timeout=60)
                )
            try:
                self._conn.request(method, path, data, headers)
                r = self._conn.getresponse()
                payload = r.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
        return self._result(r.status, payload)

    def _prepare(self, method: str, body: Any, content_type: str, extra: dict | None) -> tuple[bytes | None, dict]:
        """The body and the request's own headers, both ways of sending alike; a write is
        refused here while the guard says no."""
        self._check_guard(method)
        data = None if body is None else jsoncodec.dumps(body)
        return data, {**({"Content-Type": content_type} if data is not None else {}), **(extra or {})}

    @staticmethod
    def _result(status: int, payload: bytes) -> Any:
        if status >= 300:
            raise status_error(status, payload)
        return jsoncodec.loads(payload) if payload else None

    # -- async ---------------------------------------------------------------------------
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self.headers,
                connector=aiohttp.TCPConnector(ssl=self.creds.ssl or False, limit=32),
                timeout=aiohttp.ClientTimeout(total=60),
            )
        return self._session

    def watch_session(self) -> aiohttp.ClientSession:
        """Watches hold a connection each for as long as they run: a session of their own,
        without the request session's limit (a controller-manager follows ~60 resources)."""
        if self._watch_session is None or self._watch_session.closed:
            self._watch_session = aiohttp.ClientSession(
                headers=self.headers, connector=aiohttp.TCPConnector(ssl=self.creds.ssl or False, limit=0)
            )
        return self._watch_session

    async def arequest(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        extra: dict | None = None,
    ) -> Any:
        data, headers = self._prepare(method, body, content_type, extra)
        async with self.session().request(method, self.creds.server + path, data=data, headers=headers or None) as r:
            return self._result(r.status, await r.read())

    def call(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json", own: bool = False
    ) -> Any:
        """Awaited when the caller runs under ``asyncbridge.spawn``, else blocking; as the
        acting component (``authorization``) unless ``own`` (the kubeconfig's credentials)."""
        extra = None if own else self._extra()
        if asyncbridge.in_spawned():
            return asyncbridge.await_only(self.arequest(method, path, body, content_type, extra))
        return self.request(method, path, body, content_type, extra)

    def _extra(self) -> dict | None:
        auth = self.authorization() if self.authorization is not None else None
        return {"Authorization": auth} if auth else None

    def send_later(self, method: str, path: str, body: Any) -> None:
        """Fire and forget (events): failures are logged, as the event broadcaster does."""
        try:
            extra = self._extra()  # the recording component's credentials, taken now
        except Exception as e:  # noqa: BLE001 - an event is best effort
            log.debug("event not written: %s", e)
            return

        async def send() -> None:
            try:
                await self.arequest(method, path, body, extra=extra)
            except Exception as e:  # noqa: BLE001 - an event is best effort
                log.debug("event not written: %s", e)

        try:
            task = asyncio.get_running_loop().create_task(send())
        except RuntimeError:
            try:
                self.request(method, path, body, extra=extra)
            except errors.APIError as e:
                log.debug("event not written: %s", e)
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def close(self) -> None:
        if self._pending:  # events still on their way, for a second at most (a server gone)
            _, late = await asyncio.wait(set(self._pending), timeout=1.0)
            for task in late:
                task.cancel()
        for session in (self._session, self._watch_session):
            if session is not None:
                await session.close()
        if self._conn is not None:
            self._conn.close()


class RemoteClient(Client):
    """``Client`` over HTTP; ``store`` is the process's replica (reads never leave it)."""

    awaits_writes = True

    def __init__(self, http_: HTTP, store: Any, registry: Registry, manager: str) -> None:
        self.http = http_
        self.res = None  # type: ignore[assignment]  # no registry in this process: every write is a REST call
        self.store: Any = store  # a Replica: the resources it follows, filled by list-and-watch
        self.registry = registry
        self.manager = manager

    def _q(self, **extra: Any) -> str:
        return "?" + urlencode({"fieldManager": self.manager, **extra})

    def get(self, rt: ResourceType, namespace: str, name: str) -> dict | None:
        if self.store.follows(rt):
            return super().get(rt, namespace, name)
        return self.read(rt, namespace, name)

    def read(self, rt: ResourceType, namespace: str, name: str) -> dict | None:
        """A GET to the API: the replica may not have delivered the latest write yet."""
        try:
            return self.http.call("GET", path_of(rt, namespace, name))
        except errors.APIError as e:
            if e.code == 404:
                return None
            raise

    def list(
        self, rt: ResourceType, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> list[dict]:
        if self.store.follows(rt) and not label_selector and not field_selector:
            return self.store.objects(rt, namespace)
        q = urlencode({k: v for k, v in (("labelSelector", label_selector), ("fieldSelector", field_selector)) if v})
        out = self.http.call("GET", path_of(rt, namespace or "") + (f"?{q}" if q else ""))
        items = out.get("items") or []
        kind = out.get("kind", "").removesuffix("List")
        for it in items:  # list items carry no kind/apiVersion on the wire
            it.setdefault("kind", kind)
            it.setdefault("apiVersion", out.get("apiVersion", ""))
        return items

    def create(self, rt: ResourceType, obj: dict, namespace: str | None = None) -> dict:
        ns = namespace if namespace is not None else obj.get("metadata", {}).get("namespace", "")
        path = path_of(rt, ns) + self._q(fieldValidation="Ignore")
        if rt.plural == "events" and rt.group in ("", "events.k8s.io"):
            self.http.send_later("POST", path, obj)
            return obj
        return self.http.call("POST", path, obj)

    def update(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        return self.http.call(
            "PUT", path_of(rt, m.get("namespace", ""), m["name"]) + self._q(fieldValidation="Ignore"), obj
        )

    def update_status(self, rt: ResourceType, obj: dict) -> dict:
        m = obj["metadata"]
        return self.http.call(
            "PUT", path_of(rt, m.get("namespace", ""), m["name"], "status") + self._q(fieldValidation="Ignore"), obj
        )

    def patch(
        self, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str = "merge", subresource: str = ""
    ) -> dict:
        return self.http.call(
            "PATCH",
            path_of(rt, namespace, name, subresource) + self._q(fieldValidation="Ignore"),
            body,
            PATCH_TYPES[patch_type],
        )

    def update_scale(self, rt: ResourceType, namespace: str, name: str, replicas: int, path: str = "") -> dict:
        """Through ``<resource>/scale``, as the HPA controller's scale client (the server maps
        a custom resource's specReplicasPath)."""
        return self.patch(rt, namespace, name, {"spec": {"replicas": replicas}}, "merge", "scale")

    def finalize_namespace(self, name: str, new: dict) -> None:
        self.http.call("PUT", path_of(self.rt("namespaces"), "", name, "finalize") + self._q(), new)

    def apply(self, rt: ResourceType, obj: dict, force: bool = True, subresource: str = "") -> dict:
        m = obj["metadata"]
        q = self._q(force="true") if force else self._q()
        return self.http.call(
            "PATCH", path_of(rt, m.get("namespace", ""), m["name"], subresource) + q, obj, PATCH_TYPES["apply"]
        )

    def delete(self, rt: ResourceType, namespace: str, name: str, options: dict | None = None) -> dict | None:
        try:
            out = self.http.call("DELETE", path_of(rt, namespace, name), options)
        except errors.APIError as e:
            if e.code == 404:
                return None
            raise
        meta_ = (out or {}).get("metadata") or {}
        return (
            out
            if out and out.get("kind") != "Status" and meta_.get("deletionTimestamp") and meta_.get("finalizers")
            else None
        )

    def bind(self, namespace: str, name: str, node: str) -> dict:
        pods = self.rt("pods")
        current = self.get(pods, namespace, name) or {"metadata": {"namespace": namespace, "name": name}}
        self.http.call(
            "POST",
            path_of(pods, namespace, name, "binding"),
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace, "uid": current["metadata"].get("uid")},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            },
        )
        bound = dict(current)
        bound["spec"] = {**(current.get("spec") or {}), "nodeName": node}
        return bound

    def finalize_delete(self, rt: ResourceType, namespace: str, name: str) -> None:
        """Complete a graceful deletion as a kubelet's status manager does once the pod has
        stopped: DELETE with gracePeriodSeconds 0, preconditioned on the pod's UID (a pod made
        anew under the name meanwhile is not touched: 409)."""
        options: dict = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        current = self.get(rt, namespace, name)
        if current is not None and current["metadata"].get("uid"):
            options["preconditions"] = {"uid": current["metadata"]["uid"]}
        try:
            self.http.call("DELETE", path_of(rt, namespace, name), options)
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise
