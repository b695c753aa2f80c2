"""A pod's parsed inter-pod affinity terms (kube-scheduler's ``framework.PodInfo`` and
``AffinityTerm``): parsed once when a pod enters the node cache, and once per cycle for
the pod being scheduled."""

from __future__ import annotations

from mockkube.machinery import errors
from mockkube.machinery.selectors import LabelSelector, label_selector_from_object

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class AffinityTerm:
    """A PodAffinityTerm with its selectors parsed; ``namespaces`` as upstream's
    getNamespacesFromPodAffinityTerm (the pod's own namespace when the term names none
    and has no namespaceSelector)."""

    __slots__ = ("namespaces", "selector", "topology_key", "ns_selector")

    def __init__(
        self, namespaces: set[str], selector: LabelSelector, topology_key: str, ns_selector: LabelSelector
    ) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.ns_selector = ns_selector

    def matches(self, pod: dict, ns_labels: dict | None) -> bool:
        """AffinityTerm.Matches: the pod's namespace is named or selected, and its labels match."""
        meta = pod.get("metadata") or {}
        if meta.get("namespace", "") in self.namespaces or self.ns_selector.matches(ns_labels):
            return self.selector.matches(meta.get("labels") or {})
        return False


class WeightedTerm:
    __slots__ = ("term", "weight")

    def __init__(self, term: AffinityTerm, weight: int) -> None:
        self.term = term
        self.weight = weight


def _term(pod: dict, t: dict) -> AffinityTerm:
    ns = (pod.get("metadata") or {}).get("namespace", "")
    names = t.get("namespaces") or []
    ns_sel_obj = t.get("namespaceSelector")
    namespaces = {ns} if not names and ns_sel_obj is None else set(names)
    return AffinityTerm(
        namespaces,
        label_selector_from_object(t.get("labelSelector")),
        t.get("topologyKey") or "",
        label_selector_from_object(ns_sel_obj),
    )


def _terms(pod: dict, raw: list) -> list[AffinityTerm]:
    errs = []
    out = []
    for t in raw or ():
        try:
            out.append(_term(pod, t or {}))
        except errors.APIError as e:
            errs.append(e.message)
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return out


def _weighted(pod: dict, raw: list) -> list[WeightedTerm]:
    out = []
    errs = []
    for w in raw or ():
        try:
            out.append(WeightedTerm(_term(pod, (w or {}).get("podAffinityTerm") or {}), int(w.get("weight") or 0)))
        except errors.APIError as e:
            errs.append(e.message)
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return out


class PodInfo:
    __slots__ = (
        "pod",
        "required_affinity",
        "required_anti_affinity",
        "preferred_affinity",
        "preferred_anti_affinity",
        "parse_error",
    )

    def __init__(self, pod: dict) -> None:
        self.pod = pod
        aff = (pod.get("spec") or {}).get("affinity") or {}
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        errs: list[str] = []
        self.required_affinity: list[AffinityTerm] = []
        self.required_anti_affinity: list[AffinityTerm] = []
        self.preferred_affinity: list[WeightedTerm] = []
        self.preferred_anti_affinity: list[WeightedTerm] = []
        for attr, label, fn, raw in (
            ("required_affinity", "requiredAffinityTerms", _terms, pa.get(REQUIRED)),
            ("required_anti_affinity", "requiredAntiAffinityTerms", _terms, paa.get(REQUIRED)),
            ("preferred_affinity", "preferredAffinityTerms", _weighted, pa.get(PREFERRED)),
            ("preferred_anti_affinity", "preferredAntiAffinityTerms", _weighted, paa.get(PREFERRED)),
        ):
            try:
                setattr(self, attr, fn(pod, raw))
            except ValueError as e:
                errs.append(f"{label}: {e}")
        # utilerrors.NewAggregate: one error prints alone, several as "[a, b]"
        self.parse_error = errs[0] if len(errs) == 1 else ("[" + ", ".join(errs) + "]" if errs else "")


def with_affinity(pod: dict) -> bool:
    """podWithAffinity: the pod has podAffinity or podAntiAffinity (required or preferred)."""
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return aff.get("podAffinity") is not None or aff.get("podAntiAffinity") is not None


def with_required_anti_affinity(pod: dict) -> bool:
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return bool((aff.get("podAntiAffinity") or {}).get(REQUIRED))
