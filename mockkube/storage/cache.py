"""The in-memory object cache (mockkube's watch cache): every read is served from here.

Entries keep the object dict and its serialised JSON, so a GET returns bytes without
encoding anything. Keys stay sorted by (namespace, name) for paged lists, and selectable
fields (pods' spec.nodeName, resourceslices' spec.driver...) are indexed.
"""

from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass
from typing import Callable, Iterable, Union

import orjson

from mockkube.machinery import jsoncodec

Key = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True, slots=True)
class Entry:
    obj: dict  # shared: callers must treat it as read-only (copy before changing)
    raw: bytes  # compact JSON of obj
    rv: int

    @property
    def key(self) -> Key:
        m = self.obj["metadata"]
        return (m.get("namespace", ""), m["name"])


class Packed:
    """JSON bytes deflated against a dictionary of objects like it (``Packer``): a superseded
    3.5 KB pod version is ~150 bytes, a 1 KB Event ~180; ``unpack`` gives the bytes back."""

    __slots__ = ("data", "zdict")

    def __init__(self, data: bytes, zdict: bytes) -> None:
        self.data = data
        self.zdict = zdict

    def unpack(self) -> bytes:
        return zlib.decompressobj(_WBITS, self.zdict).decompress(self.data)


Held = Union[bytes, Packed]
# raw deflate with a 16 KiB window (a dictionary of one whole object of most kinds) and a
# small hash table: the compressor's state stays far below malloc's mmap threshold, which
# memLevel 9 crossed (70 µs a pack instead of 5)
_WBITS = -14
_MEM_LEVEL = 6
_ZDICT_MAX = 1 << 14
_LEVEL = 1


def unpacked(held: Held) -> bytes:
    return held if type(held) is bytes else held.unpack()  # type: ignore[union-attr]


class Packer:
    """Deflates the JSON of one resource's objects against a dictionary: an object it packed
    that compressed badly (to over a third), so the dictionary follows what the resource
    holds (Events of one kind, pods in one phase) and most objects pack to a tenth or less.
    Each ``Packed`` keeps the dictionary it was made with, so a replaced one lives on while
    objects packed with it do: at most one a ``EVERY`` packs."""

    __slots__ = ("_zdict", "_since")
    EVERY = 64  # packs at least between two dictionaries: each keeps an object's JSON alive

    def __init__(self) -> None:
        self._zdict = b""
        self._since = 0

    def pack(self, raw: bytes) -> Packed:
        zdict = self._zdict
        if zdict:
            c = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, zdict)
        else:
            c = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL)
        data = c.compress(raw) + c.flush()
        self._since += 1
        if len(data) * 3 > len(raw) and (not zdict or self._since >= self.EVERY):
            self._zdict = raw[-_ZDICT_MAX:]
            self._since = 0
        return Packed(data, zdict)


class Interner:
    """Equal parts of different objects held once: the dict and list values of an object's
    ``spec`` and ``status`` (pods made from one template: the same containers, tolerations,
    security context; pods started in the same second: the same conditions; on one node: the
    same host IPs) become the one instance first seen, keyed by their JSON. Stored objects
    are read-only, so sharing is safe as FieldsV1 sharing is (``machinery/fieldset.py``);
    the table is bounded (least recently used out) and costs a few µs a write."""

    __slots__ = ("size", "_table")
    PARTS = ("spec", "status")

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._table: dict[bytes, object] = {}

    def share(self, obj: dict) -> None:
        """Replace the parts of ``obj``'s spec and status by equal ones held already: new spec
        and status dicts (those given may be another version's), set in ``obj``, which must be
        a dict nobody else has seen yet (the store's copy of a write)."""
        table = self._table
        for part in self.PARTS:
            within = obj.get(part)
            if type(within) is not dict:
                continue
            out = None
            for k, v in within.items():
                if type(v) is dict or type(v) is list:
                    try:
                        key = orjson.dumps(v)
                    except TypeError:
                        continue
                    got = table.pop(key, None)
                    if got is None:
                        got = v
                        if len(table) >= self.size:
                            del table[next(iter(table))]
                    table[key] = got
                    if got is not v:
                        if out is None:
                            out = dict(within)
                        out[k] = got
            if out is not None:
                obj[part] = out


class RawEntry(Entry):
    """An entry held as its JSON alone (what the watch history hands a resumed watch), the
    dict decoded when first read: a 3.5 KB pod is 16 KB of dicts and strings."""

    __slots__ = ("_obj", "_held")
    _obj: dict | None
    _held: Held

    def __init__(self, raw: Held, rv: int) -> None:
        object.__setattr__(self, "_held", raw)
        object.__setattr__(self, "rv", rv)
        object.__setattr__(self, "_obj", None)

    @property  # type: ignore[misc]
    def raw(self) -> bytes:
        return unpacked(self._held)

    @property
    def held(self) -> Held:
        return self._held

    @property  # type: ignore[misc]
    def obj(self) -> dict:
        got = self._obj
        if got is None:
            got = jsoncodec.loads(self.raw)
            object.__setattr__(self, "_obj", got)
        return got


class JsonEntry(Entry):
    """An entry held as its JSON alone, decoded at each read and kept nowhere (the cache's
    objects of a ``held_as_json`` resource, packed): callers read it as any entry, each read
    costs an unpack and a decode."""

    __slots__ = ("_key", "_held")
    _key: Key
    _held: Held

    def __init__(self, raw: Held, rv: int, key: Key) -> None:
        object.__setattr__(self, "_held", raw)
        object.__setattr__(self, "rv", rv)
        object.__setattr__(self, "_key", key)

    @property  # type: ignore[misc]
    def raw(self) -> bytes:
        return unpacked(self._held)

    @property
    def held(self) -> Held:
        return self._held

    @property  # type: ignore[misc]
    def obj(self) -> dict:
        return jsoncodec.loads(self.raw)

    @property
    def key(self) -> Key:
        return self._key

    @property
    def current(self) -> bool:
        return False  # the log hands out a decoded view of it


