"""The event log on PostgreSQL, shared by several API servers (replicas) of one cluster.

Every replica keeps its own cache and watch history (``Store``); the ``events`` table is
the one order they all follow, as kube-apiserver replicas follow etcd's revisions:

- A write is one call of ``mockkube_commit`` (migrations/versions/0003), one round trip:
  it takes the resourceVersion from the sequence ``mockkube_rv`` and puts it in the object's
  JSON, then ``mockkube_write`` (0002) inserts its event row first, then the object
  row (checked against the resourceVersion the write read, so two replicas updating one
  object: one commits, the other gets ``CacheBehind``), and ``NOTIFY``s the other replicas,
  all in one transaction.
- A replica applies the log strictly in rv order (``Feed.catch_up``). Sequence numbers are
  taken in order but committed in any order, and a write that fails leaves its number
  unused, so the log can show rv 7 while rv 6 is missing. The reader then inserts a ``GAP``
  row at 6 (``ON CONFLICT DO NOTHING``): if 6's transaction is still running, the insert
  waits for it on the primary key and finds its row once it commits; if it never commits,
  the GAP row takes its place for every replica. A writer that finds its number taken by
  a GAP row (it was slow between ``nextval`` and its insert) writes again with a new one,
  so what a client was told committed is always in the log, exactly once.
- ``Listener`` hands the replica each batch of notifications but those its own connection
  sent (the writer applied those), and ``None`` once a second in case one was missed, or
  PostgreSQL restarted. A notification carries its event
  (migrations/versions/0004: rv, storage key, type and JSON, newline-separated) when it fits
  PostgreSQL's payload, else the rv alone (``Note``); the replica applies a carried event
  when it is the next after what it applied (a notification is sent at commit, so that event
  is committed and nothing is before it) and otherwise catches up from the log.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from sqlalchemy import Engine, text

log = logging.getLogger("mockkube.sharedlog")

CHANNEL = "mockkube_events"
GAP = "GAP"
KEEP = 50_000  # event rows kept in the table: a replica further behind reloads everything

_FILL = (
    "INSERT INTO events (rv, resource, namespace, name, type, data) "
    f"SELECT s, '', '', '', '{GAP}', '' FROM generate_series(%s::bigint, %s::bigint) s "
    "ON CONFLICT (rv) DO NOTHING"
)
_READ = "SELECT rv, resource, type, data FROM events WHERE rv > %s AND rv <= %s ORDER BY rv LIMIT 2000"
_NO_END = 2**62
CHANGED = "MK409"  # mockkube_write's SQLSTATE: the stored object is not the one the write read


class CacheBehind(Exception):
    """The database disagreed with this replica's cache (another replica wrote first): the
    verb catches up from the log and runs again, as upstream's GuaranteedUpdate retries."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error  # what the client gets if retrying does not help


class FellBehind(Exception):
    """The events this replica has not applied were pruned from the table."""


def conninfo(engine: Engine) -> str:
    """The engine's database as a libpq connection string (for psycopg itself)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def is_unreachable(e: BaseException) -> bool:
    """Whether ``e`` is the database out of reach or gone mid-call (psycopg's OperationalError)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - PostgreSQL needs psycopg
        return False
    return isinstance(e, psycopg.OperationalError)


class Log:
    """This replica's connection for writes and for reading the log: one, in autocommit,
    used under the store's lock (writes and catch-ups are serialized there anyway), so a
    write is one round trip (``mockkube_commit``) with no pool in between.
    A broken connection (PostgreSQL restarted) is opened again at the next call."""

    def __init__(self, engine: Engine) -> None:
        self._info = conninfo(engine)
        self._conn = None

    def _c(self):
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self._info, autocommit=True, connect_timeout=5)
        return self._conn

    def _run(self, fn: Callable):
        import psycopg

        try:
            return fn(self._c())
        except psycopg.OperationalError:
            self.close()  # the next call connects again
            raise

    def backend_pid(self) -> int | None:
        """The PostgreSQL backend this replica writes through (a notification names its
        sender's): None while not connected."""
        c = self._conn
        return None if c is None or c.closed else c.info.backend_pid

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def commit(self, typ: str, row: dict, head: str, tail: str) -> int:
        """Write one change in one round trip; returns its rv. ``row`` carries the keys, uid
        and ``expect``; the object's JSON is ``head``, its resourceVersion, ``tail`` (the
        database takes the number from the sequence and joins the three: ``mockkube_commit``,
        migrations/versions/0003).

        Raises ``CacheBehind`` when the name is taken (create) or the stored object is not
        the one the write read (update, delete)."""
        import psycopg

        args = (row["k_resource"], row["k_namespace"], row["k_name"], typ, head, tail, row["uid"], row["expect"])
        while True:
            try:
                rv = self._run(
                    lambda c: c.execute("SELECT mockkube_commit(%s, %s, %s, %s, %s, %s, %s, %s)", args).fetchone()[0]
                )
            except psycopg.errors.UniqueViolation as e:
                if e.diag.constraint_name == "events_pkey":
                    continue  # a reader settled our rv as a gap before we wrote it: take another
                raise CacheBehind(e) from None
            except psycopg.Error as e:
                if e.sqlstate == CHANGED:
                    raise CacheBehind(e) from None
                raise
            if rv % 5000 == 0:
                self._run(lambda c: _prune(c, rv))
            return rv

    def read_after(self, after: int) -> list[tuple[int, str, str, str]]:
        """Committed events after ``after`` in rv order, at most 2,000 (rv, resource, type, data)."""
        # bounded on both sides: with ``rv > $1`` alone the planner, without statistics for
        # the table or in the generic plan it keeps for the prepared statement, takes a third
        # of the table to match and reads all of it (a sequential scan of up to 50,000 events,
        # at every catch-up: most of PostgreSQL's CPU in the multi-process set); a range of two
        # parameters it takes to be narrow, and reads the primary key's index
        return self._run(lambda c: c.execute(_READ, (after, _NO_END)).fetchall())

    def fill_gap(self, lo: int, hi: int) -> None:
        """Settle the unused rvs ``lo..hi``: each becomes a GAP row unless its writer commits
        first (the insert waits for a running writer on the primary key)."""

        def fill(c) -> None:
            pruned = c.execute("SELECT value FROM counters WHERE key = 'pruned'").fetchone()
            if pruned is not None and lo <= pruned[0]:
                raise FellBehind(f"events up to rv {pruned[0]} were pruned; this replica had applied {lo - 1}")
            c.execute(_FILL, (lo, hi))

        self._run(fill)


