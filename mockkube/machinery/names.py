"""Name formats and ObjectMeta validation, worded exactly as upstream apimachinery words them.

Clients (and driver authors' tests) match on these messages, so each string below is the
one ``k8s.io/apimachinery/pkg/util/validation`` (DNS names: "characters") or
``k8s.io/apimachinery/pkg/api/validate/content`` (label keys/values: "bytes") produces.
The format functions return a list of messages (empty when valid); the ``validate_*``
functions return ``FieldError`` lists with upstream field paths.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from mockkube.machinery import fielderrors as fe
from mockkube.machinery.fielderrors import FieldError, Path

NameValidator = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
FIELD_MANAGER_MAX = 128
SUBRESOURCE_NAME_MAX = 256
IS_NEGATIVE_MSG = "must be greater than or equal to 0"
FIELD_IMMUTABLE = "field is immutable"

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(_DNS1035_FMT)
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_CIDENT_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_CIDENT_RE = re.compile(_CIDENT_FMT)

_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character"
)
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_CIDENT_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)


def _fullmatch(rx: re.Pattern, s: str) -> bool:
    # fullmatch, not `^...$`: Python's `$` also matches before a trailing newline, Go's does not.
    return rx.fullmatch(s) is not None


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """util/validation.RegexError (note the double space upstream puts between examples)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i:
            out += " or "
        out += f"'{ex}', "
    return out + f"regex used for validation is '{fmt}')"


def max_len_error(n: int, unit: str = "characters") -> str:
    return f"must be no more than {n} {unit}"


def empty_error() -> str:
    return "must be non-empty"


# --- formats (lists of messages) -------------------------------------------------------


