"""Query parameters of the verbs, validated as apimachinery validates ListOptions,
PatchOptions, CreateOptions and DeleteOptions."""

from __future__ import annotations

from dataclasses import dataclass

from multidict import MultiMapping

from mockkube.apiserver.rest import WriteOptions
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.strconv import convert_bool, parse_int64

_VALIDATIONS = ("Ignore", "Warn", "Strict")


def _bool(q: MultiMapping, name: str) -> bool | None:
    """apimachinery's Convert_Slice_string_To_bool (``convert_bool``) of the first value."""
    v = q.get(name)
    if v is None:
        return None
    return convert_bool(v)


def _int(q: MultiMapping, name: str) -> int | None:
    """Convert_Slice_string_To_(Pointer_)int64: the first value, strconv-parsed (an empty
    value is a syntax error too)."""
    v = q.get(name)
    if v is None:
        return None
    return parse_int64(v)


@dataclass
class ListParams:
    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    watch: bool = False
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: int | None = None
    include_object: str = ""


def list_params(q: MultiMapping) -> ListParams:
    p = ListParams(
        label_selector=q.get("labelSelector", ""),
        field_selector=q.get("fieldSelector", ""),
        limit=_int(q, "limit") or 0,
        continue_token=q.get("continue", ""),
        resource_version=q.get("resourceVersion", ""),
        resource_version_match=q.get("resourceVersionMatch", ""),
        watch=bool(_bool(q, "watch")),
        allow_bookmarks=bool(_bool(q, "allowWatchBookmarks")),
        send_initial_events=_bool(q, "sendInitialEvents"),
        timeout_seconds=_int(q, "timeoutSeconds"),
        include_object=q.get("includeObject", ""),
    )
    errs: list[fe.FieldError] = []
    if p.limit < 0:
        p.limit = 0
    if p.include_object not in ("", "None", "Metadata", "Object"):
        errs.append(fe.not_supported("includeObject", p.include_object, ["Metadata", "None", "Object"]))
    if p.resource_version_match and p.resource_version_match not in ("NotOlderThan", "Exact"):
        errs.append(fe.not_supported("resourceVersionMatch", p.resource_version_match, ["Exact", "NotOlderThan"]))
    if p.watch:
        if p.send_initial_events is not None:
            if p.resource_version_match != "NotOlderThan":
                errs.append(
                    fe.forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    )
                )
            if not p.allow_bookmarks:
                errs.append(
                    fe.forbidden(
                        "allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"
                    )
                )
        elif p.resource_version_match:
            errs.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                )
            )
    else:
        if p.send_initial_events is not None:
            errs.append(fe.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
        if p.resource_version_match:
            if not p.resource_version:
                errs.append(
                    fe.forbidden(
                        "resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"
                    )
                )
            if p.continue_token:
                errs.append(
                    fe.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
                )
            if p.resource_version_match == "Exact" and p.resource_version == "0":
                errs.append(
                    fe.forbidden(
                        "resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
                    )
                )
    if errs:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", errs)
    return p


def default_field_manager(user_agent: str | None) -> str:
    """Upstream derives a manager from the User-Agent prefix when none is given."""
    ua = (user_agent or "").split("/", 1)[0]
    return ua[:128]


def write_options(q: MultiMapping, user_agent: str | None, kind: str, patch_type: str = "") -> WriteOptions:
    """CreateOptions/UpdateOptions/PatchOptions from the query, with upstream validation."""
    errs: list[fe.FieldError] = []
    dry = q.getall("dryRun", [])
    for d in dry:
        if d != "All":
            errs.append(fe.not_supported("dryRun", d, ["All"]))
    fm = q.get("fieldManager")
    if fm is not None:
        if len(fm) > 128:
            errs.append(fe.too_long("fieldManager", fm, 128))
        elif any(not c.isprintable() for c in fm):
            errs.append(fe.invalid("fieldManager", fm, "must only contain printable characters"))
    fv = q.get("fieldValidation", "")
    if fv and fv not in _VALIDATIONS:
        errs.append(fe.not_supported("fieldValidation", fv, list(_VALIDATIONS)))
    force = _bool(q, "force")
    if force is not None and patch_type != "apply" and force:
        errs.append(fe.forbidden("force", "may not be specified for non-apply patch"))
    if patch_type == "apply" and not fm:
        errs.append(fe.required("fieldManager", "is required for apply patch"))
    if errs:
        raise errors.invalid(kind, "meta.k8s.io", "", errs)
    manager = fm if fm else ("" if patch_type == "apply" else default_field_manager(user_agent))
    return WriteOptions(dry_run=bool(dry), field_manager=manager, field_validation=fv or "Warn", force=bool(force))


# encoding/json's error for a body that is no JSON object, at serializer/json's Interpret
# step (the apiVersion/kind probe), with Go's spelling of the anonymous probe struct
_PROBE = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
# Go types the schema spells as plain strings
_GO_TYPE_FIXUPS = (
    ("Preconditions.preconditions.uid of type string", "Preconditions.preconditions.uid of type types.UID"),
    (
        "DeleteOptions.propagationPolicy of type string",
        "DeleteOptions.propagationPolicy of type v1.DeletionPropagation",
    ),
)


def check_type_meta(body) -> None:
    """serializer/json's Interpret step: apiVersion and kind must be strings, the body a
    JSON object (or null); 400 with encoding/json's message otherwise."""
    from mockkube.machinery.validation import json_kind

    if body is None:
        return
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{json_kind(body)} into Go value of type {_PROBE}"
        )
    for key, value in body.items():
        if key in ("apiVersion", "kind") and value is not None and not isinstance(value, str):
            raise errors.bad_request(
                f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{json_kind(value)} into Go struct field .{key} of type string"
            )


