"""flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations (+status):
``pkg/apis/flowcontrol/validation``, the v1 defaults, the strategies of
``pkg/registry/flowcontrol`` (generation counts spec changes; status is the subresource's).
The bootstrap objects are ``mockkube/rules/flowcontrol_bootstrap.py``; no request is
actually queued or rejected by priority (docs/compatibility.md)."""

from __future__ import annotations

import math

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource
from mockkube.rules.flowcontrol_bootstrap import MANDATORY_NAMES

MAX_MATCHING_PRECEDENCE = 10000
MAX_QUEUES = 10 * 1000 * 1000
MAX_HASH_BITS = 60
_DISTINGUISHERS = ["ByNamespace", "ByUser"]
_VERBS = {"get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy"}
_SUBJECT_KINDS = ["Group", "ServiceAccount", "User"]
_NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def _ns_errors(ns: str) -> list[str]:
    return names.name_is_dns_label(ns)


def _subject(s: dict, path: str) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    kind = s.get("kind")
    own = {"ServiceAccount": "serviceAccount", "User": "user", "Group": "group"}.get(kind or "")
    if own is None:
        return [fe.not_supported(f"{path}.kind", kind or "", _SUBJECT_KINDS)]
    body = s.get(own)
    if body is None:
        errs.append(fe.required(f"{path}.{own}", f"{own} is required when subject kind is '{kind}'"))
    elif own == "serviceAccount":
        name, ns = body.get("name") or "", body.get("namespace") or ""
        if not name:
            errs.append(fe.required(f"{path}.serviceAccount.name", ""))
        elif name != "*":
            errs += [fe.invalid(f"{path}.serviceAccount.name", name, m) for m in names.name_is_dns_subdomain(name)]
        if ns:
            errs += [fe.invalid(f"{path}.serviceAccount.namespace", ns, m) for m in _ns_errors(ns)]
        else:
            errs.append(fe.required(f"{path}.serviceAccount.namespace", "must specify namespace for service account"))
    elif not body.get("name"):
        errs.append(fe.required(f"{path}.{own}.name", ""))
    order = {
        "ServiceAccount": (("user", "User"), ("group", "Group")),
        "User": (("serviceAccount", "ServiceAccount"), ("group", "Group")),
        "Group": (("serviceAccount", "ServiceAccount"), ("user", "User")),
    }[kind]
    for other, other_kind in order:
        if s.get(other) is not None:
            errs.append(
                fe.forbidden(f"{path}.{other}", f"{other} is forbidden when subject kind is not '{other_kind}'")
            )
    return errs


def _verbs(verbs: list, path: str) -> list[fe.FieldError]:
    if not verbs:
        return [fe.required(f"{path}.verbs", "verbs must contain at least one value")]
    if "*" in verbs:
        return (
            [fe.invalid(f"{path}.verbs", verbs, "if '*' is present, must not specify other verbs")]
            if len(verbs) > 1
            else []
        )
    if not set(verbs) <= _VERBS:
        return [fe.not_supported(f"{path}.verbs", verbs, sorted(_VERBS))]
    return []


def _url_error(url: str, path: str) -> fe.FieldError | None:
    if not url:
        return fe.invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return fe.invalid(path, url, "must start with slash")
    if " " in url:
        return fe.invalid(path, url, "must not contain white-space")
    if "//" in url:
        return fe.invalid(path, url, "must not contain double slash")
    n = url.count("*")
    if n > 1 or (n == 1 and url[-2:] != "/*"):
        return fe.invalid(path, url, "wildcard can only do suffix matching")
    return None


