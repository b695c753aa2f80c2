"""Role aggregation as kube-controller-manager's clusterrole-aggregation controller computes it
(and the bootstrap policy's aggregated roles): the rules an aggregationRule selects."""

from __future__ import annotations

from mockkube.machinery.selectors import label_selector_from_object


def aggregated_rules(role: dict, roles: list[dict]) -> list[dict]:
    """The rules ``role``'s aggregationRule selects from ``roles``."""
    selectors = [
        label_selector_from_object(s) for s in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ()
    ]
    out: list[dict] = []
    for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
        if other["metadata"]["name"] == role["metadata"]["name"]:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(s.matches(labels) for s in selectors):
            for rule in other.get("rules") or ():
                if rule not in out:
                    out.append(rule)
    return out