def type_errors(body: dict, group: str, version: str, kind: str, prune: bool = False) -> list[str]:
    """encoding/json's type errors of ``body`` decoded as ``kind`` (first one first); with
    ``prune`` a well-typed body loses its unknown fields and nulls, as a typed decode does."""
    from mockkube.machinery import schema, validation

    root = schema.for_kind(group, version, kind)
    if root is None:
        return []
    return validation.check_structure(body, root, canonicalize=prune, prune=prune).type_errors


def delete_options_body(body) -> dict:
    """A decoded DeleteOptions body as apiserver's delete handlers decode it (non-strict,
    unknown fields dropped); since v1.35 every decode error is a 400 BadRequest carrying
    the decoder's message (kubernetes#133358)."""
    check_type_meta(body)
    if body is None:
        return {}
    if body.get("kind") not in (None, "", "DeleteOptions"):
        raise errors.bad_request(f"DeleteOptions expected, got kind {body.get('kind')!r}")
    errs = type_errors(body, "", "v1", "DeleteOptions", prune=True)
    if errs:
        msg = errs[0]
        for wrong, right in _GO_TYPE_FIXUPS:
            msg = msg.replace(wrong, right)
        raise errors.bad_request(msg)
    return body


def delete_options(q: MultiMapping, body: dict | None) -> tuple[dict, bool]:
    """Merge DeleteOptions from the body and the query; returns (options, dry_run)."""
    opts = dict(body or {})
    for k in ("propagationPolicy",):
        if q.get(k):
            opts[k] = q[k]
    gp = _int(q, "gracePeriodSeconds")
    if gp is not None:
        opts["gracePeriodSeconds"] = gp
    od = _bool(q, "orphanDependents")
    if od is not None:
        opts["orphanDependents"] = od
    dry = list(opts.get("dryRun") or []) + q.getall("dryRun", [])
    errs = []
    for d in dry:
        if d != "All":
            errs.append(fe.not_supported("dryRun", d, ["All"]))
    if opts.get("orphanDependents") is not None and opts.get("propagationPolicy"):
        errs.append(
            fe.invalid(
                "propagationPolicy",
                opts["propagationPolicy"],
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    gps = opts.get("gracePeriodSeconds")
    if gps is not None and not isinstance(gps, int):
        errs.append(fe.invalid("gracePeriodSeconds", gps, "must be an integer"))
    if errs:
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", errs)
    return opts, bool(dry)
