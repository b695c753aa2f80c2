"""The in-memory object cache (mockkube's watch cache): every read is served from here.

Entries keep the object dict and its serialised JSON, so a GET returns bytes without
encoding anything. Keys stay sorted by (namespace, name) for paged lists, and selectable
fields (pods' spec.nodeName, resourceslices' spec.driver...) are indexed.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterable

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


class RawEntry(Entry):
    """An entry held as its JSON alone (the watch history's older versions), the dict decoded
    when first read: a 3.5 KB pod is 16 KB of dicts and strings."""

    __slots__ = ("_obj",)
    _obj: dict | None

    def __init__(self, raw: bytes, rv: int) -> None:
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "rv", rv)
        object.__setattr__(self, "_obj", None)

    @property
    def obj(self) -> dict:
        got = self._obj
        if got is None:
            got = jsoncodec.loads(self.raw)
            object.__setattr__(self, "_obj", got)
        return got


class JsonEntry(Entry):
    """An entry held as its JSON alone, decoded at each read and kept nowhere (the cache's
    objects of a ``held_as_json`` resource): callers read it as any entry, each read costs a
    decode."""

    __slots__ = ("_key",)
    _key: Key

    def __init__(self, raw: bytes, rv: int, key: Key) -> None:
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "rv", rv)
        object.__setattr__(self, "_key", key)

    @property
    def obj(self) -> dict:
        return jsoncodec.loads(self.raw)

    @property
    def key(self) -> Key:
        return self._key


class ResourceCache:
    """All objects of one storage key."""

    def __init__(self, indexed_fields: dict[str, Callable[[dict], str]] | None = None) -> None:
        self.entries: dict[Key, Entry] = {}
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
