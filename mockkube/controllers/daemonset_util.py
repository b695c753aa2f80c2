"""Pure DaemonSet logic (upstream pkg/controller/daemon and pkg/controller/daemon/util):
which nodes should run a daemon pod, the pod a DaemonSet creates for a node, the default
tolerations, the ControllerRevision of a template, the rolling-update plan and the status.
No I/O, no clock: ``now`` (epoch seconds) is passed in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mockkube.controllers import controllerref as cref
from mockkube.controllers.deployment_util import compute_hash, scaled_value
from mockkube.controllers.replicaset import is_pod_available, is_pod_ready
from mockkube.machinery.meta import clone
from mockkube.machinery.selectors import node_selector_matches, selector_from_set
from mockkube.machinery.tolerations import tolerated

REVISION_HASH = "controller-revision-hash"  # apps.ControllerRevisionHashLabelKey
TEMPLATE_GENERATION = "pod-template-generation"  # apps.DaemonSetTemplateGenerationKey

# util.AddOrUpdateDaemonPodTolerations: what every daemon pod tolerates
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
HOST_NETWORK_TOLERATION = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


# --- where daemon pods belong ---------------------------------------------------------------


def node_should_run(node: dict, ds: dict) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (should run, should continue running). A pod keeps running
    on a node whose NoSchedule taints it does not tolerate, but not under NoExecute ones."""
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    name = (node.get("metadata") or {}).get("name", "")
    if spec.get("nodeName") and spec["nodeName"] != name:
        return False, False
    if not _fits_affinity(spec, node):
        return False, False
    tolerations = add_default_tolerations(list(spec.get("tolerations") or ()), spec)
    taints = (node.get("spec") or {}).get("taints") or ()
    untolerated = [
        t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute") and not tolerated(tolerations, t)
    ]
    if not untolerated:
        return True, True
    return False, not any(t.get("effect") == "NoExecute" for t in untolerated)


def _fits_affinity(pod_spec: dict, node: dict) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    if pod_spec.get("nodeSelector") and not selector_from_set(pod_spec["nodeSelector"]).matches(labels):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return node_selector_matches(required, node) if required is not None else True


def add_default_tolerations(tolerations: list[dict], pod_spec: dict) -> list[dict]:
    out = [dict(t) for t in tolerations]
    extra = DEFAULT_TOLERATIONS + ([HOST_NETWORK_TOLERATION] if pod_spec.get("hostNetwork") else [])
    for want in extra:
        if not any(
            t.get("key") == want["key"]
            and t.get("effect") == want["effect"]
            and (t.get("operator") or "Equal") == "Exists"
            for t in out
        ):
            out.append(dict(want))
    return out


def pod_node(pod: dict) -> str:
    """The node a daemon pod is for: its nodeName, else the node-name affinity it was made with."""
    name = (pod.get("spec") or {}).get("nodeName")
    if name:
        return name
    terms = (
        (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or ()
    for t in terms:
        for f in (t or {}).get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or ()) == 1:
                return f["values"][0]
    return ""


def _pin_to_node(affinity: dict | None, node: str) -> dict:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become one term that
    names the node (preferred terms and other affinities stay)."""
    aff = clone(affinity or {})
    na = aff.setdefault("nodeAffinity", {})
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }
    return aff


# --- revisions ---------------------------------------------------------------------------------


def template_hash(ds: dict) -> str:
    return compute_hash(((ds.get("spec") or {}).get("template") or {}), (ds.get("status") or {}).get("collisionCount"))


def revision_data(ds: dict) -> dict:
    """getPatch: the part of the DaemonSet a ControllerRevision keeps (the template, replaced
    wholesale on rollback)."""
    tpl = clone((ds.get("spec") or {}).get("template") or {})
    tpl["$patch"] = "replace"
    return {"spec": {"template": tpl}}


def new_revision(ds: dict, number: int, hash_: str, kind: str = "DaemonSet") -> dict:
    """The ControllerRevision of a DaemonSet's (or StatefulSet's) current template."""
    labels = dict(((ds.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {})
    labels[REVISION_HASH] = hash_
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"{ds['metadata']['name']}-{hash_}",
            "namespace": ds["metadata"].get("namespace", ""),
            "labels": labels,
            "ownerReferences": [cref.new_controller_ref(ds, "apps/v1", kind)],
        },
        "data": revision_data(ds),
        "revision": number,
    }


def same_template(rev: dict, ds: dict) -> bool:
    return json.dumps(rev.get("data"), sort_keys=True) == json.dumps(revision_data(ds), sort_keys=True)


# --- pods ----------------------------------------------------------------------------------------


def daemon_pod(ds: dict, node: str, hash_: str) -> dict:
    """The pod for ``node``: the template with the revision labels, the default
    tolerations, pinned to the node through node affinity (the scheduler binds it)."""
    tpl = (ds.get("spec") or {}).get("template") or {}
    tm = tpl.get("metadata") or {}
    spec = clone(tpl.get("spec") or {})
    spec["tolerations"] = add_default_tolerations(list(spec.get("tolerations") or ()), spec)
    spec["affinity"] = _pin_to_node(spec.get("affinity"), node)
    labels = dict(tm.get("labels") or {})
    labels[REVISION_HASH] = hash_
    gen = (ds.get("metadata") or {}).get("generation")
    if gen is not None:
        labels[TEMPLATE_GENERATION] = str(gen)
    m: dict = {
        "generateName": ds["metadata"]["name"] + "-",
        "namespace": ds["metadata"].get("namespace", ""),
        "labels": labels,
        "ownerReferences": [cref.new_controller_ref(ds, "apps/v1", "DaemonSet")],
    }
    for k in ("annotations", "finalizers"):
        if tm.get(k):
            m[k] = clone(tm[k])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec}


def is_updated(pod: dict, hash_: str, ds: dict) -> bool:
    """util.IsPodUpdated: the pod carries the current revision hash (or, for pods of old
    releases, the current template generation)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get(REVISION_HASH) == hash_:
        return True
    gen = (ds.get("metadata") or {}).get("generation")
    return REVISION_HASH not in labels and gen is not None and labels.get(TEMPLATE_GENERATION) == str(gen)


