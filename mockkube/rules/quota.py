"""ResourceQuota usage (pure), as upstream's quota evaluators (pkg/quota/v1/evaluator/core)
with DRAExtendedResource on (KEP-5004).

Pods charge ``pods``, ``count/pods``, cpu/memory/ephemeral-storage requests and limits,
and ``requests.<name>`` for every extended resource name (explicit, or implicit
``deviceclass.resource.kubernetes.io/<class>``), whether a device plugin or DRA serves it.
ResourceClaims charge ``count/resourceclaims.resource.k8s.io`` and, per request,
``<class>.deviceclass.resource.k8s.io/devices`` (All: the worst case, 32; firstAvailable:
the largest alternative per class) plus, since v1.35, the class's implicit
``requests.deviceclass.resource.kubernetes.io/<class>`` and its explicit
``requests.<extendedResourceName>``; for the scheduler's special claim the name the pod
itself asked for (and so already charged) is skipped, so each device counts once per name.
"""

from __future__ import annotations

from typing import Callable, Iterable

from mockkube.dra.extended import IMPLICIT_PREFIX, is_dra_extended_resource_name, is_extended_resource_claim
from mockkube.machinery.quantity import Quantity, parse_quantity

ZERO = parse_quantity("0")
ONE = parse_quantity("1")
ALLOCATION_RESULTS_MAX_SIZE = 32
CLAIMS_PER_CLASS = ".deviceclass.resource.k8s.io/devices"
IMPLICIT_REQUESTS_PREFIX = "requests." + IMPLICIT_PREFIX
POD_COUNT = "count/pods"
CLAIM_COUNT = "count/resourceclaims.resource.k8s.io"
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_POD_RESOURCES = {
    POD_COUNT,
    "pods",
    *(_COMPUTE),
    *(f"requests.{r}" for r in _COMPUTE),
    *(f"limits.{r}" for r in _COMPUTE),
}

Usage = dict[str, Quantity]


def _add(into: Usage, name: str, q: Quantity) -> None:
    into[name] = into.get(name, ZERO) + q


def _q(v: object) -> Quantity:
    try:
        return parse_quantity(v)  # type: ignore[arg-type]
    except Exception:
        return ZERO


def _effective(pod: dict, field: str) -> Usage:
    """upstream PodRequests/PodLimits: max(long-lived sum, each init container plus the
    sidecars started before it), plus overhead. Unlike mockkube.machinery.podrequests
    (scheduler units) this keeps exact Quantities, as quota status shows them, and also
    serves limits."""
    spec = pod.get("spec") or {}
    total: Usage = {}
    for c in spec.get("containers") or ():
        for k, v in ((c.get("resources") or {}).get(field) or {}).items():
            _add(total, k, _q(v))
    sidecars: Usage = {}
    peak: Usage = {}
    for c in spec.get("initContainers") or ():
        res = {k: _q(v) for k, v in ((c.get("resources") or {}).get(field) or {}).items()}
        if c.get("restartPolicy") == "Always":
            for k, v in res.items():
                _add(sidecars, k, v)
                _add(total, k, v)
            step = sidecars
        else:
            step = dict(sidecars)
            for k, v in res.items():
                _add(step, k, v)
        for k, v in step.items():
            if k not in peak or peak[k] < v:
                peak[k] = v
    for k, v in peak.items():
        if k not in total or total[k] < v:
            total[k] = v
    for k, v in (spec.get("overhead") or {}).items():
        _add(total, k, _q(v))
    return total


def is_terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pod_usage(pod: dict) -> Usage:
    """What a pod charges (a terminal pod only its object count)."""
    out: Usage = {POD_COUNT: ONE}
    if is_terminal(pod):
        return out
    out["pods"] = ONE
    requests = _effective(pod, "requests")
    limits = _effective(pod, "limits")
    for r in _COMPUTE:
        if r in requests:
            out[r] = requests[r]
            out[f"requests.{r}"] = requests[r]
        if r in limits:
            out[f"limits.{r}"] = limits[r]
    for k, v in requests.items():
        if k.startswith("hugepages-"):
            out[k] = v
            out[f"requests.{k}"] = v
        elif is_dra_extended_resource_name(k):
            out[f"requests.{k}"] = v
    return out