def _prune(c, rv: int) -> None:
    horizon = rv - KEEP
    if horizon <= 0:
        return
    with c.transaction():
        c.execute("DELETE FROM events WHERE rv <= %s", (horizon,))
        if c.execute("UPDATE counters SET value = %s WHERE key = 'pruned'", (horizon,)).rowcount != 1:
            c.execute("INSERT INTO counters (key, value) VALUES ('pruned', %s)", (horizon,))


def snapshot(engine: Engine) -> tuple[int, list[tuple[str, str, int]], list[tuple[int, str, str, str]]]:
    """(rv, objects, events) as one consistent state at start-up: every rv up to ``rv`` is
    committed or a GAP (missing ones are settled first), objects are as of ``rv``."""
    while True:
        with engine.connect() as conn:
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                lo, hi = conn.execute(text("SELECT min(rv), max(rv) FROM events")).one()
                if hi is None:
                    newest = conn.execute(text("SELECT last_value, is_called FROM mockkube_rv")).one()
                    rv = newest[0] if newest[1] else newest[0] - 1
                    objs = [tuple(r) for r in conn.execute(text("SELECT resource, data, rv FROM objects"))]
                    return rv, objs, []  # type: ignore[return-value]
                missing = conn.execute(
                    text(
                        "SELECT s FROM generate_series(CAST(:lo AS BIGINT), CAST(:hi AS BIGINT)) s "
                        "WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.rv = s) LIMIT 1"
                    ),
                    {"lo": lo, "hi": hi},
                ).first()
                if missing is None:
                    objs = [tuple(r) for r in conn.execute(text("SELECT resource, data, rv FROM objects"))]
                    evs = [
                        tuple(r) for r in conn.execute(text("SELECT rv, resource, type, data FROM events ORDER BY rv"))
                    ]
                    return hi, objs, evs  # type: ignore[return-value]
        log_ = Log(engine)
        try:
            log_.fill_gap(missing[0], hi)
        finally:
            log_.close()


class Note:
    """One notification: the rv committed and, when the payload carried it, its event (split
    out only when applied: most notifications a replica gets are of its own writes, which it
    has applied already)."""

    __slots__ = ("rv", "_payload", "_at")

    def __init__(self, payload: str) -> None:
        self._at = payload.find("\n")
        self.rv = int(payload if self._at < 0 else payload[: self._at])
        self._payload = payload

    @property
    def carried(self) -> bool:
        return self._at >= 0

    def event(self) -> tuple[str, str, str]:
        """(storage key, type, JSON) of a carried event."""
        resource, typ, data = self._payload[self._at + 1 :].split("\n", 2)
        return resource, typ, data


def notes(payloads: list[str]) -> list[Note]:
    """The notifications of a batch in rv order (they arrive in commit order); payloads that
    are not ours are left out (the periodic catch-up reads whatever they stood for)."""
    out = []
    for p in payloads:
        try:
            out.append(Note(p))
        except ValueError:
            continue
    out.sort(key=lambda n: n.rv)
    return out


class Listener:
    """A thread that LISTENs on the replicas' channel and calls ``wake(payloads)`` with each
    batch of notifications received together.

    Once a second without a notification it calls ``wake(None)`` (catch up anyway: a
    notification may have been lost while PostgreSQL restarted); a broken connection is
    opened again with back-off."""

    def __init__(
        self, engine: Engine, wake: Callable[[list[str] | None], None], own: Callable[[], int | None] = lambda: None
    ) -> None:
        self._url = conninfo(engine)
        self._wake = wake
        self._own = own  # the backend pid this replica writes through: its own writes it has applied
        self._stop = threading.Event()
        self._conn = None
        self.thread = threading.Thread(target=self._run, name="mockkube-listen", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        import psycopg

        delay = 0.1
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    delay = 0.1
                    self._wake(None)  # whatever was committed while not listening
                    while not self._stop.is_set():
                        # stop_after=1 still yields every notification that came in the same read
                        batch = list(conn.notifies(timeout=1.0, stop_after=1))
                        if not batch:
                            self._wake(None)
                            continue
                        # this replica's own writes are applied by the writer (Store._land): not
                        # parsed, nor waited for on the store's lock, here
                        own = self._own()
                        payloads = [n.payload for n in batch if n.pid != own]
                        if payloads:
                            self._wake(payloads)
            except (psycopg.Error, OSError) as e:
                if self._stop.is_set():
                    return
                log.warning("listening for other replicas' writes: %s; again in %.1fs", e, delay)
                self._stop.wait(delay)
                delay = min(delay * 2, 2.0)
            except Exception:  # pragma: no cover - keep listening whatever a catch-up raised
                log.exception("catching up from the shared event log failed")
                self._stop.wait(delay)
