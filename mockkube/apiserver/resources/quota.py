"""ResourceQuota admission: a create that would take a namespace past its quota is refused
with upstream's 403 message, and the quota's ``status.used`` is charged in the same write
(upstream's quota admission plugin). The usage rules are pure (mockkube/rules/quota.py), shared with the quota controller."""

from __future__ import annotations

from typing import Callable

from mockkube.rules.quota import (
    Usage,
    _q,
    claim_matches,
    claim_usage,
    class_extended_names,
    exceeded,
    pod_matches,
    pod_usage,
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