class CachedEntry(Entry):
    """The cache's entry of an object held as its dict (read by every in-process component),
    its JSON kept only while the watch history holds the event that wrote it (the same bytes
    then): out of the window a read encodes the dict again (orjson: ~2 µs for a pod), the
    exact bytes written (checked when the JSON is let go), since the dict is read-only. Once a newer version replaces it
    (``supersede``), only the watch history holds it: it keeps its JSON, packed, and lets
    the dict go."""

    __slots__ = ("_obj", "_held")
    _obj: dict | None
    _held: Held | None

    def __init__(self, obj: dict, raw: bytes | None, rv: int) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_held", raw)
        object.__setattr__(self, "rv", rv)

    @property  # type: ignore[misc]
    def obj(self) -> dict:
        got = self._obj
        if got is None:  # superseded: read from the watch history
            return jsoncodec.loads(unpacked(self._held))  # type: ignore[arg-type]
        return got

    @property  # type: ignore[misc]
    def raw(self) -> bytes:
        held = self._held
        if held is None:
            got = self._obj
            if got is not None:
                return jsoncodec.redumps(got)
            held = self._held  # superseded meanwhile (it sets the JSON before dropping the dict)
        return unpacked(held)  # type: ignore[arg-type]

    @property
    def current(self) -> bool:
        """Still the cache's version (its dict held)."""
        return self._obj is not None

    @property
    def held(self) -> Held:
        held = self._held
        return self.raw if held is None else held

    def supersede(self, packer: Packer | None) -> None:
        """A newer version took its place: keep the JSON (packed) for the watch history, drop
        the dict. The store's writer calls this, under its lock."""
        got = self._obj
        if got is None:
            return
        held = self._held
        raw = jsoncodec.dumps_kept(got) if held is None else held
        object.__setattr__(self, "_held", packer.pack(raw) if packer is not None and type(raw) is bytes else raw)
        object.__setattr__(self, "_obj", None)

    def forget_raw(self) -> None:
        """Its event left the watch history: while it is current, reads encode the dict (where
        orjson alone writes its bytes: nearly always)."""
        got, held = self._obj, self._held
        if got is not None and type(held) is bytes and jsoncodec.is_redumpable(got, held):
            object.__setattr__(self, "_held", None)


class ResourceCache:
    """All objects of one storage key."""

    def __init__(self, indexed_fields: dict[str, Callable[[dict], str]] | None = None) -> None:
        self.entries: dict[Key, Entry] = {}
        self.packer = Packer()  # the JSON of a held_as_json resource's objects
        self.version = 0  # bumped on every change: readers keep derived views keyed on it
        self._keys: list[Key] = []
        # one index per function: a field that another version names differently (events.k8s.io's
        # regarding.name is core/v1's involvedObject.name) shares its index
        self._fields: dict[str, Callable[[dict], str]] = {}
        self._alias: dict[str, str] = {}
        by_fn: dict[Callable[[dict], str], str] = {}
        for f, fn in (indexed_fields or {}).items():
            self._alias[f] = by_fn.setdefault(fn, f)
            if by_fn[fn] == f:
                self._fields[f] = fn
        self._index: dict[str, dict[str, set[Key]]] = {f: {} for f in self._fields}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, namespace: str, name: str) -> Entry | None:
        return self.entries.get((namespace, name))

    def put(self, entry: Entry, obj: dict | None = None) -> Entry | None:
        """``obj``: the entry's object where the caller has it (a ``JsonEntry`` decodes)."""
        key = entry.key
        self.version += 1
        old = self.entries.get(key)
        if old is None:
            bisect.insort(self._keys, key)
        elif self._fields:
            self._unindex(key, old.obj)
        self.entries[key] = entry
        if self._fields:
            self._reindex(key, entry.obj if obj is None else obj)
        return old

    def remove(self, namespace: str, name: str) -> Entry | None:
        key = (namespace, name)
        old = self.entries.pop(key, None)
        if old is not None:
            self.version += 1
            i = bisect.bisect_left(self._keys, key)
            if i < len(self._keys) and self._keys[i] == key:
                del self._keys[i]
            if self._fields:
                self._unindex(key, old.obj)
        return old

    def _reindex(self, key: Key, obj: dict) -> None:
        for f, fn in self._fields.items():
            self._index[f].setdefault(fn(obj), set()).add(key)

    def _unindex(self, key: Key, obj: dict) -> None:
        for f, fn in self._fields.items():
            bucket = self._index[f].get(fn(obj))
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self._index[f][fn(obj)]

    def indexed(self, field: str) -> bool:
        return field in self._alias

    def keys_from(self, namespace: str | None, after: Key | None) -> Iterable[Key]:
        """Sorted keys (optionally in one namespace), strictly after ``after``."""
        keys = self._keys
        if namespace is not None:
            lo = bisect.bisect_left(keys, (namespace, ""))
            hi = bisect.bisect_left(keys, (namespace + "\x00", ""))
        else:
            lo, hi = 0, len(keys)
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        return keys[lo:hi]

    def keys_with(self, field: str, value: str, namespace: str | None) -> list[Key]:
        """Sorted keys whose indexed ``field`` equals ``value``."""
        keys = list(self._index[self._alias[field]].get(value, ()))  # one C-level copy: safe against a writer thread
        if namespace is not None:
            keys = [k for k in keys if k[0] == namespace]
        return sorted(keys)
