"""Watch over HTTP: chunked JSON events, resume, bookmarks, watch-list, timeouts.

Framing follows kube-apiserver: one ``{"type":..,"object":..}`` JSON document per line,
flushed per event. ``sendInitialEvents=true`` sends the current state as ADDED events and
then one BOOKMARK annotated ``k8s.io/initial-events-end`` (client-go 1.35 informers and
``kubectl wait`` hang without it). Table watches carry column definitions only in the
first event.
"""

from __future__ import annotations

import asyncio
import json
import random
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from aiohttp import web

from mockkube.apiserver.http import serving
from mockkube.apiserver.http.encoding import Wanted
from mockkube.machinery import errors
from mockkube.storage.cache import Entry

if TYPE_CHECKING:
    from mockkube.apiserver.http.handlers import API, Target
    from mockkube.apiserver.http.params import ListParams

BOOKMARK_INTERVAL = 30.0  # seconds between progress bookmarks when the client allows them
MIN_REQUEST_TIMEOUT = 1800  # upstream: a watch without timeoutSeconds lasts 30-60 minutes


def _event_bytes(typ: str, raw: bytes) -> bytes:
    return b'{"type":"' + typ.encode() + b'","object":' + raw + b"}\n"


class _Encoder:
    """Turns (type, entry) into the bytes of one event in the representation asked for."""

    def __init__(self, t: "Target", wanted: Wanted, include_object: str) -> None:
        self.t = t
        self.wanted = wanted
        self.include_object = include_object
        self.headers_sent = False

    def event(self, typ: str, entry: Entry) -> bytes:
        if self.wanted.table:
            from mockkube.apiserver.http import tables

            tbl = tables.make_table(
                self.t.rt.group,
                self.t.rt.plural,
                [entry.obj],
                self.include_object,
                datetime.now(timezone.utc),
                {"resourceVersion": str(entry.rv)},
                with_headers=not self.headers_sent,
                printer=self.t.rt.table,
            )
            self.headers_sent = True
            return _event_bytes(typ, json.dumps(tbl, separators=(",", ":")).encode())
        if self.wanted.partial:
            obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": entry.obj.get("metadata", {}),
            }
            return _event_bytes(typ, json.dumps(obj, separators=(",", ":")).encode())
        if entry.obj.get("apiVersion") != self.t.rt.api_version and (
            self.t.rt.schema is not None or self.t.rt.strategy_converts
        ):
            from mockkube.machinery.customresource import raw_as

            return _event_bytes(
                typ, raw_as(entry, self.t.rt.api_version, getattr(self.t.rt.strategy, "converter", None))
            )
        return _event_bytes(typ, entry.raw)

    def bookmark(self, rv: int, initial_end: bool = False) -> bytes:
        rt = self.t.rt
        meta: dict = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        if self.wanted.table:
            obj = {
                "kind": "Table",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": str(rv)},
                "rows": [],
            }
            if initial_end:
                obj["rows"] = [
                    {
                        "cells": [],
                        "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta},
                    }
                ]
        elif self.wanted.partial:
            obj = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}
        else:
            obj = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}
        return _event_bytes("BOOKMARK", json.dumps(obj, separators=(",", ":")).encode())


def _start_rv(p: "ListParams") -> int | None:
    """None = start from now with synthetic ADDED events; N = replay after N."""
    if p.resource_version in ("", "0"):
        return None
    from mockkube.apiserver.rest import parse_resource_version

    return parse_resource_version(p.resource_version)


async def serve(api: "API", request: web.Request, t: "Target", p: "ListParams", wanted: Wanted) -> web.StreamResponse:
    store = api.res.store
    pred = api.res.predicate(t.rt, p.label_selector, p.field_selector).fn
    ns = t.namespace or None
    initial: list[tuple[str, Entry]] = []
    send_initial = p.send_initial_events
    if send_initial is None:
        from_rv = _start_rv(p)
        send_initial = from_rv is None
    elif send_initial:
        from_rv = None
        want = _start_rv(p)
        if want is not None and want > store.rv:
            raise errors.too_large_rv(want, store.rv)
    else:
        from_rv = _start_rv(p)
        if from_rv is None:
            from_rv = store.rv
    # snapshot and subscription happen with no await in between: nothing is missed
    watcher, backlog = store.watch(t.rt, ns, from_rv, pred)
    snapshot_rv = store.rv
    if send_initial:
        for e in store.entries(t.rt, ns):
            if pred is None or pred(e.obj):
                initial.append(("ADDED", e))
    enc = _Encoder(t, wanted, p.include_object)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    timeout = (
        p.timeout_seconds
        if p.timeout_seconds and p.timeout_seconds > 0
        else MIN_REQUEST_TIMEOUT * (1 + random.random())
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        await resp.prepare(request)
        buf = [enc.event(typ, e) for typ, e in initial]
        buf += [enc.event(typ, e) for typ, e in backlog]
        if p.send_initial_events:
            buf.append(enc.bookmark(snapshot_rv, initial_end=True))
        last_rv = max([snapshot_rv] + [e.rv for _, e in backlog]) if backlog else snapshot_rv
        if buf:
            await resp.write(b"".join(buf))
        stop_task = asyncio.ensure_future(api.stopping.wait())
        gone = serving.client_gone(request)
        stops = {stop_task, gone}
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0 or api.stopping.is_set():
                    break
                if not watcher.queue.empty():  # events waiting: no task and wait set up for them
                    item = watcher.queue.get_nowait()
                else:
                    wait = min(remaining, BOOKMARK_INTERVAL) if p.allow_bookmarks else remaining
                    get = asyncio.ensure_future(watcher.queue.get())
                    done, _ = await asyncio.wait({get, *stops}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                    if get not in done:
                        get.cancel()
                        if not stops.isdisjoint(done):  # the server stops, or the client is gone
                            break
                        if p.allow_bookmarks and loop.time() < deadline:
                            await resp.write(enc.bookmark(max(last_rv, 0)))
                        continue
                    item = get.result()
                if item is None:
                    if watcher.overflowed:
                        st = errors.expired("watch of a slow client was closed; please re-list").status()
                        await resp.write(_event_bytes("ERROR", json.dumps(st).encode()))
                    break
                chunks = [enc.event(item[0], item[1])]
                last_rv = item[1].rv
                while not watcher.queue.empty():
                    nxt = watcher.queue.get_nowait()
                    if nxt is None:
                        watcher.closed = True
                        break
                    chunks.append(enc.event(nxt[0], nxt[1]))
                    last_rv = nxt[1].rv
                await resp.write(b"".join(chunks))
                if watcher.closed:
                    break
        finally:
            stop_task.cancel()
            gone.cancel()
        await resp.write_eof()
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        watcher.close()
    return resp
