"""Request body decoding and response media types.

Bodies arrive as JSON, YAML or Kubernetes protobuf (client-go typed clients never fall
back from a 415, see docs/compatibility.md); responses are always JSON, which every
client accepts, or a Table / PartialObjectMetadata when the Accept header asks for one.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockkube.machinery import errors, jsoncodec

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's MaxRequestBodyBytes
JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
ACCEPTED_BODY_TYPES = (JSON, YAML, PROTOBUF)
JSON_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
APPLY_YAML = "application/apply-patch+yaml"


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _yaml_load(text: str):
    import yaml  # on the first YAML body: a server start parses none

    try:
        return yaml.load(text, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader)
    except yaml.YAMLError as e:
        raise errors.bad_request(f"error converting YAML to JSON: {str(e).splitlines()[0]}")
    except RecursionError:
        raise errors.bad_request("error converting YAML to JSON: exceeded max depth")


def decode_json(body: bytes):
    try:
        return jsoncodec.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {e}")
    except RecursionError:
        raise errors.bad_request("couldn't get version/kind; json parse error: exceeded max depth")


def decode_body(body: bytes, content_type: str | None, *, patch: bool = False):
    """Decode a request body by its Content-Type; 415 for types upstream does not take."""
    if len(body) > MAX_BODY:
        raise errors.request_entity_too_large(f"limit is {MAX_BODY}")
    mt = media_type(content_type)
    if mt not in ("", JSON, YAML, PROTOBUF) and not (patch and mt in JSON_PATCH_TYPES + (APPLY_YAML,)):
        # apiserver's NegotiateInputSerializer: only the serializers' own media types (not
        # text/plain, */*, text/yaml...), before the body is looked at
        raise errors.unsupported_media_type(mt, ACCEPTED_BODY_TYPES)
    if not body.strip():
        raise errors.bad_request("the body of the request was empty")
    if mt in ("", JSON) or (patch and mt in JSON_PATCH_TYPES):
        return decode_json(body)
    if mt in (YAML, APPLY_YAML):
        try:
            text = body.decode()
        except UnicodeDecodeError:
            raise errors.bad_request("the body of the request is not valid UTF-8")
        obj = _yaml_load(text)
        return _yaml_to_json(obj)
    if mt == PROTOBUF and not patch:
        from mockkube.apiserver.http import protobuf

        return protobuf.decode(body)
    raise errors.unsupported_media_type(mt, ACCEPTED_BODY_TYPES)


def _yaml_to_json(obj):
    """YAML may carry timestamps and non-string keys; make the value JSON-shaped."""
    if isinstance(obj, dict):
        return {str(k): _yaml_to_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_yaml_to_json(v) for v in obj]
    if hasattr(obj, "isoformat"):
        return obj.isoformat().replace("+00:00", "Z")
    return obj


@dataclass(frozen=True)
class Wanted:
    """What representation the client asked for in Accept."""

    table: bool = False
    partial: bool = False  # PartialObjectMetadata(List)


def negotiate(accept: str | None) -> Wanted:
    """Honour ``as=Table`` / ``as=PartialObjectMetadata*``; otherwise JSON.

    Clients always list plain JSON as a fallback, so only an Accept that names nothing
    JSON-compatible is refused (406), as upstream does.
    """
    if not accept:
        return Wanted()
    plain_ok = False
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        mt = fields[0].lower()
        params = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if mt in (JSON, "*/*", "application/*", YAML, PROTOBUF) or mt.startswith("application/json"):
            as_ = params.get("as")
            if as_ == "Table" and params.get("g") == "meta.k8s.io" and mt == JSON:
                return Wanted(table=True)
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and mt == JSON:
                return Wanted(partial=True)
            if as_ is None and mt != PROTOBUF:
                plain_ok = True
            if as_ is None and mt == PROTOBUF:
                continue
    if not plain_ok:
        raise errors.not_acceptable(
            "only the following media types are accepted: application/json, application/yaml, "
            "application/vnd.kubernetes.protobuf"
        )
    return Wanted()