def _pod_charged(pod: dict) -> list[tuple[str, Quantity]]:
    """upstream verifyOwner: the requests.<name> amounts the pod charged itself for, one
    entry per long-lived container plus the init containers' excess."""
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    out: list[tuple[str, Quantity]] = []
    sums: Usage = {}
    for i, c in enumerate(inits + list(spec.get("containers") or ())):
        for r, v in ((c.get("resources") or {}).get("requests") or {}).items():
            if not is_dra_extended_resource_name(r):
                continue
            if i < len(inits) and c.get("restartPolicy") != "Always":
                sums.setdefault(r, ZERO)
                continue
            out.append(("requests." + r, _q(v)))
            _add(sums, r, _q(v))
    effective = _effective(pod, "requests")
    for r, s in sums.items():
        if r in effective and s < effective[r]:
            out.append(("requests." + r, effective[r] - s))
    return out


def claim_usage(claim: dict, class_names: dict[str, str], owner: Callable[[dict], dict | None]) -> Usage:
    """What a ResourceClaim charges. `class_names`: DeviceClass -> its extendedResourceName;
    `owner`: the claim's controlling pod, if it exists."""
    out: Usage = {CLAIM_COUNT: ONE}
    reqs: list[tuple[str, Quantity]] | None = None
    if is_extended_resource_claim(claim):
        pod = owner(claim)
        if pod is not None:
            ext = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
            if not ext or ext == (claim.get("metadata") or {}).get("name"):
                reqs = _pod_charged(pod)

    def charge(into: Usage, n: int, class_name: str) -> None:
        nonlocal reqs
        q = parse_quantity(str(n))
        _add(into, class_name + CLAIMS_PER_CLASS, q)
        implicit = IMPLICIT_REQUESTS_PREFIX + class_name
        explicit = "requests." + class_names[class_name] if class_names.get(class_name) else None
        hit_implicit = hit_explicit = None
        if reqs is not None:
            hit_implicit = next((i for i, (n2, q2) in enumerate(reqs) if n2 == implicit and q2 == q), None)
            if hit_implicit is None and explicit:
                hit_explicit = next((i for i, (n2, q2) in enumerate(reqs) if n2 == explicit and q2 == q), None)
        if hit_implicit is None or hit_explicit is not None:
            _add(into, implicit, q)
        if explicit and (hit_implicit is not None or hit_explicit is None):
            _add(into, explicit, q)
        if hit_implicit is not None:
            del reqs[hit_implicit]  # type: ignore[union-attr]
        elif hit_explicit is not None:
            del reqs[hit_explicit]  # type: ignore[union-attr]

    for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        if r.get("firstAvailable"):
            best: dict[str, int] = {}
            for sub in r["firstAvailable"]:
                n = _count(sub)
                cls = sub.get("deviceClassName", "")
                if n > best.get(cls, 0):
                    best[cls] = n
            for cls, n in best.items():
                charge(out, n, cls)
        elif r.get("exactly"):
            charge(out, _count(r["exactly"]), r["exactly"].get("deviceClassName", ""))
    return out


def _count(req: dict) -> int:
    mode = req.get("allocationMode") or "ExactCount"
    if mode == "ExactCount":
        return int(req.get("count") or 1)
    if mode == "All":
        return ALLOCATION_RESULTS_MAX_SIZE
    return 0


def pod_matches(resource: str) -> bool:
    """podEvaluator.MatchingResources."""
    if resource in _POD_RESOURCES or resource.startswith("hugepages-") or resource.startswith("requests.hugepages-"):
        return True
    return _extended_quota_name(resource)


def _extended_quota_name(resource: str) -> bool:
    if not resource.startswith("requests."):
        return False
    native = "/" not in resource or "kubernetes.io/" in resource
    return not native or resource.startswith(IMPLICIT_REQUESTS_PREFIX)


def claim_matches(resource: str) -> bool:
    """claimEvaluator.MatchingResources."""
    return resource == CLAIM_COUNT or resource.endswith(CLAIMS_PER_CLASS) or _extended_quota_name(resource)


def class_extended_names(classes: Iterable[dict]) -> dict[str, str]:
    """DeviceClass name -> spec.extendedResourceName (the quota's class mapping)."""
    return {
        (c.get("metadata") or {}).get("name", ""): (c.get("spec") or {}).get("extendedResourceName")
        for c in classes
        if (c.get("spec") or {}).get("extendedResourceName")
    }


def total_usage(
    hard: dict,
    pods: Iterable[dict],
    claims: Iterable[dict],
    class_names: dict[str, str],
    owner: Callable[[dict], dict | None],
) -> dict[str, str]:
    """status.used for a quota with `hard`: every hard resource, summed over the namespace."""
    used: Usage = {k: ZERO for k in hard}
    for p in pods:
        for k, v in pod_usage(p).items():
            if k in used and pod_matches(k):
                used[k] = used[k] + v
    for c in claims:
        for k, v in claim_usage(c, class_names, owner).items():
            if k in used and claim_matches(k):
                used[k] = used[k] + v
    return {k: v.canonical() for k, v in sorted(used.items())}


