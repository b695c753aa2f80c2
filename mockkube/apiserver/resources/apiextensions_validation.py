"""Validation of CustomResourceDefinitions, as ``apiextensions-apiserver/pkg/apis/
apiextensions/validation`` words it: names, versions, the structural schema rules
(``pkg/apiserver/schema``), printer columns, selectable fields and CEL rules."""

from __future__ import annotations

from typing import Any

from mockkube.apiserver import crdcel
from mockkube.cel import CELError
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import goregexp, names
from mockkube.machinery.fielderrors import Path

_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
_SCHEMA_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]


def validate_crd(crd: dict, old: dict | None = None) -> list[fe.FieldError]:
    """A CRD's validation; on update, ``old``: a version whose schema is unchanged keeps
    rules over the per-expression cost limit (upstream's suppressPerExpressionCost)."""
    spec = crd.get("spec") or {}
    old_schemas = {
        v.get("name"): v.get("schema")
        for v in ((old or {}).get("spec") or {}).get("versions") or []
        if isinstance(v, dict)
    }
    meta = crd.get("metadata") or {}
    errs: list[fe.FieldError] = []
    group = spec.get("group", "")
    nm = spec.get("names") or {}
    plural = nm.get("plural", "")
    want = f"{plural}.{group}"
    if meta.get("name", "") != want:
        errs.append(fe.invalid("metadata.name", meta.get("name", ""), 'must be spec.names.plural+"."+spec.group'))
    sp = Path("spec")
    if not group:
        errs.append(fe.required("spec.group", ""))
    else:
        for msg in names.dns1123_subdomain(group):
            errs.append(fe.invalid("spec.group", group, msg))
        if len(group.split(".")) < 2:
            errs.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope", "")
    if not scope:
        errs.append(fe.required("spec.scope", ""))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(fe.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    errs += _validate_names(nm, sp.child("names"))
    versions = spec.get("versions") or []
    if not versions:
        errs.append(fe.required("spec.versions", "must have exactly one version marked as storage version"))
    storage = [v for v in versions if v.get("storage")]
    if versions and len(storage) != 1:
        errs.append(
            fe.invalid(
                "spec.versions",
                [v.get("name") for v in versions],
                "must have exactly one version marked as storage version",
            )
        )
    seen: set[str] = set()
    for i, v in enumerate(versions):
        vp = sp.child("versions").index(i)
        name = v.get("name", "")
        if not name:
            errs.append(fe.required(str(vp.child("name")), ""))
        else:
            for msg in names.dns1035_label(name):
                errs.append(fe.invalid(str(vp.child("name")), name, msg))
            if name in seen:
                errs.append(fe.invalid("spec.versions", name, "must contain unique version names"))
            seen.add(name)
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        sch_path = vp.child("schema", "openAPIV3Schema")
        if schema is None:
            errs.append(fe.required(str(sch_path), "schemas are required"))
        else:
            unchanged = name in old_schemas and old_schemas[name] == v.get("schema")
            errs += validate_structural(schema, sch_path, suppress_cost=unchanged)
        for j, col in enumerate(v.get("additionalPrinterColumns") or []):
            cp = vp.child("additionalPrinterColumns").index(j)
            if not col.get("name"):
                errs.append(fe.required(str(cp.child("name")), ""))
            if col.get("type") not in _COLUMN_TYPES:
                errs.append(fe.not_supported(str(cp.child("type")), col.get("type", ""), _COLUMN_TYPES))
            if not col.get("jsonPath"):
                errs.append(fe.required(str(cp.child("jsonPath")), ""))
        subs = v.get("subresources") or {}
        scale = subs.get("scale")
        if scale is not None:
            sp_ = vp.child("subresources", "scale")
            for key in ("specReplicasPath", "statusReplicasPath"):
                val = scale.get(key, "")
                if not val:
                    errs.append(fe.required(str(sp_.child(key)), ""))
                elif not val.startswith("."):
                    errs.append(fe.invalid(str(sp_.child(key)), val, "should be a valid JSONPath starting with ."))
            if scale.get("statusReplicasPath") and not scale["statusReplicasPath"].startswith(".status."):
                errs.append(
                    fe.invalid(
                        str(sp_.child("statusReplicasPath")),
                        scale["statusReplicasPath"],
                        "should be a json path under .status",
                    )
                )
            if scale.get("specReplicasPath") and not scale["specReplicasPath"].startswith(".spec."):
                errs.append(
                    fe.invalid(
                        str(sp_.child("specReplicasPath")),
                        scale["specReplicasPath"],
                        "should be a json path under .spec",
                    )
                )
    conv = spec.get("conversion") or {}
    strategy = conv.get("strategy", "None")
    if strategy not in ("None", "Webhook"):
        errs.append(fe.not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if strategy == "Webhook" and not conv.get("webhook"):
        errs.append(fe.required("spec.conversion.webhook", "required when strategy is set to Webhook"))
    elif strategy == "Webhook":
        wh = conv["webhook"]
        crv = wh.get("conversionReviewVersions") or []
        if not any(v in ("v1", "v1beta1") for v in crv):
            errs.append(
                fe.required(
                    "spec.conversion.webhook.conversionReviewVersions", "must include at least one of v1, v1beta1"
                )
            )
        cc = wh.get("clientConfig") or {}
        if bool(cc.get("url")) == bool(cc.get("service")):
            errs.append(
                fe.required("spec.conversion.webhook.clientConfig", "exactly one of url or service is required")
            )
        elif cc.get("url") and not str(cc["url"]).startswith("https://"):
            errs.append(
                fe.invalid(
                    "spec.conversion.webhook.clientConfig.url", cc["url"], "'https' is the only allowed URL scheme"
                )
            )
    elif conv.get("webhook") is not None:
        errs.append(fe.forbidden("spec.conversion.webhook", "should not be set when strategy is not set to Webhook"))
    return errs


def _validate_names(nm: dict, p: Path) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    for key in ("plural", "singular"):
        val = nm.get(key, "")
        if not val and key == "plural":
            errs.append(fe.required(str(p.child(key)), ""))
        elif val:
            for msg in names.dns1035_label(val):
                errs.append(fe.invalid(str(p.child(key)), val, msg))
    for key in ("kind", "listKind"):
        val = nm.get(key, "")
        if not val:
            errs.append(fe.required(str(p.child(key)), ""))
        elif val.lower() != val.lower().strip() or not val[:1].isalpha():
            errs.append(
                fe.invalid(
                    str(p.child(key)),
                    val,
                    "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
                )
            )
    for i, s in enumerate(nm.get("shortNames") or []):
        for msg in names.dns1035_label(s):
            errs.append(fe.invalid(str(p.child("shortNames").index(i)), s, msg))
    for i, s in enumerate(nm.get("categories") or []):
        for msg in names.dns1035_label(s):
            errs.append(fe.invalid(str(p.child("categories").index(i)), s, msg))
    return errs


class _CelCost:
    """upstream's CELSchemaContext, as far as cost goes: how often a node's data may repeat
    (MaxCardinality: the product of the maxItems/maxProperties above it, None when one is
    unset) and the schema's running total (TotalCost)."""

    def __init__(self, suppress: bool) -> None:
        self.suppress = suppress
        self.total = 0
        self.most_expensive: list[tuple[int, str]] = []

    def observe(self, path: str, cost: int) -> None:
        self.total = min(self.total + cost, _MAX_UINT64)
        if cost < crdcel.STATIC_CRD_COST_LIMIT // 100:  # under 1% of the limit: not named
            return
        self.most_expensive.append((cost, path))
        self.most_expensive.sort(key=lambda c: -c[0])
        del self.most_expensive[4:]


_MAX_UINT64 = 2**64 - 1


def _times(cost: int, cardinality: int) -> int:
    """multiplyWithOverflowGuard."""
    return 0 if cost == 0 else min(cost * cardinality, _MAX_UINT64)


def _child_cardinality(node: dict, cardinality: int | None) -> int | None:
    """childContext's MaxCardinality: the parent's times its extractMaxElements."""
    if cardinality is None:
        return None
    typ = node.get("type")
    if typ == "object":
        if node.get("additionalProperties") is not None:
            mp = node.get("maxProperties")
            return None if mp is None else min(cardinality * max(int(mp), 0), _MAX_UINT64)
        return cardinality
    if typ == "array":
        mi = node.get("maxItems")
        return None if mi is None else min(cardinality * max(int(mi), 0), _MAX_UINT64)
    return cardinality


def validate_structural(schema: Any, p: Path, suppress_cost: bool = False) -> list[fe.FieldError]:
    """The structural schema rules and x-kubernetes-validations compilation, with the rules'
    estimated costs held to upstream's per-expression and per-schema limits."""
    errs: list[fe.FieldError] = []
    if not isinstance(schema, dict):
        return [fe.invalid(str(p), schema, "must be an object")]
    if not schema.get("type") and not schema.get("x-kubernetes-preserve-unknown-fields"):
        errs.append(fe.required(str(p.child("type")), "must not be empty at the root"))
    elif schema.get("type") and schema.get("type") != "object":
        errs.append(fe.invalid(str(p.child("type")), schema.get("type"), "must be object at the root"))
    for key in ("nullable", "default"):
        if schema.get(key):
            errs.append(
                fe.forbidden(
                    str(p.child(key)),
                    "must be false at the root" if key == "nullable" else "must not be set at the root",
                )
            )
    props = schema.get("properties") or {}
    meta = props.get("metadata")
    if isinstance(meta, dict):
        extra = [k for k in meta if k not in ("type", "properties", "description")]
        mprops = meta.get("properties") or {}
        bad = [k for k in mprops if k not in ("name", "generateName")]
        if extra or bad:
            errs.append(
                fe.forbidden(
                    f"{p}.properties[metadata]",
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    cost = _CelCost(suppress_cost)
    _walk(schema, p, errs, root=True, cardinality=1, cost=cost)
    if cost.total > crdcel.STATIC_CRD_COST_LIMIT:
        for _c, path in cost.most_expensive:
            errs.append(
                fe.forbidden(
                    path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
                )
            )
        what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        errs.append(fe.forbidden(str(p), crdcel.cost_error_message(what, cost.total, crdcel.STATIC_CRD_COST_LIMIT)))
    return errs


_UNSUPPORTED = ("$ref", "definitions", "dependencies", "patternProperties", "id", "$schema", "additionalItems")


def _walk(
    node: dict,
    p: Path,
    errs: list[fe.FieldError],
    root: bool = False,
    uncorrelatable: Path | None = None,
    cardinality: int | None = None,
    cost: _CelCost | None = None,
) -> None:
    for key in _UNSUPPORTED:
        if key in node:
            errs.append(fe.forbidden(str(p.child(key)), f"{key} is not supported"))
    if node.get("uniqueItems") is True:
        errs.append(
            fe.forbidden(
                str(p.child("uniqueItems")),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    if node.get("additionalProperties") is False:
        errs.append(fe.forbidden(str(p.child("additionalProperties")), "additionalProperties cannot be set to false"))
    if isinstance(node.get("items"), list):
        errs.append(fe.forbidden(str(p.child("items")), "items must be a schema object and not an array"))
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            fe.invalid(str(p.child("x-kubernetes-preserve-unknown-fields")), False, "must be true or undefined")
        )
    if "default" in node and not root:
        errs += _default_errors(node, p)
    typ = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string")
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if typ is not None and typ not in _SCHEMA_TYPES:
        errs.append(fe.not_supported(str(p.child("type")), typ, list(_SCHEMA_TYPES)))
    if not root and not typ and not int_or_string and not preserve:
        errs.append(fe.required(str(p.child("type")), "must not be empty for specified object fields"))
    if int_or_string and typ:
        errs.append(fe.invalid(str(p.child("type")), typ, "must be empty if x-kubernetes-int-or-string is true"))
    if (
        node.get("properties")
        and isinstance(node.get("additionalProperties"), (dict, bool))
        and node.get("additionalProperties") is not False
    ):
        errs.append(
            fe.forbidden(
                str(p.child("additionalProperties")), "additionalProperties and properties are mutual exclusive"
            )
        )
    if typ == "array" and not isinstance(node.get("items"), dict):
        errs.append(fe.required(str(p.child("items")), "must be specified"))
    if node.get("x-kubernetes-embedded-resource") and typ != "object":
        errs.append(
            fe.invalid(str(p.child("type")), typ or "", "must be object if x-kubernetes-embedded-resource is true")
        )
    pattern = node.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            goregexp.compile(pattern)
        except goregexp.RegexpError as exc:
            errs.append(
                fe.invalid(str(p.child("pattern")), pattern, f"must be a valid regular expression, but isn't: {exc}")
            )
    lt = node.get("x-kubernetes-list-type")
    if lt is not None:
        if typ != "array":
            errs.append(fe.invalid(str(p.child("x-kubernetes-list-type")), lt, "must only be used on array type"))
        elif lt not in ("atomic", "set", "map"):
            errs.append(fe.not_supported(str(p.child("x-kubernetes-list-type")), lt, ["atomic", "map", "set"]))
        elif lt == "map":
            keys = node.get("x-kubernetes-list-map-keys") or []
            if not keys:
                errs.append(
                    fe.required(
                        str(p.child("x-kubernetes-list-map-keys")), "must not be empty if x-kubernetes-list-type is map"
                    )
                )
            item_props = ((node.get("items") or {}).get("properties")) or {}
            for k in keys:
                if k not in item_props:
                    errs.append(
                        fe.invalid(
                            str(p.child("x-kubernetes-list-map-keys")),
                            keys,
                            "entries must all be names of item properties",
                        )
                    )
                    break
    elif node.get("x-kubernetes-list-map-keys"):
        errs.append(
            fe.invalid(
                str(p.child("x-kubernetes-list-map-keys")),
                node["x-kubernetes-list-map-keys"],
                "must only be used if x-kubernetes-list-type is map",
            )
        )
    for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
        rp = p.child("x-kubernetes-validations").index(i)
        errs += _validate_rule(rule, rp, crdcel.root_node(node) if root else node, root, cardinality, cost)
        if uncorrelatable is not None and isinstance(rule, dict) and _uses_old_self(rule.get("rule", "")):
            errs.append(
                fe.invalid(
                    str(rp.child("rule")),
                    rule.get("rule", ""),
                    f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}",
                )
            )
    child = _child_cardinality(node, cardinality)
    for name, sub in (node.get("properties") or {}).items():
        if isinstance(sub, dict):
            if root and name == "metadata":
                continue
            _walk(sub, Path(f"{p}.properties[{name}]"), errs, False, uncorrelatable, child, cost)
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], p.child("additionalProperties"), errs, False, uncorrelatable, child, cost)
    if isinstance(node.get("items"), dict):
        # only listType=map items correlate between the old and the new object
        items_path = p.child("items")
        unc = uncorrelatable if uncorrelatable is not None or lt == "map" else items_path
        _walk(node["items"], items_path, errs, False, unc, child, cost)


def _uses_old_self(expr: str) -> bool:
    return crdcel.is_transition_rule(expr)


def _validate_rule(
    rule: dict, p: Path, node: dict, root: bool, cardinality: int | None = None, cost: _CelCost | None = None
) -> list[fe.FieldError]:
    """A rule compiled as it will run: ``self`` typed by the schema ``node`` it sits on;
    its estimated cost, times how often the node may repeat, held to the limits."""
    errs: list[fe.FieldError] = []
    expr = rule.get("rule", "")
    if not expr.strip():
        return [fe.required(str(p.child("rule")), "")]
    old_optional = bool(rule.get("optionalOldSelf")) and crdcel.is_transition_rule(expr)
    try:
        prog = crdcel.compile_rule(expr, node, root, old_optional)
        base = crdcel.rule_cost(prog, node, root)
        card = cardinality if cardinality is not None else crdcel.max_cardinality(node, root)
        expression_cost = _times(base, card)
        if cost is not None:
            if not cost.suppress and expression_cost > crdcel.STATIC_COST_LIMIT:
                message = crdcel.cost_error_message("estimated rule cost", expression_cost, crdcel.STATIC_COST_LIMIT)
                errs.append(fe.forbidden(str(p.child("rule")), message))
            cost.observe(str(p.child("rule")), expression_cost)
    except CELError as exc:
        errs.append(fe.invalid(str(p.child("rule")), expr, str(exc)))
    if rule.get("message") is not None:
        m = rule["message"]
        if not m.strip():
            errs.append(fe.required(str(p.child("message")), "message must be non-empty if specified"))
        elif "\n" in m:
            errs.append(fe.invalid(str(p.child("message")), m, "message must not contain line breaks"))
    if rule.get("messageExpression") is not None:
        try:
            mprog = crdcel.compile_rule(rule["messageExpression"], node, root, old_optional)
            if cost is not None:
                mcost = crdcel.rule_cost(mprog, node, root)
                if not cost.suppress and mcost > crdcel.STATIC_COST_LIMIT:
                    message = crdcel.cost_error_message(
                        "estimated messageExpression cost", mcost, crdcel.STATIC_COST_LIMIT
                    )
                    errs.append(fe.forbidden(str(p.child("messageExpression")), message))
                cost.observe(str(p.child("messageExpression")), mcost)
        except CELError as exc:
            errs.append(
                fe.invalid(str(p.child("messageExpression")), rule["messageExpression"], f"messageExpression {exc}")
            )
    if rule.get("reason") is not None and rule["reason"] not in _REASONS:
        errs.append(fe.not_supported(str(p.child("reason")), rule["reason"], _REASONS))
    if rule.get("optionalOldSelf") and not crdcel.is_transition_rule(expr):
        errs.append(fe.invalid(str(p.child("optionalOldSelf")), True, "may not be set if oldSelf is not used in rule"))
    return errs


def _default_errors(node: dict, p: Path) -> list[fe.FieldError]:
    """A default must validate against its own schema (upstream's defaults validation)."""
    from mockkube.machinery import structural

    value = node["default"]
    if value is None and node.get("nullable"):
        return []
    sub = {"type": "object", "properties": {"default": node}}
    return [
        fe.FieldError(e.type, f"{p}.{e.field}", e.value, e.detail) for e in structural.validate({"default": value}, sub)
    ]
