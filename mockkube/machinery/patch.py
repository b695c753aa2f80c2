"""JSON patch (RFC 6902) and JSON merge patch (RFC 7386) as kube-apiserver applies them.

kube-apiserver uses ``gopkg.in/evanphx/json-patch.v4`` (``handlers/patch.go``), whose
behaviour differs from the RFCs in small ways clients can observe: ``replace`` on a
missing object key acts like ``add``, ``copy`` from a missing key adds ``null``, negative
array indexes count from the end, a path without a leading ``/`` drops its first segment.
We reproduce those quirks and the exact HTTP errors: a patch document that does not
decode is 400 BadRequest, more than 10000 operations is 413, and any failed operation is
a bare 422 Invalid whose message hides the library's error (kept as ``__cause__``).

Both functions are pure: they never mutate ``doc`` nor the patch.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from mockkube.machinery.errors import APIError, bad_request, invalid, request_entity_too_large
from mockkube.machinery.fielderrors import FieldError
from mockkube.machinery.meta import clone
from mockkube.machinery.validation import json_kind

MAX_JSON_PATCH_OPERATIONS = 10000
# genericapiserver's JSONPatchMaxCopyBytes default, armed as jsonpatch.AccumulatedCopySizeLimit.
MAX_COPY_BYTES = 3 * 1024 * 1024

_PATCH_OP_FIELDS = {"op", "path", "from"}  # string fields of handlers.jsonPatchOp
_ATOI = re.compile(r"^[+-]?[0-9]+$")
_MISSING = object()


class JSONPatchError(Exception):
    """One operation failed; ``str()`` is evanphx/json-patch's error text."""


class JSONPatchTestFailed(JSONPatchError):
    """A ``test`` operation did not hold (evanphx ``ErrTestFailed``)."""


def unprocessable_patch() -> APIError:
    """``NewGenericServerResponse(422, ...)``: the server message is dropped on purpose."""
    return APIError(422, "Invalid", "the server rejected our request due to an error in our request", {})


# -- Go-flavoured helpers ------------------------------------------------------------


def _decode_body(raw: Any) -> Any:
    """Accept an already-decoded body, or bytes/str that we decode ourselves."""
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as e:
            raise bad_request(f"invalid character at offset {e.pos}: {e.msg}") from e
    return raw


def _go_json_len(v: Any) -> int:
    """len(json.Marshal(v)) in Go: compact, HTML-escaped."""
    s = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    s = s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return len(s.encode("utf-8"))


def _atoi(key: str) -> int:
    if not _ATOI.match(key):
        raise JSONPatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    n = int(key)
    if not -(2**63) <= n < 2**63:
        raise JSONPatchError(f'strconv.Atoi: parsing "{key}": value out of range')
    return n


def _invalid_index(idx: int) -> JSONPatchError:
    return JSONPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")


