"""The bootstrap as a template: what a fresh kube-apiserver creates (system namespaces, the
``kubernetes`` Service, the RBAC policy, APF configuration, ... about 225 objects) is the
same at every start with the same code and options, apart from uids and times. Each object
costs ~0.15 ms through admission, validation and managedFields, so the first start records
the writes it made (``Store.record_writes``) in a cache file keyed by everything that
decides them, and later starts commit them again (``Store.replay``) with fresh uids and the
current time: the same objects, resourceVersions and watch events, at a fraction of the
cost (tests/unit/test_bootstrap_template.py compares both field by field).

The key covers mockkube's version, every file of the package and the OpenAPI schemas (path,
size, mtime: an edit in a checkout makes a new template), the feature gates and the served resources. The cache
is ``$MOCKKUBE_CACHE_DIR/bootstrap`` (default ``~/.cache/mockkube``);
``MOCKKUBE_BOOTSTRAP_TEMPLATE=off`` bootstraps object by object every time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from mockkube.machinery import jsoncodec
from mockkube.machinery.meta import new_uid
from mockkube.machinery.version import MOCKKUBE_VERSION

log = logging.getLogger("mockkube")

FORMAT = 1
KEEP = 16  # templates kept in the cache (a checkout makes one per edit), newest first
_UID = re.compile(r'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')
_TIME = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"')

_memo: dict[str, dict] = {}  # key -> template, for processes that start many clusters (pytest)
_memo_lock = threading.Lock()
_code: str | None = None


def enabled() -> bool:
    return os.environ.get("MOCKKUBE_BOOTSTRAP_TEMPLATE", "").lower() not in ("off", "0", "false", "no")


def cache_dir() -> Path:
    base = os.environ.get("MOCKKUBE_CACHE_DIR")
    if base:
        return Path(base) / "bootstrap"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mockkube" / "bootstrap"


def code_fingerprint() -> str:
    """Path, size and mtime of every file of the package and of the OpenAPI schemas (in a
    checkout they live beside it), once a process."""
    global _code
    if _code is None:
        root = Path(__file__).resolve().parent.parent
        seen: list[str] = []

        def walk(d: str) -> None:
            with os.scandir(d) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        if e.name != "__pycache__":
                            walk(e.path)
                    elif not e.name.endswith((".pyc", ".pyo")):
                        st = e.stat()
                        seen.append(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}")

        walk(str(root))
        from mockkube.machinery.schema import openapi_dir

        defs = openapi_dir() / "definitions.json"  # the schemas validation and defaulting read
        st = defs.stat()
        seen.append(f"{defs}\0{st.st_size}\0{st.st_mtime_ns}")
        seen.sort()
        _code = hashlib.sha256("\n".join(seen).encode()).hexdigest()
    return _code


def key(gates: Any, registry: Any) -> str:
    """What decides the bootstrap's writes: the code, the gates, the served resources."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}\0{MOCKKUBE_VERSION}\0{code_fingerprint()}\0".encode())
    h.update(json.dumps(sorted(gates.items()) if gates is not None else None).encode())
    served = sorted((rt.group, rt.version, rt.plural, rt.storage_key, rt.namespaced) for rt in registry.all())
    h.update(json.dumps(served).encode())
    return h.hexdigest()[:32]


def make(writes: list[tuple[str, str, bytes]], first: str, last: str) -> dict:
    """A template from the writes a bootstrap recorded between the times ``first`` and
    ``last`` (RFC 3339, seconds): which uids and which of those times each write holds."""
    texts = [raw.decode() for _, _, raw in writes]
    uids: dict[str, int] = {}
    for text in texts:  # the objects' own uids (and so the references to them)
        u = json.loads(text)["metadata"].get("uid")
        if u:
            uids.setdefault(u, len(uids))
    times: set[str] = set()
    out = []
    for (storage_key, typ, _), text in zip(writes, texts):
        idx = []
        for u in _UID.findall(text):
            i = uids.get(u)
            if i is not None and i not in idx:
                idx.append(i)
        stamps = sorted({t for t in _TIME.findall(text) if first <= t <= last})
        times.update(stamps)
        out.append([storage_key, typ, text, idx, bool(stamps)])
    return {"format": FORMAT, "uids": list(uids), "times": sorted(times), "writes": out}


def fresh(template: dict, now: str, uid: Callable[[], str] = new_uid) -> Iterator[tuple[str, str, dict]]:
    """The template's writes with fresh uids and ``now`` for the bootstrap's times."""
    old = template["uids"]
    new = [uid() for _ in old]
    times = template["times"]
    for storage_key, typ, text, idx, timed in template["writes"]:
        for i in idx:
            text = text.replace(old[i], new[i])
        if timed:
            for t in times:
                text = text.replace(t, now)
        yield storage_key, typ, jsoncodec.loads(text)


def load(k: str) -> dict | None:
    with _memo_lock:
        got = _memo.get(k)
    if got is not None:
        return got
    try:
        with open(cache_dir() / f"{k}.json", "rb") as f:
            got = jsoncodec.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(got, dict) or got.get("format") != FORMAT:
        return None
    with _memo_lock:
        _memo[k] = got
    return got


def save(k: str, template: dict) -> None:
    """Keep ``template`` for the next start (written whole, then renamed into place, so
    processes starting together never read half a file)."""
    with _memo_lock:
        _memo[k] = template
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{k}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(template, f, separators=(",", ":"))
            os.replace(tmp, d / f"{k}.json")
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(d)
    except OSError as e:  # no cache to write to: the next start bootstraps object by object
        log.debug("bootstrap template not saved in %s: %s", d, e)


def _prune(d: Path) -> None:
    """Remove all but the ``KEEP`` newest templates."""
    found = []
    for p in d.glob("*.json"):
        try:
            found.append((p.stat().st_mtime, p))
        except OSError:
            continue  # removed meanwhile by another process
    for _, p in sorted(found, reverse=True)[KEEP:]:
        try:
            p.unlink()
        except OSError:
            pass