@dataclass
class Plan:
    """What one sync does: create a pod on these nodes, delete these pods."""

    create: list[str] = field(default_factory=list)
    delete: list[dict] = field(default_factory=list)


def _failed(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Failed"


def _terminating(pod: dict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def plan_nodes(ds: dict, nodes: list[dict], pods_by_node: dict[str, list[dict]]) -> Plan:
    """podsShouldBeOnNode over every node: missing pods created, pods where they should
    not continue deleted, failed pods deleted (and replaced on a later sync), duplicates
    beyond the oldest deleted."""
    plan = Plan()
    names = set()
    for node in nodes:
        name = node["metadata"]["name"]
        names.add(name)
        run, keep = node_should_run(node, ds)
        pods = pods_by_node.get(name, [])
        if run:
            live = [p for p in pods if not _terminating(p)]
            failed = [p for p in live if _failed(p)]
            plan.delete += failed
            live = [p for p in live if not _failed(p)]
            if not live and not failed and not any(_terminating(p) for p in pods):
                plan.create.append(name)
            elif len(live) > 1:
                live.sort(
                    key=lambda p: (
                        (p.get("metadata") or {}).get("creationTimestamp") or "",
                        p["metadata"].get("name", ""),
                    )
                )
                plan.delete += live[1:]
        elif not keep:
            plan.delete += [p for p in pods if not _terminating(p)]
    for name, pods in pods_by_node.items():
        if name not in names:  # a node that is gone (or a pod pinned to no node)
            plan.delete += [p for p in pods if not _terminating(p)]
    return plan


def rolling_update(ds: dict, nodes: list[dict], pods_by_node: dict[str, list[dict]], hash_: str, now: float) -> Plan:
    """rollingUpdate: replace old-revision pods without more than maxUnavailable nodes
    lacking an available daemon pod; with maxSurge, start the new pod first and delete the
    old one once the new one is available."""
    plan = Plan()
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return plan
    ru = strategy.get("rollingUpdate") or {}
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    desired = [n for n in nodes if node_should_run(n, ds)[0]]
    total = len(desired)
    max_surge = scaled_value(ru.get("maxSurge", 0) or 0, total, True)
    max_unavailable = scaled_value(
        ru.get("maxUnavailable", 1) if ru.get("maxUnavailable") is not None else 1, total, True
    )
    if max_surge == 0 and max_unavailable == 0:
        max_unavailable = 1
    unavailable = 0
    candidates: list[dict] = []  # old pods that are available: replaceable within the budget
    surging = 0
    surge_candidates: list[str] = []
    for node in desired:
        name = node["metadata"]["name"]
        pods = [p for p in pods_by_node.get(name, []) if not _terminating(p) and not _failed(p)]
        new = [p for p in pods if is_updated(p, hash_, ds)]
        old = [p for p in pods if not is_updated(p, hash_, ds)]
        if not pods:
            unavailable += 1
            continue
        new_ok = any(is_pod_available(p, min_ready, now) for p in new)
        old_ok = any(is_pod_available(p, min_ready, now) for p in old)
        if max_surge == 0:
            if not (new_ok or old_ok):
                unavailable += 1
                plan.delete += old  # nothing to protect: an unavailable old pod goes at once
            elif old and not new:
                candidates += old
        else:
            if new and old:
                surging += 1
                if new_ok:
                    plan.delete += old  # the new pod took over
            elif old and not new:
                if not old_ok:
                    unavailable += 1
                    plan.delete += old
                else:
                    surge_candidates.append(name)
            elif not (new_ok or old_ok):
                unavailable += 1
    if max_surge == 0:
        budget = max(0, max_unavailable - unavailable)
        plan.delete += candidates[:budget]
    else:
        budget = max(0, max_surge - surging)
        plan.create += surge_candidates[:budget]
    return plan


def status(ds: dict, nodes: list[dict], pods_by_node: dict[str, list[dict]], hash_: str, now: float) -> dict:
    """updateDaemonSetStatus (zero counts kept: these fields are not omitempty)."""
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    desired = current = misscheduled = ready = updated = available = 0
    for node in nodes:
        name = node["metadata"]["name"]
        run, _ = node_should_run(node, ds)
        pods = [p for p in pods_by_node.get(name, []) if not _terminating(p)]
        if run:
            desired += 1
            if pods:
                current += 1
                pod = sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp") or "")[0]
                if is_pod_ready(pod):
                    ready += 1
                    if is_pod_available(pod, min_ready, now):
                        available += 1
                if is_updated(pod, hash_, ds):
                    updated += 1
        elif pods:
            misscheduled += 1
    old = ds.get("status") or {}
    st = {
        "currentNumberScheduled": current,
        "numberMisscheduled": misscheduled,
        "desiredNumberScheduled": desired,
        "numberReady": ready,
    }
    gen = (ds.get("metadata") or {}).get("generation")
    if gen:
        st["observedGeneration"] = gen
    if updated:
        st["updatedNumberScheduled"] = updated
    if available:
        st["numberAvailable"] = available
    if desired - available:
        st["numberUnavailable"] = desired - available
    if old.get("collisionCount") is not None:
        st["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        st["conditions"] = old["conditions"]
    return st
