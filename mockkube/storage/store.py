"""The Store: persisted objects, one global resourceVersion, the cache and the event log.

Writes commit to the database first (object row, event row and the rv counter in one
transaction), then reach the cache and the watchers, so a failed write changes nothing
anyone can see. Store methods are synchronous. The API's loop and the components' loop
run on different threads, so writes hold ``lock`` (reentrant; the generic registry holds
it over a whole verb) and reads take snapshots of the cache's key lists.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import uuid
from typing import Callable, Iterable

from sqlalchemy import Engine, bindparam, delete, insert, select, update
from sqlalchemy.exc import OperationalError

from mockkube.machinery import errors, jsoncodec
from mockkube.machinery.meta import canonical_order
from mockkube.machinery.registry import Registry, ResourceType
from mockkube.storage import db, sharedlog
from mockkube.storage import schema as t
from mockkube.storage.cache import CachedEntry, Entry, Interner, JsonEntry, ResourceCache
from mockkube.storage.watch import Event, EventLog, Hub, Predicate, Watcher

log = logging.getLogger("mockkube.store")

EVENT_WINDOW = 10_000  # retained events per resource for watch resumption
_DB_EVENT_KEEP = 50_000  # rows kept in the events table (all resources)


# statements built once: SQLAlchemy then reuses their compiled form on every write
_INSERT_OBJECT = insert(t.objects).values(
    resource=bindparam("k_resource"),
    namespace=bindparam("k_namespace"),
    name=bindparam("k_name"),
    uid=bindparam("uid"),
    rv=bindparam("rv"),
    data=bindparam("data"),
)
_UPDATE_OBJECT = (
    update(t.objects)
    .where(
        t.objects.c.resource == bindparam("k_resource"),
        t.objects.c.namespace == bindparam("k_namespace"),
        t.objects.c.name == bindparam("k_name"),
        t.objects.c.rv == bindparam("expect"),
    )
    .values(rv=bindparam("rv"), data=bindparam("data"), uid=bindparam("uid"))
)
_DELETE_OBJECT = delete(t.objects).where(
    t.objects.c.resource == bindparam("k_resource"),
    t.objects.c.namespace == bindparam("k_namespace"),
    t.objects.c.name == bindparam("k_name"),
)
_INSERT_EVENT = insert(t.events).values(
    rv=bindparam("rv"),
    resource=bindparam("k_resource"),
    namespace=bindparam("k_namespace"),
    name=bindparam("k_name"),
    type=bindparam("type"),
    data=bindparam("data"),
)
_UPDATE_RV = update(t.counters).where(t.counters.c.key == "rv").values(value=bindparam("rv"))


class _Compiled:
    """A statement compiled once for the engine's dialect, run on the DBAPI cursor of a
    connection SQLAlchemy opened and whose transaction it commits: on SQLite the write path
    is a third cheaper without SQLAlchemy's per-execute bookkeeping (profile of a pod burst).
    """

    __slots__ = ("sql", "names")

    def __init__(self, stmt, dialect) -> None:
        compiled = stmt.compile(dialect=dialect)
        self.sql = str(compiled)
        self.names = list(compiled.positiontup or ())

    def run(self, cursor, row: dict) -> int:
        cursor.execute(self.sql, tuple(row[n] for n in self.names))
        return cursor.rowcount


def dumps(obj: dict) -> bytes:
    return jsoncodec.dumps_kept(obj)


_OPERATIONS = {"ADDED": "create", "MODIFIED": "update", "DELETED": "delete"}
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
# where a write's resourceVersion goes in its JSON on PostgreSQL, which gives the number
# (sharedlog.Log.commit): random, so no object's own text can hold it
_RV_MARK = f"mockkube-rv-{uuid.uuid4().hex}"


def storage_error(e: Exception, rt: ResourceType, typ: str) -> errors.APIError:
    """A write the database refused, as kube-apiserver answers when etcd fails: storage out
    of reach (another process holds SQLite's lock, PostgreSQL is down) is 500 ServerTimeout
    with a Retry-After (``storage.IsUnreachable``); anything else (SQLite's disk or database
    full) is 500 InternalError carrying the database's own message, as etcd's "mvcc:
    database space exceeded" reaches clients."""
    orig = getattr(e, "orig", e)  # SQLAlchemy's wraps the driver's; the SQLite fast path raises it bare
    code = getattr(orig, "sqlite_errorcode", None)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED) or (code is None and getattr(e, "connection_invalidated", False)):
        return errors.server_timeout(rt.plural, rt.group, _OPERATIONS[typ])
    if code is None and getattr(orig, "sqlstate", None) is None:  # no answer from the server at all
        return errors.server_timeout(rt.plural, rt.group, _OPERATIONS[typ])
    return errors.internal(str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__)