def _resource_rule(r: dict, path: str) -> list[fe.FieldError]:
    errs = _verbs(r.get("verbs") or [], path)
    groups, resources, nss = r.get("apiGroups") or [], r.get("resources") or [], r.get("namespaces") or []
    if not groups:
        errs.append(fe.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    elif len(groups) > 1 and "*" in groups:
        errs.append(fe.invalid(f"{path}.apiGroups", groups, "if '*' is present, must not specify other api groups"))
    if not resources:
        errs.append(fe.required(f"{path}.resources", "resource rules must supply at least one resource"))
    elif len(resources) > 1 and "*" in resources:
        errs.append(fe.invalid(f"{path}.resources", resources, "if '*' is present, must not specify other resources"))
    if not nss and not r.get("clusterScope"):
        errs.append(
            fe.required(
                f"{path}.namespaces", "resource rules that are not cluster scoped must supply at least one namespace"
            )
        )
    elif "*" in nss:
        if len(nss) > 1:
            errs.append(fe.invalid(f"{path}.namespaces", nss, "if '*' is present, must not specify other namespaces"))
    else:
        for i, ns in enumerate(nss):
            errs += [fe.invalid(f"{path}.namespaces[{i}]", ns, _NS_INTRO + m) for m in _ns_errors(ns)]
    return errs


def _non_resource_rule(r: dict, path: str) -> list[fe.FieldError]:
    errs = _verbs(r.get("verbs") or [], path)
    urls = r.get("nonResourceURLs") or []
    if not urls:
        errs.append(fe.required(f"{path}.nonResourceURLs", "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            errs.append(
                fe.invalid(
                    f"{path}.nonResourceURLs", urls, "if '*' is present, must not specify other non-resource URLs"
                )
            )
    else:
        for i, u in enumerate(urls):
            e = _url_error(u, f"{path}.nonResourceURLs[{i}]")
            if e is not None:
                errs.append(e)
    return errs


def _conditions(status: dict | None) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    seen: set = set()
    for i, c in enumerate((status or {}).get("conditions") or []):
        t = c.get("type") or ""
        if t in seen:
            errs.append(fe.duplicate(f"status.conditions[{i}].type", t))
        seen.add(t)
        if not t:
            errs.append(fe.required(f"status.conditions[{i}].type", "must not be empty"))
    return errs


def validate_flow_schema(fs: dict) -> list[fe.FieldError]:
    name = (fs.get("metadata") or {}).get("name", "")
    spec = fs.get("spec") or {}
    errs: list[fe.FieldError] = []
    mp = spec.get("matchingPrecedence", 0)
    if mp <= 0:
        errs.append(fe.invalid("spec.matchingPrecedence", mp, "must be a positive value"))
    if mp > MAX_MATCHING_PRECEDENCE:
        errs.append(fe.invalid("spec.matchingPrecedence", mp, f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if mp == 1 and name != "exempt":
        errs.append(
            fe.invalid("spec.matchingPrecedence", mp, "only the schema named 'exempt' may have matchingPrecedence 1")
        )
    dm = spec.get("distinguisherMethod")
    if dm is not None and dm.get("type") not in _DISTINGUISHERS:
        errs.append(fe.not_supported("spec.distinguisherMethod.type", dm, _DISTINGUISHERS))
    pl = (spec.get("priorityLevelConfiguration") or {}).get("name") or ""
    if pl:
        errs += [fe.invalid("spec.priorityLevelConfiguration.name", pl, m) for m in names.name_is_dns_subdomain(pl)]
    else:
        errs.append(fe.required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
    for i, rule in enumerate(spec.get("rules") or []):
        p = f"spec.rules[{i}]"
        subjects = rule.get("subjects") or []
        if subjects:
            for j, s in enumerate(subjects):
                errs += _subject(s, f"{p}.subjects[{j}]")
        else:
            errs.append(fe.required(f"{p}.subjects", "subjects must contain at least one value"))
        rrs, nrrs = rule.get("resourceRules") or [], rule.get("nonResourceRules") or []
        if not rrs and not nrrs:
            errs.append(fe.required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
        for j, r in enumerate(rrs):
            errs += _resource_rule(r, f"{p}.resourceRules[{j}]")
        for j, r in enumerate(nrrs):
            errs += _non_resource_rule(r, f"{p}.nonResourceRules[{j}]")
    mand = MANDATORY_NAMES["flowschemas"].get(name)
    if mand is not None and _normal(spec) != _normal(mand["spec"]):
        errs.append(fe.invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs + _conditions(fs.get("status"))


def _normal(v):
    """For the mandatory objects' comparison: empty lists and false flags as absent
    (apiequality.Semantic.DeepEqual on the decoded Go structs)."""
    if isinstance(v, dict):
        return {k: _normal(x) for k, x in v.items() if x not in (None, False, [], {})}
    if isinstance(v, list):
        return [_normal(x) for x in v]
    return v


def _entropy_bits(deck: int, hand: int) -> int:
    """shufflesharding.RequiredEntropyBits."""
    return math.ceil(math.log2(deck) * hand) if deck > 0 and hand > 0 else 0


def _limit_response(lr: dict, path: str) -> list[fe.FieldError]:
    typ = lr.get("type")
    q = lr.get("queuing")
    if typ == "Reject":
        if q is not None:
            return [fe.forbidden(f"{path}.queuing", "must be nil if limited.limitResponse.type is not Limited")]
        return []
    if typ != "Queue":
        return [fe.not_supported(f"{path}.type", typ or "", ["Queue", "Reject"])]
    if q is None:
        return [fe.required(f"{path}.queuing", "must not be empty if limited.limitResponse.type is Limited")]
    errs: list[fe.FieldError] = []
    qp = f"{path}.queuing"
    qll, queues, hand = q.get("queueLengthLimit", 0), q.get("queues", 0), q.get("handSize", 0)
    if qll <= 0:
        errs.append(fe.invalid(f"{qp}.queueLengthLimit", qll, "must be positive"))
    if queues <= 0:
        errs.append(fe.invalid(f"{qp}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(fe.invalid(f"{qp}.queues", queues, f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        errs.append(fe.invalid(f"{qp}.handSize", hand, "must be positive"))
    elif hand > queues:
        errs.append(fe.invalid(f"{qp}.handSize", hand, f"should not be greater than queues ({queues})"))
    elif _entropy_bits(queues, hand) > MAX_HASH_BITS:
        errs.append(
            fe.invalid(
                f"{qp}.handSize",
                hand,
                f"required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}",
            )
        )
    return errs


def _percent(v, path: str) -> list[fe.FieldError]:
    if v is not None and not 0 <= v <= 100:
        return [fe.invalid(path, v, "must be between 0 and 100, inclusive")]
    return []


def validate_priority_level(pl: dict) -> list[fe.FieldError]:
    name = (pl.get("metadata") or {}).get("name", "")
    spec = pl.get("spec") or {}
    typ = spec.get("type")
    errs: list[fe.FieldError] = []
    if (name == "exempt") != (typ == "Exempt"):
        errs.append(fe.invalid("spec.type", typ or "", "type must be 'Exempt' if and only if name is 'exempt'"))
    if typ == "Exempt":
        if spec.get("limited") is not None:
            errs.append(fe.forbidden("spec.limited", "must be nil if the type is not Limited"))
        ex = spec.get("exempt")
        if ex is not None:
            ncs = ex.get("nominalConcurrencyShares")
            if ncs is not None and ncs < 0:
                errs.append(fe.invalid("spec.exempt.nominalConcurrencyShares", ncs, "must be a non-negative integer"))
            errs += _percent(ex.get("lendablePercent"), "spec.exempt.lendablePercent")
    elif typ == "Limited":
        if spec.get("exempt") is not None:
            errs.append(fe.forbidden("spec.exempt", "must be nil if the type is Limited"))
        lim = spec.get("limited")
        if lim is None:
            errs.append(fe.required("spec.limited", "must not be empty when type is Limited"))
        else:
            ncs = lim.get("nominalConcurrencyShares", 0)
            if ncs is not None and ncs < 0:
                errs.append(fe.invalid("spec.limited.nominalConcurrencyShares", ncs, "must be a non-negative integer"))
            errs += _limit_response(lim.get("limitResponse") or {}, "spec.limited.limitResponse")
            errs += _percent(lim.get("lendablePercent"), "spec.limited.lendablePercent")
            blp = lim.get("borrowingLimitPercent")
            if blp is not None and blp < 0:
                errs.append(
                    fe.invalid(
                        "spec.limited.borrowingLimitPercent", blp, "if specified, must be a non-negative integer"
                    )
                )
    else:
        errs.append(fe.not_supported("spec.type", typ or "", ["Exempt", "Limited"]))
    mand = MANDATORY_NAMES["prioritylevelconfigurations"].get(name)
    if mand is not None:
        want, have = _normal(mand["spec"]), _normal(spec)
        if name == "exempt":  # the exempt level's `exempt` settings are the administrator's to tune
            want.pop("exempt", None)
            have.pop("exempt", None)
        if want != have:
            errs.append(fe.invalid("spec", spec, f"spec of '{name}' must equal the fixed value"))
    return errs + _conditions(pl.get("status"))


class FlowSchemaStrategy(SpecStatusStrategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
            spec["matchingPrecedence"] = 1000

    def initial_status(self, obj: dict) -> dict:
        return {}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_flow_schema(obj)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return _conditions(new.get("status"))


class PriorityLevelConfigurationStrategy(SpecStatusStrategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        ex = spec.get("exempt")
        if isinstance(ex, dict):
            ex.setdefault("nominalConcurrencyShares", 0)
            ex.setdefault("lendablePercent", 0)
        lim = spec.get("limited")
        if isinstance(lim, dict):
            if lim.get("nominalConcurrencyShares") is None:
                lim["nominalConcurrencyShares"] = 30
            if lim.get("lendablePercent") is None:
                lim["lendablePercent"] = 0
            q = (lim.get("limitResponse") or {}).get("queuing")
            if isinstance(q, dict):
                for k, v in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
                    if not q.get(k):
                        q[k] = v

    def initial_status(self, obj: dict) -> dict:
        return {}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_priority_level(obj)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return _conditions(new.get("status"))


def _status(kind: str) -> tuple[Subresource, ...]:
    return (Subresource("status", kind),)


flowschemas = REGISTRY.add(
    ResourceType(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "FlowSchema",
        "flowschemas",
        namespaced=False,
        subresources=_status("FlowSchema"),
        strategy=FlowSchemaStrategy(),
    )
)
prioritylevelconfigurations = REGISTRY.add(
    ResourceType(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        namespaced=False,
        subresources=_status("PriorityLevelConfiguration"),
        strategy=PriorityLevelConfigurationStrategy(),
    )
)