def _json_equal(a: Any, b: Any) -> bool:
    """Structural equality as lazyNode.equal: booleans never equal numbers."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    numbers = (int, float)
    if isinstance(a, numbers) or isinstance(b, numbers):
        return isinstance(a, numbers) and isinstance(b, numbers) and a == b
    return a == b


# -- containers (partialDoc / partialArray) -----------------------------------------


def _get(con: Any, key: str) -> Any:
    """container.get: a dict never errors (missing -> None); a list checks the index."""
    if isinstance(con, dict):
        return con.get(key)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise _invalid_index(idx)
        idx += len(con)
    if idx >= len(con):
        raise _invalid_index(idx)
    return con[idx]


def _set(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise _invalid_index(idx)
        idx += len(con)
    con[idx] = val


def _add(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    if key == "-":
        con.append(val)
        return
    try:
        idx = _atoi(key)
    except JSONPatchError as e:
        raise JSONPatchError(f"value was not a proper array index: '{key}': {e}") from None
    size = len(con) + 1
    if idx >= size:
        raise _invalid_index(idx)
    if idx < 0:
        if idx < -size:
            raise _invalid_index(idx)
        idx += size
    con.insert(idx, val)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del con[key]
        return
    idx = _atoi(key)
    if idx >= len(con):
        raise _invalid_index(idx)
    if idx < 0:
        if idx < -len(con):
            raise _invalid_index(idx)
        idx += len(con)
    del con[idx]


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _find(root: Any, path: str) -> tuple[Any, str] | None:
    """findObject: the parent container and the last (decoded) key, or None."""
    split = path.split("/")
    if len(split) < 2:
        return None
    doc = root
    for part in split[1:-1]:
        try:
            nxt = _get(doc, _unescape(part))
        except JSONPatchError:
            return None
        if not isinstance(nxt, (dict, list)):
            return None
        doc = nxt
    return doc, _unescape(split[-1])


# -- operations ---------------------------------------------------------------------


def _str_field(op: dict, name: str, missing_msg: str) -> str:
    v = op.get(name)
    if v is None:
        raise JSONPatchError(missing_msg)
    if not isinstance(v, str):
        raise JSONPatchError(f"json: cannot unmarshal {json_kind(v)} into Go value of type string")
    return v


def _path(op: dict) -> str:
    return _str_field(op, "path", "operation missing path field: missing value")


def _from(op: dict) -> str:
    return _str_field(op, "from", "operation, missing from field: missing value")


class _Applier:
    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.copied = 0

    def add(self, op: dict) -> None:
        try:
            path = _path(op)
        except JSONPatchError:
            raise JSONPatchError("add operation failed to decode path: missing value") from None
        found = _find(self.doc, path)
        if found is None:
            raise JSONPatchError(f'add operation does not apply: doc is missing path: "{path}": missing value')
        try:
            _add(found[0], found[1], copy.deepcopy(op.get("value")))
        except JSONPatchError as e:
            raise JSONPatchError(f"error in add for path: '{path}': {e}") from None

    def remove(self, op: dict) -> None:
        try:
            path = _path(op)
        except JSONPatchError:
            raise JSONPatchError("remove operation failed to decode path: missing value") from None
        found = _find(self.doc, path)
        if found is None:
            raise JSONPatchError(f'remove operation does not apply: doc is missing path: "{path}": missing value')
        try:
            _remove(*found)
        except JSONPatchError as e:
            raise JSONPatchError(f"error in remove for path: '{path}': {e}") from None

    def replace(self, op: dict) -> None:
        try:
            path = _path(op)
        except JSONPatchError as e:
            raise JSONPatchError(f"replace operation failed to decode path: {e}") from None
        if path == "":
            val = op.get("value")
            if not isinstance(val, (dict, list)):
                raise JSONPatchError("replace operation value must be object or array: %!w(<nil>)")
            self.doc = copy.deepcopy(val)
            return
        found = _find(self.doc, path)
        if found is None:
            raise JSONPatchError(f"replace operation does not apply: doc is missing path: {path}: missing value")
        con, key = found
        try:
            _get(con, key)
        except JSONPatchError:
            raise JSONPatchError(
                f"replace operation does not apply: doc is missing key: {path}: missing value"
            ) from None
        try:
            _set(con, key, copy.deepcopy(op.get("value")))
        except JSONPatchError as e:  # upstream says "remove" here
            raise JSONPatchError(f"error in remove for path: '{path}': {e}") from None

    def move(self, op: dict) -> None:
        try:
            frm = _from(op)
        except JSONPatchError as e:
            raise JSONPatchError(f"move operation failed to decode from: {e}") from None
        found = _find(self.doc, frm)
        if found is None:
            raise JSONPatchError(f"move operation does not apply: doc is missing from path: {frm}: missing value")
        con, key = found
        try:
            val = _get(con, key)
            _remove(con, key)
        except JSONPatchError as e:
            raise JSONPatchError(f"error in move for path: '{key}': {e}") from None
        try:
            path = _path(op)
        except JSONPatchError as e:
            raise JSONPatchError(f"move operation failed to decode path: {e}") from None
        found = _find(self.doc, path)
        if found is None:
            raise JSONPatchError(
                f"move operation does not apply: doc is missing destination path: {path}: missing value"
            )
        try:
            _add(found[0], found[1], val)
        except JSONPatchError as e:
            raise JSONPatchError(f"error in move for path: '{path}': {e}") from None

    def test(self, op: dict) -> None:
        try:
            path = _path(op)
        except JSONPatchError as e:
            raise JSONPatchError(f"test operation failed to decode path: {e}") from None
        failed = JSONPatchTestFailed(f"testing value {path} failed: test failed")
        expected = op.get("value", _MISSING)
        if path == "":
            if expected is _MISSING or not _json_equal(self.doc, expected):
                raise failed
            return
        found = _find(self.doc, path)
        if found is None:
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}: missing value")
        try:
            val = _get(*found)
        except JSONPatchError as e:
            raise JSONPatchError(f"error in test for path: '{path}': {e}") from None
        if val is None:
            if expected is _MISSING or expected is None:
                return
            raise failed
        if expected is _MISSING or not _json_equal(val, expected):
            raise failed

    def copy(self, op: dict) -> None:
        try:
            frm = _from(op)
        except JSONPatchError as e:
            raise JSONPatchError(f"copy operation failed to decode from: {e}") from None
        found = _find(self.doc, frm)
        if found is None:
            raise JSONPatchError(f"copy operation does not apply: doc is missing from path: {frm}: missing value")
        try:
            val = _get(*found)
        except JSONPatchError as e:
            raise JSONPatchError(f"error in copy for from: '{frm}': {e}") from None
        try:
            path = _path(op)
        except JSONPatchError:
            raise JSONPatchError("copy operation failed to decode path: missing value") from None
        dest = _find(self.doc, path)
        if dest is None:
            raise JSONPatchError(
                f"copy operation does not apply: doc is missing destination path: {path}: missing value"
            )
        self.copied += 0 if val is None else _go_json_len(val)
        if self.copied > MAX_COPY_BYTES:
            raise JSONPatchError(
                f"Unable to complete the copy, the accumulated size increase of copy is {self.copied}, "
                f"exceeding the limit {MAX_COPY_BYTES}"
            )
        try:
            _add(dest[0], dest[1], copy.deepcopy(val))
        except JSONPatchError as e:
            raise JSONPatchError(f"error while adding value during copy: {e}") from None


def decode_json_patch(ops: Any, field_validation: str = "Warn") -> list:
    """Check the patch document's shape the way the handler decodes it; 400/413 on failure.

    With fieldValidation Warn/Strict (Warn is the server default) the body is first
    strictly decoded into ``[]handlers.jsonPatchOp``; with Ignore only
    ``jsonpatch.DecodePatch`` (``[]map[string]*json.RawMessage``) runs.
    """
    ops = _decode_body(ops)
    if ops is None:
        return []
    strict = field_validation in ("Warn", "Strict")
    if not isinstance(ops, list):
        target = "[]handlers.jsonPatchOp" if strict else "jsonpatch.Patch"
        msg = f"json: cannot unmarshal {json_kind(ops)} into Go value of type {target}"
        raise bad_request(f"error decoding patch: {msg}" if strict else msg)
    for item in ops:
        if item is None:
            continue
        if not isinstance(item, dict):
            target = "handlers.jsonPatchOp" if strict else "jsonpatch.Operation"
            msg = f"json: cannot unmarshal {json_kind(item)} into Go value of type {target}"
            raise bad_request(f"error decoding patch: {msg}" if strict else msg)
        if strict:
            for name in ("op", "path", "from"):
                v = item.get(name)
                if v is not None and not isinstance(v, str):
                    raise bad_request(
                        f"error decoding patch: json: cannot unmarshal {json_kind(v)} into Go struct "
                        f"field jsonPatchOp.{name} of type string"
                    )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}"
        )
    return ops


def apply_ops(doc: Any, ops: list[dict]) -> Any:
    """Apply decoded operations to a copy of ``doc`` (pure; JSONPatchError on failure):
    what a mutating admission policy's JSONPatch does to the object."""
    applier = _Applier(copy.deepcopy(doc))
    for op in ops:
        kind = op.get("op")
        handler = getattr(applier, kind, None) if kind in ("add", "remove", "replace", "move", "test", "copy") else None
        if handler is None:
            raise JSONPatchError(f"Unexpected kind: {kind}")
        handler(op)
    return applier.doc


