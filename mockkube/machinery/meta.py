"""ObjectMeta bookkeeping shared by every resource: uid, timestamps, generation, names."""

from __future__ import annotations

import os
import random
import time
from datetime import datetime, timezone
from typing import Callable

Clock = Callable[[], float]


_last_second: tuple[int, str] = (-1, "")  # one write after another mostly asks for the same second


def rfc3339(ts: float) -> str:
    """Second-precision UTC timestamp as metav1.Time serialises it."""
    global _last_second
    sec = int(ts)
    last = _last_second  # one read: another thread may replace it (the pair stays consistent)
    if last[0] == sec:
        return last[1]
    text = datetime.fromtimestamp(sec, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_second = (sec, text)
    return text


def rfc3339_micro(ts: float) -> str:
    """metav1.MicroTime: six fractional digits."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> float:
    """Parse an RFC3339 timestamp (second or sub-second precision) to epoch seconds."""
    v = value.replace("Z", "+00:00")
    return datetime.fromisoformat(v).timestamp()


# object uids need to be unique, not secret: a generator seeded once from the OS, instead of
# a getrandom system call per object (uuid4), which also hands the GIL to the other thread
_uid_random = random.Random(int.from_bytes(os.urandom(32), "big"))


_UID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UID_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


def new_uid() -> str:
    """A random (version 4) UUID, as kube-apiserver gives every object."""
    h = "%032x" % (_uid_random.getrandbits(128) & _UID_CLEAR | _UID_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver names.SimpleNameGenerator


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """``base`` + 5 random characters, with base truncated to fit 63 characters."""
    r = rng or random
    if len(base) > 58:
        base = base[:58]
    return base + "".join(r.choice(_GEN_ALPHABET) for _ in range(5))


def clone(obj):
    """Deep copy of JSON-shaped data (dicts, lists, scalars): several times faster than
    copy.deepcopy, which matters on the write path where every object is copied."""
    if isinstance(obj, dict):
        return {k: clone(v) if isinstance(v, (dict, list)) else v for k, v in obj.items()}
    if isinstance(obj, list):
        return [clone(v) if isinstance(v, (dict, list)) else v for v in obj]
    return obj


def spec_changed(new: dict, old: dict) -> bool:
    """True when anything outside metadata and status differs (generation semantics)."""
    keys = (set(new) | set(old)) - {"metadata", "status", "apiVersion", "kind"}
    return any(new.get(k) != old.get(k) for k in keys)


def name_of(obj: dict) -> str:
    return obj.get("metadata", {}).get("name", "")


def namespace_of(obj: dict) -> str:
    return obj.get("metadata", {}).get("namespace", "")


def wall_clock() -> float:
    return time.time()


_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


def canonical_order(obj: dict) -> dict:
    """Key order as Go's encoder writes API objects (apiVersion, kind, metadata first;
    ObjectMeta in struct order), so output reads like a real server's."""
    out = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
    m = obj.get("metadata")
    if isinstance(m, dict):
        om = {k: m[k] for k in _META_ORDER if k in m}
        for k, v in m.items():
            if k not in om:
                om[k] = v
        out["metadata"] = om
    for k, v in obj.items():
        if k not in out:
            out[k] = v
    return out