def exceeded(quota: dict, delta: Usage, matches: Callable[[str], bool]) -> str | None:
    """upstream admission's check of one quota: None when `delta` fits, else the
    "exceeded quota: ..." message. A matching quota without status is refused too."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    relevant = sorted(k for k in hard if matches(k) and k in delta and not delta[k].is_zero())
    if not relevant:
        return None
    name = (quota.get("metadata") or {}).get("name", "")
    status = quota.get("status") or {}
    used = status.get("used")
    if used is None or any(k not in used for k in relevant) or not status.get("hard"):
        return f"status unknown for quota: {name}, resources: {','.join(relevant)}"
    over = [k for k in relevant if _q(hard[k]) < _q(used[k]) + delta[k]]
    if not over:
        return None

    def fmt(values: dict) -> str:
        return ",".join(f"{k}={values[k]}" for k in over)

    return (
        f"exceeded quota: {name}, requested: {fmt({k: delta[k].canonical() for k in over})}, "
        f"used: {fmt({k: _q(used[k]).canonical() for k in over})}, "
        f"limited: {fmt({k: _q(hard[k]).canonical() for k in over})}"
    )


class QuotaAdmission:
    """The ResourceQuota admission plugin for creates: refuses a pod or ResourceClaim that
    would exceed a quota of its namespace (403 Forbidden "exceeded quota: ..."), and,
    as upstream, charges the quota's status.used at once so that concurrent creates
    cannot both slip under the limit; the quota controller recomputes it afterwards."""

    def __init__(self, resources) -> None:
        self.resources = resources
        reg = resources.registry
        self.quotas_rt = reg.get("", "v1", "resourcequotas")
        self.pods_rt = reg.get("", "v1", "pods")
        self.claims_rt = reg.get("resource.k8s.io", "v1", "resourceclaims")
        self.classes_rt = reg.get("resource.k8s.io", "v1", "deviceclasses")

    def __call__(self, rt, obj: dict, shown: str, dry_run: bool) -> None:
        from mockkube.machinery import errors

        is_pod = rt.group == "" and rt.plural == "pods"
        if not is_pod and not (rt.group == "resource.k8s.io" and rt.plural == "resourceclaims"):
            return
        ns = (obj.get("metadata") or {}).get("namespace", "")
        quotas = self.resources.store.objects(self.quotas_rt, ns)
        if not quotas:
            return
        if is_pod:
            delta, matches = pod_usage(obj), pod_matches
        else:
            delta, matches = claim_usage(obj, self.class_names(), self.owner), claim_matches
        charged = []
        for quota in quotas:
            msg = exceeded(quota, delta, matches)
            if msg is not None:
                raise errors.forbidden(rt.plural, rt.group, shown, msg)
            hard = (quota.get("spec") or {}).get("hard") or {}
            if any(matches(k) and k in delta for k in hard):
                charged.append(quota)
        if dry_run:
            return
        for quota in charged:
            self._charge(quota, delta, matches)

    def class_names(self) -> dict[str, str]:
        return class_extended_names(self.resources.store.objects(self.classes_rt))

    def owner(self, claim: dict) -> dict | None:
        meta = claim.get("metadata") or {}
        for o in meta.get("ownerReferences") or ():
            if o.get("controller") and o.get("kind") == "Pod" and o.get("apiVersion") == "v1":
                e = self.resources.store.get(self.pods_rt, meta.get("namespace", ""), o.get("name", ""))
                if e is not None and e.obj["metadata"].get("uid") == o.get("uid"):
                    return e.obj
        return None

    def _charge(self, quota: dict, delta: Usage, matches: Callable[[str], bool]) -> None:
        from mockkube.apiserver.rest import WriteOptions
        from mockkube.machinery import errors
        from mockkube.machinery import meta as objmeta

        m = quota["metadata"]
        for _ in range(5):
            e = self.resources.store.get(self.quotas_rt, m.get("namespace", ""), m["name"])
            if e is None:
                return
            upd = objmeta.clone(e.obj)
            used = upd.setdefault("status", {}).setdefault("used", {})
            for k in (upd.get("spec") or {}).get("hard") or {}:
                if matches(k) and k in delta:
                    used[k] = (_q(used.get(k, "0")) + delta[k]).canonical()
            try:
                self.resources.update(
                    self.quotas_rt,
                    m.get("namespace", ""),
                    m["name"],
                    upd,
                    WriteOptions(field_manager="kube-apiserver"),
                    subresource="status",
                    check_structure=False,
                )
                return
            except errors.APIError as err:
                if err.code != 409:
                    raise