def apply_json_patch(doc: dict, ops: Any, field_validation: str = "Warn") -> dict:
    """Apply an ``application/json-patch+json`` body to ``doc``; returns a new dict.

    ``ops`` is the decoded body (a list of operation objects) or its raw bytes/str.
    """
    ops = decode_json_patch(ops, field_validation)
    applier = _Applier(clone(doc))
    for op in ops:
        op = op or {}
        kind = op.get("op")
        kind = kind if isinstance(kind, str) else "unknown"
        handler = getattr(applier, kind, None) if kind in ("add", "remove", "replace", "move", "test", "copy") else None
        try:
            if handler is None:
                raise JSONPatchError(f"Unexpected kind: {kind}")
            handler(op)
        except JSONPatchError as e:
            raise unprocessable_patch() from e
    if not isinstance(applier.doc, dict):
        raise invalid(
            "",
            "",
            "",
            [
                FieldError(
                    "Invalid",
                    "patch",
                    json.dumps(applier.doc, separators=(",", ":")),
                    f"json: cannot unmarshal {json_kind(applier.doc)} into Go value of type map[string]interface {{}}",
                )
            ],
        )
    return applier.doc


# -- merge patch ----------------------------------------------------------------------


def _prune_nulls(v: Any) -> Any:
    """pruneNulls: drop null-valued keys in objects; null array items stay."""
    if isinstance(v, dict):
        return {k: _prune_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [x if x is None else _prune_nulls(x) for x in v]
    return v


def _merge_docs(doc: dict, patch: dict) -> None:
    for k, v in patch.items():
        if v is None:
            doc.pop(k, None)
            continue
        cur = doc.get(k)
        if cur is None:
            doc[k] = _prune_nulls(v)
        elif not isinstance(cur, dict):
            doc[k] = _prune_nulls(v)
        elif not isinstance(v, dict):
            doc[k] = copy.deepcopy(v)  # upstream does not prune here
        else:
            _merge_docs(cur, v)


def apply_merge_patch(doc: dict, patch: Any, field_validation: str = "Warn") -> dict:
    """Apply an ``application/merge-patch+json`` body (RFC 7386, evanphx flavour)."""
    patch = _decode_body(patch)
    if field_validation in ("Warn", "Strict") and patch is not None and not isinstance(patch, dict):
        raise bad_request(
            "error decoding patch: json: cannot unmarshal "
            f"{json_kind(patch)} into Go value of type map[string]interface {{}}"
        )
    if patch is None:
        raise bad_request("Invalid JSON Patch")
    if isinstance(patch, dict):
        out = clone(doc)
        _merge_docs(out, patch)
        return out
    if not isinstance(patch, list):
        raise bad_request("Invalid JSON Patch")
    # A top-level array replaces the document, which then fails to decode as an object.
    body = json.dumps(_prune_nulls(patch), separators=(",", ":"))
    raise invalid(
        "",
        "",
        "",
        [
            FieldError(
                "Invalid", "patch", body, "json: cannot unmarshal array into Go value of type map[string]interface {}"
            )
        ],
    )