def dns1123_label(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value.encode()) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX, unit))
    if not _fullmatch(_LABEL_RE, value):
        if _fullmatch(_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value.encode()) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX, unit))
    if not _fullmatch(_SUBDOMAIN_RE, value):
        errs.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _fullmatch(_DNS1035_RE, value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def qualified_name(value: str) -> list[str]:
    """content.IsLabelKey: ``[prefix/]name`` (label keys, annotation keys, finalizers)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix, "bytes"))
    else:
        return [
            "a valid label key "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name.encode()) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX, "bytes"))
    if not _fullmatch(_QNAME_RE, name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX, "bytes"))
    if not _fullmatch(_LABEL_VALUE_RE, value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def c_identifier(value: str) -> list[str]:
    if not _fullmatch(_CIDENT_RE, value):
        return [regex_error(_CIDENT_MSG, _CIDENT_FMT, "my_name", "MY_NAME", "MyName")]
    return []


_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."


def is_native_resource_name(name: str) -> bool:
    """core helper IsNativeResource: no domain, or a ``kubernetes.io`` domain."""
    return "/" not in name or _DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not native, and ``requests.<name>`` qualifies."""
    if is_native_resource_name(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return not qualified_name(_REQUESTS_PREFIX + name)


def extended_resource_name(name: str) -> list[str]:
    return [] if is_extended_resource_name(name) else ["must be a valid extended resource name"]


def is_hugepages_resource_name(name: str) -> bool:
    return name.startswith("hugepages-")


def is_node_allocatable_resource_name(name: str) -> bool:
    """A resource reported in Node status.allocatable that is not an extended resource: cpu,
    memory, ephemeral-storage and hugepages-* (the v1.36 nodeAllocatableResourceMappings doc)."""
    return name in ("cpu", "memory", "ephemeral-storage") or is_hugepages_resource_name(name)


def _mask_trailing_dash(name: str) -> str:
    # upstream replaces the last two characters when a generateName prefix ends with '-'
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    return dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    return dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    return dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool = False) -> list[str]:
    """path.ValidatePathSegmentName (RBAC roles and bindings: ``system:kube-scheduler``)."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def name_is_long_name(name: str, prefix: bool = False) -> list[str]:
    """Declarative ``k8s-long-name`` (DeviceClass names): a DNS subdomain counted in bytes."""
    return dns1123_subdomain(_mask_trailing_dash(name) if prefix else name, "bytes")


# --- field validators -------------------------------------------------------------------


def _p(path: Path | str) -> str:
    return str(path)


def validate_label_name(name: str, path: Path | str) -> list[FieldError]:
    """metav1validation.ValidateLabelName (also used for taint keys and condition types)."""
    return [fe.invalid(_p(path), name, m) for m in qualified_name(name)]


def validate_label_value(value: str, path: Path | str) -> list[FieldError]:
    return [fe.invalid(_p(path), value, m) for m in label_value(value)]


def validate_labels(labels: Any, path: Path | str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k, v in (labels or {}).items():
        errs += validate_label_name(k, path)
        errs += [fe.invalid(_p(path), v, m) for m in label_value(v if isinstance(v, str) else "")]
    return errs


def validate_annotations(annotations: Any, path: Path | str) -> list[FieldError]:
    errs: list[FieldError] = []
    total = 0
    for k, v in (annotations or {}).items():
        errs += [fe.invalid(_p(path), k, m) for m in qualified_name(k.lower())]
        total += len(k.encode()) + len((v or "").encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(fe.too_long(_p(path), "", TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _gvk_parts(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


def validate_owner_references(refs: Any, path: Path | str) -> list[FieldError]:
    """Note: upstream reports owner reference errors without an index in the path."""
    base = Path(_p(path))
    errs: list[FieldError] = []
    first_controller = ""
    for ref in refs or []:
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        group, version = _gvk_parts(api_version)
        if not version:
            errs.append(fe.invalid(str(base.child("apiVersion")), api_version, "version must not be empty"))
        if not kind:
            errs.append(fe.invalid(str(base.child("kind")), kind, "must not be empty"))
        if not ref.get("name"):
            errs.append(fe.invalid(str(base.child("name")), ref.get("name") or "", "must not be empty"))
        if not ref.get("uid"):
            errs.append(fe.invalid(str(base.child("uid")), ref.get("uid") or "", "must not be empty"))
        if group == "" and version == "v1" and kind == "Event":
            errs.append(fe.invalid(str(base), ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            cur = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(
                    fe.invalid(
                        str(base),
                        refs,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {cur}",
                    )
                )
            else:
                first_controller = cur
    return errs


def validate_finalizers(finalizers: Any, path: Path | str) -> list[FieldError]:
    errs: list[FieldError] = []
    fins = list(finalizers or [])
    for f in fins:
        errs += [fe.invalid(_p(path), f, m) for m in qualified_name(f)]
    if "orphan" in fins and "foregroundDeletion" in fins:
        errs.append(fe.invalid(_p(path), fins, "finalizer orphan and foregroundDeletion cannot be both set"))
    return errs


def validate_managed_fields(entries: Any, path: Path | str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, e in enumerate(entries or []):
        p = Path(_p(path)).index(i)
        op = e.get("operation") or ""
        if op not in ("Apply", "Update"):
            errs.append(fe.invalid(str(p.child("operation")), op, "must be `Apply` or `Update`"))
        ft = e.get("fieldsType") or ""
        if ft and ft != "FieldsV1":
            errs.append(fe.invalid(str(p.child("fieldsType")), ft, "must be `FieldsV1`"))
        manager = e.get("manager") or ""
        if len(manager) > FIELD_MANAGER_MAX:
            errs.append(fe.too_long(str(p.child("manager")), manager, FIELD_MANAGER_MAX))
        elif any(not ch.isprintable() for ch in manager):
            errs.append(fe.invalid(str(p.child("manager")), manager, "invalid characters"))
        sub = e.get("subresource") or ""
        if len(sub) > SUBRESOURCE_NAME_MAX:
            errs.append(fe.too_long(str(p.child("subresource")), sub, SUBRESOURCE_NAME_MAX))
    return errs


def validate_object_meta(
    meta: dict | None,
    namespaced: bool,
    path: Path | str = "metadata",
    name_validator: NameValidator = name_is_dns_subdomain,
) -> list[FieldError]:
    """ValidateObjectMeta on create (name generation must already have happened)."""
    meta = meta or {}
    base = Path(_p(path))
    errs: list[FieldError] = []
    gen_name = meta.get("generateName") or ""
    if gen_name:
        errs += [fe.invalid(str(base.child("generateName")), gen_name, m) for m in name_validator(gen_name, True)]
    name = meta.get("name") or ""
    if not name:
        errs.append(fe.required(str(base.child("name")), "name or generateName is required"))
    else:
        errs += [fe.invalid(str(base.child("name")), name, m) for m in name_validator(name, False)]
    errs += _validate_meta_common(meta, namespaced, base)
    return errs


def _validate_meta_common(meta: dict, namespaced: bool, base: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            errs.append(fe.required(str(base.child("namespace"))))
        else:
            errs += [fe.invalid(str(base.child("namespace")), ns, m) for m in name_is_dns_label(ns)]
    elif ns:
        errs.append(fe.forbidden(str(base.child("namespace")), "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.append(fe.invalid(str(base.child("generation")), generation, IS_NEGATIVE_MSG))
    errs += validate_labels(meta.get("labels"), base.child("labels"))
    errs += validate_annotations(meta.get("annotations"), base.child("annotations"))
    errs += validate_owner_references(meta.get("ownerReferences"), base.child("ownerReferences"))
    errs += validate_finalizers(meta.get("finalizers"), base.child("finalizers"))
    errs += validate_managed_fields(meta.get("managedFields"), base.child("managedFields"))
    return errs


def validate_template_object_meta(meta: dict | None, path: Path | str) -> list[FieldError]:
    """corevalidation.ValidateTemplateObjectMeta: only labels and annotations are checked."""
    meta = meta or {}
    base = Path(_p(path))
    return validate_labels(meta.get("labels"), base.child("labels")) + validate_annotations(
        meta.get("annotations"), base.child("annotations")
    )


def validate_immutable(new: Any, old: Any, path: Path | str) -> list[FieldError]:
    return [] if new == old else [fe.invalid(_p(path), new, FIELD_IMMUTABLE)]


def validate_object_meta_update(new: dict | None, old: dict | None, path: Path | str = "metadata") -> list[FieldError]:
    """ValidateObjectMetaUpdate. The caller must already have filled in resourceVersion for
    unconditional updates (as the generic store does before validating)."""
    new = new or {}
    old = old or {}
    base = Path(_p(path))
    errs: list[FieldError] = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
        if extra:
            listed = ", ".join(f'"{x}"' for x in extra)
            errs.append(
                fe.forbidden(
                    str(base.child("finalizers")),
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers []string{{{listed}}}",
                )
            )
    rv = new.get("resourceVersion") or ""
    if not rv:
        errs.append(fe.invalid(str(base.child("resourceVersion")), rv, "must be specified for an update"))
    if (new.get("generation") or 0) < (old.get("generation") or 0):
        errs.append(fe.invalid(str(base.child("generation")), new.get("generation") or 0, "must not be decremented"))
    for f, empty in (
        ("name", ""),
        ("namespace", ""),
        ("uid", ""),
        ("creationTimestamp", None),
        ("deletionTimestamp", None),
        ("deletionGracePeriodSeconds", None),
    ):
        nv = new.get(f) or empty
        ov = old.get(f) or empty
        errs += validate_immutable(nv, ov, base.child(f))
    errs += validate_labels(new.get("labels"), base.child("labels"))
    errs += validate_annotations(new.get("annotations"), base.child("annotations"))
    errs += validate_owner_references(new.get("ownerReferences"), base.child("ownerReferences"))
    errs += validate_finalizers(new.get("finalizers"), base.child("finalizers"))
    errs += validate_managed_fields(new.get("managedFields"), base.child("managedFields"))
    return errs