class Store:
    def __init__(self, engine: Engine, registry: Registry, event_window: int = EVENT_WINDOW) -> None:
        self.engine = engine
        self.registry = registry
        self.rv = 0
        self.hub = Hub()
        self._event_window = event_window
        self._caches: dict[str, ResourceCache] = {}
        self._logs: dict[str, EventLog] = {}
        self._as_json: set[str] = set()  # storage keys whose cache holds JSON alone
        self._interner = Interner()  # equal parts of stored objects' specs held once
        self._writes = 0
        self._published = 0
        self.lock = threading.RLock()
        # SQLite has one writer anyway: keep one connection for writes (no pool checkout per
        # write) and leave the rv counter row to start-up and close, since the event rows
        # carry every resourceVersion (load takes the larger of the two)
        self._sqlite = engine.dialect.name == "sqlite"
        # PostgreSQL: other API servers may write to the same database; resourceVersions come
        # from its sequence and the cache follows the shared event log (storage/sharedlog.py)
        self.shared = engine.dialect.name == "postgresql"
        self._listener: sharedlog.Listener | None = None
        self._dblog = sharedlog.Log(engine) if self.shared else None
        # events the listener received in notifications, by rv, until they are next in order
        self._carried: dict[int, sharedlog.Note] = {}
        self._closed = False
        # fn(storage key, type, object) for each change another replica made, once this one
        # applied it (the server keeps its served custom resources in step with it)
        self.on_remote: list[Callable[[str, str, dict], None]] = []
        # the events table serves a restart (watch resumption) and other replicas; an
        # ephemeral database (the default) has neither: an in-memory one's 50,000 rows held
        # ~150 MB that nobody read
        self._event_rows = not db.is_ephemeral(engine)
        self._wconn = None
        self._loaded = False
        self._recorded: list[tuple[str, str, bytes]] | None = None  # record_writes()
        # the server's Authorizer while it enforces one (--authorization-mode): in-process
        # components' writes and informers are authorized against it (storage/client.py)
        self.authorizer = None
        registry.subscribe(self._on_registry_change)

    def _on_registry_change(self, change: str, rt: ResourceType) -> None:
        """A resource served from now on gets an empty cache and event log (its objects
        are written through the usual path); a removed one keeps them until deleted."""
        if change == "removed":
            if not any(r.storage_key == rt.storage_key for r in self.registry.all()):
                self.hub.close_key(rt.storage_key)  # upstream ends the watches of a deleted CRD
            return
        if not self._loaded:
            return  # load() builds every cache
        with self.lock:
            if rt.storage_key not in self._caches:
                self._caches[rt.storage_key] = ResourceCache(rt.indexed())
                if rt.strategy.held_as_json:
                    self._as_json.add(rt.storage_key)
                self._logs[rt.storage_key] = EventLog(self._event_window, self.rv)

    # -- start-up ------------------------------------------------------------
    def stored_objects(self, storage_key: str) -> list[dict]:
        """The objects stored under ``storage_key``, read from the database before ``load``
        (the server re-adds custom resource types from stored CRDs first)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.objects.c.data).where(t.objects.c.resource == storage_key))
            return [json.loads(data) for (data,) in rows]

    def load(self) -> None:
        """Fill the cache and the event logs from the database."""
        self._new_caches()
        if self.shared:
            self._load_shared()
            return
        with self.engine.connect() as conn:
            row = conn.execute(select(t.counters.c.value).where(t.counters.c.key == "rv")).first()
            newest = conn.execute(select(t.events.c.rv).order_by(t.events.c.rv.desc()).limit(1)).first()
            self.rv = max(row[0] if row else 0, newest[0] if newest else 0)
            for res, data, rv in conn.execute(select(t.objects.c.resource, t.objects.c.data, t.objects.c.rv)):
                cache = self._caches.get(res)
                if cache is None:
                    continue  # a resource this version no longer serves
                cache.put(*self._held(res, Entry(json.loads(data), data.encode(), rv), keep_raw=False))
            loaded: dict[str, list[Event]] = {}
            q = select(t.events.c.resource, t.events.c.type, t.events.c.data, t.events.c.rv).order_by(t.events.c.rv)
            for res, typ, data, rv in conn.execute(q):
                loaded.setdefault(res, []).append(Event(typ, Entry(json.loads(data), data.encode(), rv), None))
        for key in self._caches:
            log = EventLog(self._event_window, self.rv)
            log.prepend_loaded(loaded.get(key, []), self.rv)
            self._logs[key] = log
        self._loaded = True

    def _new_caches(self) -> None:
        fields: dict[str, dict] = {}
        for rt in self.registry.all():
            fields.setdefault(rt.storage_key, {}).update(rt.indexed())
            if rt.strategy.held_as_json:
                self._as_json.add(rt.storage_key)
        self._caches = {key: ResourceCache(f) for key, f in fields.items()}

    def _held(self, key: str, entry: Entry, keep_raw: bool = True) -> tuple[Entry, dict]:
        """What the cache holds of ``entry`` (its JSON alone, packed, for a ``held_as_json``
        resource; else its dict, with its JSON while the watch history holds the event that
        wrote it: ``keep_raw``), with the object to index it by."""
        if key in self._as_json:
            return JsonEntry(self._caches[key].packer.pack(entry.raw), entry.rv, entry.key), entry.obj
        self._interner.share(entry.obj)  # before anyone reads it
        held = CachedEntry(entry.obj, entry.raw, entry.rv)
        if not keep_raw:
            held.forget_raw()
        return held, entry.obj

    def _load_shared(self) -> None:
        rv, objs, evs = sharedlog.snapshot(self.engine)
        self.rv = rv
        for res, data, orv in objs:
            cache = self._caches.get(res)
            if cache is not None:
                cache.put(*self._held(res, Entry(json.loads(data), data.encode(), orv), keep_raw=False))
        loaded: dict[str, list[Event]] = {}
        for erv, res, typ, data in evs:
            if typ != sharedlog.GAP and res in self._caches:
                loaded.setdefault(res, []).append(Event(typ, Entry(json.loads(data), data.encode(), erv), None))
        for key in self._caches:
            elog = EventLog(self._event_window, self.rv)
            elog.prepend_loaded(loaded.get(key, []), self.rv)
            self._logs[key] = elog
        self._loaded = True
        if self._listener is None:
            self._listener = sharedlog.Listener(self.engine, self._woken, self._dblog.backend_pid)
            self._listener.start()

    # -- the shared event log (PostgreSQL) ------------------------------------
    def _woken(self, payloads: list[str] | None) -> None:
        """Replicas committed (``payloads``: their notifications, sharedlog.Note) or a second
        went by (None). The events they carry are kept (``_carried``) and applied, with no
        query, once they follow on from what is applied; anything else (an rv missing
        between, an event too large to be carried) is read from the log."""
        if self._closed:
            return
        if payloads is None:
            self.sync()
            return
        newest = 0
        for n in sharedlog.notes(payloads):
            if n.rv > self.rv:  # ours are applied already
                newest = n.rv
                if n.carried:
                    # before taking the lock: a write of ours that waits for this rv finds it here
                    self._carried[n.rv] = n
        if not newest:
            return
        with self.lock:
            self._apply_carried(None)
            if newest > self.rv:
                self.sync()
            elif len(self._carried) > 1000:  # notes of our own writes, applied without them
                for rv in [rv for rv in self._carried if rv <= self.rv]:
                    self._carried.pop(rv, None)

    def _apply_carried(self, own: dict[int, tuple[str, str, Entry]] | None) -> None:
        """Apply the carried events (and ``own``, this replica's just-committed changes) that
        follow on from ``self.rv``: each was notified at its commit, so the next rv carried is
        the next event of the log."""
        while True:
            nxt = self.rv + 1
            mine = own.get(nxt) if own else None
            if mine is not None:
                self._carried.pop(nxt, None)
                self._apply(*mine, False)
            else:
                n = self._carried.pop(nxt, None)
                if n is None:
                    return
                res, typ, data = n.event()
                self._apply(res, typ, Entry(jsoncodec.loads(data), data.encode(), nxt), True)
            self.rv = nxt

    def sync(self) -> bool:
        """Apply what other replicas committed up to now (PostgreSQL; nothing on SQLite):
        a read after this sees every write acknowledged before it, as a quorum read from
        etcd does. True if anything new was applied."""
        if not self.shared:
            return False
        with self.lock:
            before = self.rv
            try:
                self._catch_up(None)
            except sharedlog.FellBehind as e:
                log.error("%s: reloading the cache; open watches end", e)
                self.hub.close_all()
                self._new_caches()
                self._load_shared()
            except Exception as e:
                if not sharedlog.is_unreachable(e):
                    raise
                # the database out of reach: reads answer from the cache as it is (writes are
                # refused with ServerTimeout meanwhile); the next sync catches up
                log.warning("cannot read the shared log: %s", str(e).splitlines()[0] if str(e) else e)
            return self.rv != before

    def _catch_up(self, own: dict[int, tuple[str, str, Entry]] | None) -> None:
        """Apply the log after ``self.rv`` in rv order, settling gaps (see sharedlog);
        ``own``: this replica's just-committed changes (rv -> key, type, entry), applied
        without parsing them again and, once they are, without reading further: the events
        before them that notifications carried first, then the log."""
        if own is not None:
            self._apply_carried(own)
            if self.rv >= max(own):
                return
        while True:
            rows = self._dblog.read_after(self.rv)
            if not rows:
                return
            expected = self.rv + 1
            for rv, res, typ, data in rows:
                if rv != expected:
                    self._dblog.fill_gap(expected, rv - 1)
                    break  # read again from the first unsettled rv
                if typ != sharedlog.GAP:
                    mine = own.get(rv) if own else None
                    if mine is not None:
                        self._apply(*mine, False)
                    else:
                        self._apply(res, typ, Entry(jsoncodec.loads(data), data.encode(), rv), True)
                self._carried.pop(rv, None)
                self.rv = rv
                expected += 1
            else:
                if len(rows) < 2000:
                    return

    def _apply(self, key: str, typ: str, entry: Entry, remote: bool) -> None:
        cache = self._caches.get(key)
        if cache is None:
            return  # a resource this replica does not serve (yet)
        ns, name = entry.key
        held = None
        if typ == "DELETED":
            old = cache.remove(ns, name)
        else:
            held, obj = self._held(key, entry)
            old = cache.put(held, obj)
        ev = Event(typ, entry, old.obj if old is not None else None)
        self._logs[key].append(ev, held, old)
        self.hub.publish(key, ev)
        if remote:
            for fn in self.on_remote:
                fn(key, typ, entry.obj)

    def _land(self, key: str, typ: str, entry: Entry) -> None:
        """This replica's committed write reaches its cache in rv order: at once when no
        rv before it is outstanding, else after those (carried by their notifications, else
        read from the log)."""
        if entry.rv == self.rv + 1:
            self._apply(key, typ, entry, False)
            self.rv = entry.rv
            if self._carried:
                self._carried.pop(entry.rv, None)  # its notification, if the listener kept it
        else:
            self._catch_up({entry.rv: (key, typ, entry)})

    def _commit_shared(self, rt: ResourceType, typ: str, obj: dict, expect_rv: int | None) -> Entry:
        meta = obj["metadata"]
        name = meta["name"]
        row = {
            "k_resource": rt.storage_key,
            "k_namespace": meta.get("namespace", "") if rt.namespaced else "",
            "k_name": name,
            "uid": meta.get("uid", ""),
            "expect": expect_rv,
            "type": typ,
        }
        # the JSON around a placeholder for the resourceVersion, which the database gives
        before = meta.get("resourceVersion")
        meta["resourceVersion"] = _RV_MARK
        done = canonical_order(obj)
        head, tail = dumps(done).decode().split(_RV_MARK, 1)
        try:
            rv = self._dblog.commit(typ, row, head, tail)
        except BaseException as e:
            if before is None:
                meta.pop("resourceVersion", None)
            else:
                meta["resourceVersion"] = before
            if not isinstance(e, sharedlog.CacheBehind):
                if sharedlog.is_unreachable(e):
                    raise storage_error(e, rt, typ) from e
                raise
            if typ == "ADDED":
                e.error = errors.already_exists(rt.plural, rt.group, name)
            else:
                e.error = errors.stale(rt.plural, rt.group, name)
            raise
        meta["resourceVersion"] = done["metadata"]["resourceVersion"] = str(rv)
        return Entry(done, f"{head}{rv}{tail}".encode(), rv)

    # -- reads ---------------------------------------------------------------
    def cache(self, rt: ResourceType) -> ResourceCache:
        return self._caches[rt.storage_key]

    def get(self, rt: ResourceType, namespace: str, name: str) -> Entry | None:
        return self._caches[rt.storage_key].get(namespace if rt.namespaced else "", name)

    def must_get(self, rt: ResourceType, namespace: str, name: str) -> Entry:
        e = self.get(rt, namespace, name)
        if e is None:
            raise errors.not_found(rt.plural, rt.group, name)
        return e

    def entries(self, rt: ResourceType, namespace: str | None = None) -> Iterable[Entry]:
        cache = self._caches[rt.storage_key]
        ns = namespace if rt.namespaced else None
        entries = cache.entries
        for k in cache.keys_from(ns, None):  # a copied slice: safe while another thread writes
            e = entries.get(k)
            if e is not None:
                yield e

    def objects(self, rt: ResourceType, namespace: str | None = None) -> list[dict]:
        return [e.obj for e in self.entries(rt, namespace)]

    # -- writes --------------------------------------------------------------
    def _commit(self, rt: ResourceType, typ: str, obj: dict, expect_rv: int | None) -> Entry:
        if self.shared:
            return self._commit_shared(rt, typ, obj, expect_rv)
        rv = self.rv + 1
        obj["metadata"]["resourceVersion"] = str(rv)
        obj = canonical_order(obj)
        meta = obj["metadata"]
        raw = dumps(obj)
        text = raw.decode()
        ns = meta.get("namespace", "") if rt.namespaced else ""
        name = meta["name"]
        key = rt.storage_key
        row = {
            "k_resource": key,
            "k_namespace": ns,
            "k_name": name,
            "rv": rv,
            "data": text,
            "uid": meta.get("uid", ""),
            "expect": expect_rv,
            "type": typ,
        }
        try:
            if self._sqlite:
                self._write_sqlite(rt, typ, row)
            else:
                self._write(rt, typ, row)
        except (OperationalError, sqlite3.OperationalError) as e:  # rolled back: nothing was written
            raise storage_error(e, rt, typ) from e
        self.rv = rv
        return Entry(obj, raw, rv)

    def _write_sqlite(self, rt: ResourceType, typ: str, row: dict) -> None:
        """One long-lived connection (SQLite has one writer anyway), statements pre-compiled."""
        if self._wconn is None:
            self._wconn = self.engine.connect()
            self._fast = {
                k: _Compiled(v, self.engine.dialect)
                for k, v in (
                    ("ADDED", _INSERT_OBJECT),
                    ("MODIFIED", _UPDATE_OBJECT),
                    ("DELETED", _DELETE_OBJECT),
                    ("event", _INSERT_EVENT),
                )
            }
        conn = self._wconn
        conn.begin()
        cursor = conn.connection.dbapi_connection.cursor()
        try:
            if self._fast[typ].run(cursor, row) != 1 and typ == "MODIFIED":
                raise errors.stale(rt.plural, rt.group, row["k_name"])
            if self._event_rows:
                self._fast["event"].run(cursor, row)
            self._writes += 1
            if self._writes % 5000 == 0:  # the counter row is also rebuilt from max(rv) on load
                self._save_rv(conn, row["rv"])
                conn.execute(delete(t.events).where(t.events.c.rv <= row["rv"] - _DB_EVENT_KEEP))
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            cursor.close()

    def _write(self, rt: ResourceType, typ: str, row: dict) -> None:
        with self.engine.connect() as conn:
            conn.begin()
            try:
                if typ == "ADDED":
                    conn.execute(_INSERT_OBJECT, row)
                elif typ == "MODIFIED":
                    if conn.execute(_UPDATE_OBJECT, row).rowcount != 1:
                        raise errors.stale(rt.plural, rt.group, row["k_name"])
                else:
                    conn.execute(_DELETE_OBJECT, row)
                conn.execute(_INSERT_EVENT, row)
                self._writes += 1
                self._save_rv(conn, row["rv"])
                if self._writes % 5000 == 0:
                    conn.execute(delete(t.events).where(t.events.c.rv <= row["rv"] - _DB_EVENT_KEEP))
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    @staticmethod
    def _save_rv(conn, rv: int) -> None:
        if conn.execute(_UPDATE_RV, {"rv": rv}).rowcount != 1:
            conn.execute(insert(t.counters).values(key="rv", value=rv))

    def create(self, rt: ResourceType, obj: dict) -> Entry:
        """Insert a new object (the caller has filled metadata); 409 if the name is taken."""
        with self.lock:
            return self._create(rt, obj)

    def _create(self, rt: ResourceType, obj: dict) -> Entry:
        meta = obj["metadata"]
        ns = meta.get("namespace", "") if rt.namespaced else ""
        cache = self._caches[rt.storage_key]
        if cache.get(ns, meta["name"]) is not None:
            raise errors.already_exists(rt.plural, rt.group, meta["name"])
        entry = self._commit(rt, "ADDED", obj, None)
        if self.shared:
            self._land(rt.storage_key, "ADDED", entry)
            return entry
        held, obj = self._held(rt.storage_key, entry)
        cache.put(held, obj)
        self._publish(rt, Event("ADDED", entry, None), held)
        return entry

    def update(self, rt: ResourceType, obj: dict, expect_rv: int) -> Entry:
        """Replace an object whose stored resourceVersion must still be ``expect_rv``."""
        with self.lock:
            return self._update(rt, obj, expect_rv)

    def _update(self, rt: ResourceType, obj: dict, expect_rv: int) -> Entry:
        meta = obj["metadata"]
        ns = meta.get("namespace", "") if rt.namespaced else ""
        cache = self._caches[rt.storage_key]
        old = cache.get(ns, meta["name"])
        if old is None:
            raise errors.not_found(rt.plural, rt.group, meta["name"])
        if old.rv != expect_rv:
            raise errors.stale(rt.plural, rt.group, meta["name"])
        entry = self._commit(rt, "MODIFIED", obj, expect_rv)
        if self.shared:
            self._land(rt.storage_key, "MODIFIED", entry)
            return entry
        held, obj = self._held(rt.storage_key, entry)
        cache.put(held, obj)
        self._publish(rt, Event("MODIFIED", entry, old.obj), held, old)
        return entry

    def delete(self, rt: ResourceType, namespace: str, name: str, expect_rv: int | None = None) -> Entry:
        """Remove an object; the DELETED event carries its last state with a new rv."""
        with self.lock:
            return self._delete(rt, namespace, name, expect_rv)

    def _delete(self, rt: ResourceType, namespace: str, name: str, expect_rv: int | None) -> Entry:
        ns = namespace if rt.namespaced else ""
        cache = self._caches[rt.storage_key]
        old = cache.get(ns, name)
        if old is None:
            raise errors.not_found(rt.plural, rt.group, name)
        if expect_rv is not None and old.rv != expect_rv:
            raise errors.stale(rt.plural, rt.group, name)
        # the last state with the delete's rv: all but its metadata shared with the last
        # state itself, which the DELETED event holds beside it as ``prev`` (a parsed copy cost
        # each deletion a second copy of the object for as long as the watch history held it:
        # the soak benchmark's server grew for minutes as TTL-deleted Events took the place of
        # created ones in the events' history)
        last = old.obj  # one read: an entry held as JSON decodes at each
        obj = {**last, "metadata": dict(last["metadata"])}
        entry = self._commit(rt, "DELETED", obj, old.rv)  # SQLite's single writer checks nothing
        if self.shared:
            self._land(rt.storage_key, "DELETED", entry)
            return entry
        cache.remove(ns, name)
        self._publish(rt, Event("DELETED", entry, last), None, old)
        return entry

    def _publish(self, rt: ResourceType, ev: Event, held: Entry | None, old: Entry | None = None) -> None:
        """``held``: the cache's entry of the version written; ``old``: of the one replaced."""
        self._logs[rt.storage_key].append(ev, held, old)
        if self._recorded is not None:
            self._recorded.append((rt.storage_key, ev.type, ev.entry.raw))
        self._published += 1
        if not self._published & 1023:  # quiet resources' logs are compacted too
            for log in self._logs.values():
                log.compact()
        self.hub.publish(rt.storage_key, ev)

    # -- recording and replaying writes (the bootstrap's template) -------------
    def record_writes(self) -> list[tuple[str, str, bytes]]:
        """From now on keep every committed write as (storage key, ADDED/MODIFIED/DELETED,
        the object's JSON) in the list returned, until ``stop_recording``."""
        self._recorded = []
        return self._recorded

    def stop_recording(self) -> None:
        self._recorded = None

    def replay(self, writes: Iterable[tuple[str, str, dict]]) -> None:
        """Commit ``writes`` (storage key, ADDED/MODIFIED/DELETED, object) in order through
        the store's own write path, as if each had been made again: the objects recorded from
        a bootstrap (``record_writes``), with their uids and times made fresh by the caller."""
        by_key: dict[str, ResourceType] = {}
        for rt in self.registry.all():
            by_key.setdefault(rt.storage_key, rt)
        with self.lock:
            for key, typ, obj in writes:
                rt = by_key[key]
                if typ == "ADDED":
                    self._create(rt, obj)
                    continue
                meta = obj["metadata"]
                ns = meta.get("namespace", "") if rt.namespaced else ""
                old = self._caches[key].get(ns, meta["name"])
                if old is None:
                    raise errors.not_found(rt.plural, rt.group, meta["name"])
                if typ == "MODIFIED":
                    self._update(rt, obj, old.rv)
                else:
                    self._delete(rt, ns, meta["name"], old.rv)

    # -- watch ---------------------------------------------------------------
    def watch(
        self, rt: ResourceType, namespace: str | None, from_rv: int | None, predicate: Predicate | None
    ) -> tuple[Watcher, list[tuple[str, Entry]]]:
        """Open a watcher; returns it with the backlog to send first.

        ``from_rv`` None means "from now" (the caller adds synthetic ADDED events);
        an rv before the retained window raises 410 Expired, one beyond the newest 504.
        """
        with self.lock:
            w, events = self._watch(rt, namespace, from_rv, predicate)
        # outside the lock: a resumed watch's backlog is decoded from the log's JSON
        backlog: list[tuple[str, Entry]] = []
        for ev in events:
            out = w.translate(ev)
            if out is not None:
                backlog.append(out)
        return w, backlog

    def _watch(
        self, rt: ResourceType, namespace: str | None, from_rv: int | None, predicate: Predicate | None
    ) -> tuple[Watcher, list[Event]]:
        ns = namespace if rt.namespaced else None
        key = rt.storage_key
        events: list[Event] = []
        if from_rv is not None and from_rv > self.rv:
            self.sync()  # a resourceVersion another replica gave out
        if from_rv is not None:
            if from_rv > self.rv:
                raise errors.too_large_rv(from_rv, self.rv)
            held = self._logs[key].since(from_rv, predicate is not None)
            if held is None:
                raise errors.too_old(from_rv, self._logs[key].window_start + 1)
            events = held
        return self.hub.subscribe(key, ns, predicate), events

    def newest_rvs(self) -> dict[str, int]:
        """Per storage key, the rv of its newest change (what a follower must have seen)."""
        with self.lock:
            return {key: log.newest for key, log in self._logs.items()}

    def oldest_rv(self, rt: ResourceType) -> int:
        return self._logs[rt.storage_key].window_start + 1

    def close(self) -> None:
        self._closed = True
        if self._listener is not None:
            self._listener.stop()
        if self._dblog is not None:
            with self.lock:
                self._dblog.close()
        self.hub.close_all()
        with self.lock:
            if self._wconn is not None:
                try:
                    with self._wconn.begin():
                        self._save_rv(self._wconn, self.rv)
                finally:
                    self._wconn.close()
                    self._wconn = None
        db.release(self.engine)
