"""A component process's view of the cluster: the caches of the resources it follows,
filled by list-and-watch over HTTP (client-go's reflectors), with the Store's read API
(``get``, ``objects``, ``entries``, ``hub``, ``lock``) so informers and the in-process
``Client`` read it unchanged.

Each resource is listed, then watched from the list's resourceVersion with bookmarks; a
broken watch resumes from the last resourceVersion seen, a 410 Gone relists (objects that
vanished meanwhile are delivered as DELETED), as a reflector does.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Iterable

import aiohttp

from mockkube.client.remote import HTTP, path_of, status_error
from mockkube.machinery import jsoncodec
from mockkube.machinery.registry import ResourceType
from mockkube.storage.cache import Entry, ResourceCache
from mockkube.storage.watch import Event, Hub

log = logging.getLogger("mockkube.replica")


class NotFollowed(LookupError):
    """A strict replica was read for a resource it does not follow: its answer would be
    silently empty, so the reader is a bug to fix (follow the resource, or read through the
    client, which asks the API for what the replica does not hold)."""


class Replica:
    def __init__(self, http_: HTTP, resources: Iterable[ResourceType], strict: bool = False) -> None:
        """``strict``: reading a resource not followed raises :class:`NotFollowed` instead of
        answering empty (a process that follows only what its components read, as a
        kubelet shard, not one whose informers range over every type)."""
        self.http = http_
        self.strict = strict
        self.lock = threading.RLock()
        self.hub = Hub()
        self.rv = 0
        self.authorizer = None  # the Store's: a component here is authorized by the API server
        self._rts = {rt.storage_key: rt for rt in resources}
        self._caches = {key: ResourceCache(rt.indexed()) for key, rt in self._rts.items()}
        self._synced = {key: asyncio.Event() for key in self._rts}
        self._last_rv = {key: 0 for key in self._rts}
        self._tasks: list[asyncio.Task] = []

    # -- the Store's read API ---------------------------------------------------------------
    def follows(self, rt: ResourceType) -> bool:
        return rt.storage_key in self._caches

    def _unfollowed(self, rt: ResourceType) -> None:
        if self.strict:
            raise NotFollowed(f"{rt.plural}{'.' + rt.group if rt.group else ''} is not followed by this process")

    def cache(self, rt: ResourceType) -> ResourceCache:
        if rt.storage_key not in self._caches:
            self._unfollowed(rt)
        return self._caches[rt.storage_key]

    def get(self, rt: ResourceType, namespace: str, name: str) -> Entry | None:
        cache = self._caches.get(rt.storage_key)
        if cache is None:
            self._unfollowed(rt)
            return None
        return cache.get(namespace if rt.namespaced else "", name)

    def entries(self, rt: ResourceType, namespace: str | None = None) -> Iterable[Entry]:
        """The objects of a followed resource (none of one not followed: a resource that
        cannot be watched, which an informer over every type meets; a strict replica raises)."""
        cache = self._caches.get(rt.storage_key)
        if cache is None:
            self._unfollowed(rt)
            return
        entries = cache.entries
        for k in cache.keys_from(namespace if rt.namespaced else None, None):
            e = entries.get(k)
            if e is not None:
                yield e

    def objects(self, rt: ResourceType, namespace: str | None = None) -> list[dict]:
        return [e.obj for e in self.entries(rt, namespace)]

    def position(self, key: str) -> int:
        """The resourceVersion up to which this resource's changes have been delivered."""
        return self._last_rv[key]

    def caught_up(self, rvs: dict[str, int]) -> bool:
        """Every followed resource has delivered its changes up to ``rvs`` (per storage key,
        the server's ``Store.newest_rvs()``); keys not followed do not count."""
        return all(self._last_rv[k] >= rv for k, rv in rvs.items() if k in self._last_rv)

    # -- feeding ----------------------------------------------------------------------------
    async def start(self) -> None:
        """List every followed resource (so informers start from a synced cache), then watch."""
        for key, rt in self._rts.items():
            self._tasks.append(asyncio.get_running_loop().create_task(self._reflect(key, rt), name=f"reflector {key}"))
        await asyncio.gather(*(e.wait() for e in self._synced.values()))

    def follow(self, rt: ResourceType) -> None:
        """Follow one more resource from now on (a custom resource defined while running): its
        objects arrive as ADDED events once listed."""
        key = rt.storage_key
        if key in self._caches:
            return
        self._rts[key] = rt
        self._caches[key] = ResourceCache(rt.indexed())
        self._synced[key] = asyncio.Event()
        self._last_rv[key] = 0
        if self._tasks:  # started: list and watch it too
            self._tasks.append(asyncio.get_running_loop().create_task(self._reflect(key, rt), name=f"reflector {key}"))

    def unfollow(self, rt: ResourceType) -> None:
        """Stop following a resource no longer served; its objects are delivered as DELETED."""
        key = rt.storage_key
        if key not in self._caches:
            return
        for t in self._tasks:
            if t.get_name() == f"reflector {key}":
                t.cancel()
        self._tasks = [t for t in self._tasks if t.get_name() != f"reflector {key}"]
        for e in list(self._caches[key].entries.values()):
            self._apply(key, rt, "DELETED", e.obj)
        for d in (self._rts, self._caches, self._synced, self._last_rv):
            d.pop(key, None)

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def _apply(self, key: str, rt: ResourceType, typ: str, obj: dict) -> None:
        m = obj.get("metadata") or {}
        # as kube-scheduler's pod informer and kube-controller-manager's informers do: nothing
        # here reads them, a write that omits them keeps the stored ones, and they were near
        # half of a cached pod's memory
        m.pop("managedFields", None)
        rv = int(m.get("resourceVersion") or 0)
        cache = self._caches.get(key)
        if cache is None:  # unfollowed meanwhile
            return
        ns = m.get("namespace", "") if rt.namespaced else ""
        with self.lock:
            old = cache.get(ns, m.get("name", ""))
            if typ == "DELETED":
                if old is None:
                    return
                cache.remove(ns, m["name"])
            else:
                if old is not None and old.rv >= rv and typ == "ADDED":
                    return  # a relist repeating what is known
                cache.put(Entry(obj, b"", rv))
                if old is None:
                    typ = "ADDED"
            self.rv = max(self.rv, rv)
            self.hub.publish(key, Event(typ, Entry(obj, b"", rv), old.obj if old is not None else None))

    async def _list(self, key: str, rt: ResourceType) -> int:
        out = await self.http.arequest("GET", path_of(rt))
        kind = (out.get("kind") or "").removesuffix("List")
        seen = set()
        for obj in out.get("items") or ():
            obj.setdefault("kind", kind)
            obj.setdefault("apiVersion", out.get("apiVersion", ""))
            m = obj["metadata"]
            seen.add((m.get("namespace", "") if rt.namespaced else "", m["name"]))
            self._apply(key, rt, "ADDED", obj)
        for k in [k for k in list(self._caches[key].entries) if k not in seen]:  # gone while not watching
            e = self._caches[key].entries.get(k)
            if e is not None:
                self._apply(key, rt, "DELETED", e.obj)
        return int((out.get("metadata") or {}).get("resourceVersion") or 0)

    async def _reflect(self, key: str, rt: ResourceType) -> None:
        rv = 0
        backoff = 0.2
        while True:
            try:
                if not rv:
                    rv = await self._list(key, rt)
                    self._last_rv[key] = rv
                    self.rv = max(self.rv, rv)
                    self._synced[key].set()
                    backoff = 0.2
                rv = await self._watch(key, rt, rv)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - a reflector retries, as client-go's
                if getattr(e, "code", None) == 410:
                    rv = 0
                    continue
                # as client-go's reflector: "failed to list/watch ...: forbidden" and back off
                log.warning("failed to %s %s: %s", "watch" if rv else "list", rt.plural, e)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    async def _watch(self, key: str, rt: ResourceType, rv: int) -> int:
        url = (
            self.http.creds.server
            + path_of(rt)
            + f"?watch=1&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=3600"
        )
        async with self.http.watch_session().get(url, timeout=aiohttp.ClientTimeout(total=None, sock_read=None)) as r:
            if r.status != 200:
                raise status_error(r.status, await r.read())
            async for line in r.content:
                if not line.strip():
                    continue
                ev = jsoncodec.loads(line)
                typ, obj = ev.get("type"), ev.get("object") or {}
                if typ == "ERROR":
                    if obj.get("code") == 410:
                        return 0
                    raise RuntimeError(obj.get("message", "watch error"))
                new_rv = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
                if typ != "BOOKMARK":
                    self._apply(key, rt, typ, obj)
                rv = max(rv, new_rv)
                self._last_rv[key] = rv
        return rv
