"""The ResourceClaim controller (upstream pkg/controller/resourceclaim).

- For each pod entry naming a ResourceClaimTemplate it creates the claim (generateName
  "<pod>-<claim>-", truncated as upstream; the pod as controlling owner; the
  resource.kubernetes.io/pod-claim-name annotation; the template's labels and
  annotations) and records it in pod.status.resourceClaimStatuses.
- For a scheduled pod whose claim is allocated but not reserved for it, it adds the pod
  to status.reservedFor.
- It drops reservedFor entries of pods that are gone or done; when the last goes it
  clears the allocation (claims carrying the delete-protection finalizer) and removes
  that finalizer; it deletes generated claims whose pod is done or gone. (Upstream leaves
  "gone" to the garbage collector; deleting here has the same outcome.)
"""

from __future__ import annotations

import logging
from typing import Any

from mockkube.client.informer import Controller, Informer
from mockkube.dra import workloadclaims as wlc
from mockkube.machinery import errors, meta

log = logging.getLogger("mockkube.resourceclaim")

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
FINALIZER = "resource.kubernetes.io/delete-protection"
MAX_BASE_LEN = 57  # room for the hyphen and five random characters in 63
RESERVED_FOR_MAX = 256


def generate_name(pod_name: str, claim_name: str) -> str:
    """ "<pod>-<claim>-", or both parts cut in proportion when that exceeds 57 chars."""
    base = f"{pod_name}-{claim_name}-"
    if len(base) <= MAX_BASE_LEN:
        return base
    n = len(base)
    return pod_name[: len(pod_name) * MAX_BASE_LEN // n] + "-" + claim_name[: len(claim_name) * MAX_BASE_LEN // n]


def is_pod_done(pod: dict) -> bool:
    """No container is running or will run."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return True
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and not (pod.get("spec") or {}).get("nodeName")


CLAIMS_METRIC = "resourceclaim_controller_resource_claims"
CLAIMS_HELP = (
    "Number of ResourceClaims, categorized by allocation status, admin access, and source. "
    "Source can be 'resource_claim_template' (created from a template), "
    "'extended_resource' (extended resources), or empty (manually created by a user)."
)
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def claim_metric_labels(claim: dict) -> tuple[str, str, str]:
    """(allocated, admin_access, source) of a claim for resourceclaim_controller_resource_claims;
    source from the KEP-5004 annotation or the pod-claim-name annotation of template claims."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
        source = "extended_resource"
    elif POD_CLAIM_ANNOTATION in annotations or wlc.PODGROUP_CLAIM_ANNOTATION in annotations:
        source = "resource_claim_template"
    else:
        source = ""
    admin = False
    for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        if (r.get("exactly") or {}).get("adminAccess") or any(
            s.get("adminAccess") for s in r.get("firstAvailable") or ()
        ):
            admin = True
    allocated = bool((claim.get("status") or {}).get("allocation"))
    return ("true" if allocated else "false", "true" if admin else "false", source)


def owning_pod(claim: dict) -> tuple[str, str]:
    for o in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if o.get("controller") and o.get("apiVersion") == "v1" and o.get("kind") == "Pod":
            return o.get("name", ""), o.get("uid", "")
    return "", ""


def owning_pod_group(claim: dict) -> str:
    """The uid of the PodGroup controlling a claim generated for it (KEP-5729), else ""."""
    for o in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if (
            o.get("controller")
            and o.get("kind") == "PodGroup"
            and o.get("apiVersion", "").startswith("scheduling.k8s.io/")
        ):
            return o.get("uid", "")
    return ""


class ResourceClaimController(Controller):
    name = "resourceclaim-controller"

    def __init__(self, server: Any) -> None:
        super().__init__()
        self.client = server.client("kube-controller-manager")
        store = server.store
        self.pods_rt = self.client.rt("pods")
        self.claims_rt = self.client.rt("resourceclaims", "resource.k8s.io")
        self.templates_rt = self.client.rt("resourceclaimtemplates", "resource.k8s.io")
        self.pod_inf = Informer(store, self.pods_rt)
        self.claim_inf = Informer(store, self.claims_rt)
        self.template_inf = Informer(store, self.templates_rt)
        self.informers = [self.template_inf, self.claim_inf, self.pod_inf]
        # KEP-5729 (DRAWorkloadResourceClaims, with GenericWorkload): claims of PodGroups
        gates = getattr(server, "feature_gates", None)
        self.workload_claims = (
            gates is not None and gates.enabled("GenericWorkload") and gates.enabled("DRAWorkloadResourceClaims")
        )
        self.group_inf: Informer | None = None
        if self.workload_claims:
            self.groups_rt = self.client.rt("podgroups", "scheduling.k8s.io")
            self.group_inf = Informer(store, self.groups_rt)
            self.group_inf.add_handler(self._on_pod_group)
            self.informers.insert(0, self.group_inf)
        self.pod_inf.add_handler(self._on_pod)
        self.claim_inf.add_handler(self._on_claim)
        self.template_inf.add_handler(self._on_template)
        # pod uid -> keys of claims that pod owns or is reserved in
        self._by_pod: dict[str, set[str]] = {}
        self._claim_pods: dict[str, set[str]] = {}
        self._deleted: set[str] = set()  # uids of pods seen deleted
        metrics = getattr(server, "metrics", None)
        self._claims_gauge = (
            metrics.gauge(CLAIMS_METRIC, CLAIMS_HELP, ["allocated", "admin_access", "source"])
            if metrics is not None
            else None
        )
        self._claim_labels: dict[str, tuple[str, str, str]] = {}  # claim uid -> labels counted

    # -- event handlers ---------------------------------------------------------------
    def _on_pod(self, typ: str, pod: dict, prev: dict | None) -> None:
        m = pod.get("metadata") or {}
        key = f"{m.get('namespace', '')}/{m.get('name', '')}"
        uid = m.get("uid", "")
        if typ == "DELETED":
            self._deleted.add(uid)
            if len(self._deleted) > 100_000:
                self._deleted.clear()
        elif (pod.get("spec") or {}).get("resourceClaims") and not m.get("deletionTimestamp"):
            self.queue.add(("pod", key))
        if typ == "DELETED" or is_pod_done(pod):
            for ck in self._by_pod.get(uid, ()):
                self.queue.add(("claim", ck))

    def _count_claim(self, typ: str, claim: dict) -> None:
        if self._claims_gauge is None:
            return
        uid = (claim.get("metadata") or {}).get("uid", "")
        old = self._claim_labels.pop(uid, None)
        if old is not None:
            self._claims_gauge.labels(*old).dec()
        if typ != "DELETED":
            new = claim_metric_labels(claim)
            self._claim_labels[uid] = new
            self._claims_gauge.labels(*new).inc()

    def _on_claim(self, typ: str, claim: dict, prev: dict | None) -> None:
        self._count_claim(typ, claim)
        m = claim.get("metadata") or {}
        key = f"{m.get('namespace', '')}/{m.get('name', '')}"
        old = self._claim_pods.pop(key, set())
        for uid in old:
            s = self._by_pod.get(uid)
            if s is not None:
                s.discard(key)
                if not s:
                    del self._by_pod[uid]
        if typ == "DELETED":
            name, _ = owning_pod(claim)
            if name:
                self.queue.add(("pod", f"{m.get('namespace', '')}/{name}"))
            return
        uids = {r.get("uid", "") for r in (claim.get("status") or {}).get("reservedFor") or ()}
        _, owner = owning_pod(claim)
        if owner:
            uids.add(owner)
        uids.discard("")
        self._claim_pods[key] = uids
        for uid in uids:
            self._by_pod.setdefault(uid, set()).add(key)
        self.queue.add(("claim", key))

    def _on_template(self, typ: str, tmpl: dict, prev: dict | None) -> None:
        if typ == "DELETED":
            return
        m = tmpl.get("metadata") or {}
        for pod in self.pod_inf.list(m.get("namespace", "")):
            for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
                if pc.get("resourceClaimTemplateName") == m.get("name"):
                    self.queue.add(("pod", f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"))
                    break

    def _on_pod_group(self, typ: str, pg: dict, prev: dict | None) -> None:
        m = pg.get("metadata") or {}
        ns, name = m.get("namespace", ""), m.get("name", "")
        if typ == "DELETED":  # its reservations go: the claims may be deallocated
            for claim in self.claim_inf.list(ns):
                if any(
                    wlc.is_group_ref(r) and r.get("name") == name
                    for r in (claim.get("status") or {}).get("reservedFor") or ()
                ):
                    self.queue.add(("claim", f"{ns}/{claim['metadata']['name']}"))
            return
        if (pg.get("spec") or {}).get("resourceClaims"):
            self.queue.add(("podgroup", f"{ns}/{name}"))
        for pod in self.pod_inf.list(ns):
            if wlc.pod_group_name(pod) == name and (pod.get("spec") or {}).get("resourceClaims"):
                self.queue.add(("pod", f"{ns}/{pod['metadata']['name']}"))

    def _pod_group(self, pod: dict) -> dict | None:
        name = wlc.pod_group_name(pod)
        if not name or self.group_inf is None:
            return None
        return self.group_inf.get(pod["metadata"].get("namespace", ""), name)

    # -- reconcile ------------------------------------------------------------------------
    def reconcile(self, key) -> None:
        kind, k = key
        ns, _, name = k.partition("/")
        if kind == "pod":
            self.sync_pod(ns, name)
        elif kind == "podgroup":
            self.sync_pod_group(ns, name)
        else:
            self.sync_claim(ns, name)

    def sync_pod_group(self, ns: str, name: str) -> None:
        """KEP-5729: one claim per PodGroup entry naming a template, owned by the PodGroup,
        annotated with the entry's name and recorded in status.resourceClaimStatuses."""
        assert self.group_inf is not None
        pg = self.group_inf.get(ns, name)
        if pg is None or pg["metadata"].get("deletionTimestamp"):
            return
        uid = pg["metadata"]["uid"]
        statuses = {s.get("name"): s for s in (pg.get("status") or {}).get("resourceClaimStatuses") or ()}
        new: dict[str, str] = {}
        for entry in (pg.get("spec") or {}).get("resourceClaims") or ():
            template = entry.get("resourceClaimTemplateName")
            if not template:
                continue
            cname = (statuses.get(entry.get("name")) or {}).get("resourceClaimName")
            claim = self.claim_inf.get(ns, cname) if cname else None
            if claim is not None and owning_pod_group(claim) == uid:
                continue
            claim = next(
                (
                    c
                    for c in self.claim_inf.list(ns)
                    if owning_pod_group(c) == uid
                    and (c["metadata"].get("annotations") or {}).get(wlc.PODGROUP_CLAIM_ANNOTATION) == entry.get("name")
                ),
                None,
            )
            if claim is None:
                owner = {
                    "apiVersion": "scheduling.k8s.io/v1alpha2",
                    "kind": "PodGroup",
                    "name": name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
                claim = self._create_from_template(
                    ns,
                    template,
                    generate_name(name, entry.get("name", "")),
                    owner,
                    wlc.PODGROUP_CLAIM_ANNOTATION,
                    entry,
                )
            new[entry["name"]] = claim["metadata"]["name"]
        if new:
            merged = {**{k: v.get("resourceClaimName") for k, v in statuses.items()}, **new}
            entries = [{"name": k, "resourceClaimName": v} for k, v in sorted(merged.items())]
            self.client.patch(
                self.groups_rt, ns, name, {"status": {"resourceClaimStatuses": entries}}, "merge", "status"
            )

    def _create_from_template(
        self, ns: str, template: str, generate: str, owner: dict, annotation: str, entry: dict
    ) -> dict:
        tmpl = self.template_inf.get(ns, template)
        if tmpl is None:
            raise errors.not_found("resourceclaimtemplates", "resource.k8s.io", template)
        tspec = tmpl.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[annotation] = entry.get("name", "")
        body = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "generateName": generate,
                "namespace": ns,
                "ownerReferences": [owner],
                "annotations": annotations,
            },
            "spec": meta.clone(tspec.get("spec") or {}),
        }
        if tmeta.get("labels"):
            body["metadata"]["labels"] = dict(tmeta["labels"])
        claim = self.client.create(self.claims_rt, body, ns)
        self._on_claim("ADDED", claim, None)  # index it before the informer does
        return claim

    def _owned_claim(self, pod: dict, pod_claim: str) -> dict | None:
        """An orphan from an earlier attempt: owned by the pod, annotated for this entry."""
        ns = pod["metadata"]["namespace"]
        for ck in sorted(self._by_pod.get(pod["metadata"]["uid"], ())):
            claim = self.claim_inf.get(ns, ck.partition("/")[2])
            if claim is None:
                continue
            if owning_pod(claim)[1] != pod["metadata"]["uid"]:
                continue
            if ((claim["metadata"].get("annotations") or {}).get(POD_CLAIM_ANNOTATION)) == pod_claim:
                return claim
        return None

    def sync_pod(self, ns: str, name: str) -> None:
        pod = self.pod_inf.get(ns, name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
        new: dict[str, str] = {}
        for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
            try:
                self._handle_claim(pod, pc, statuses, new)
            except errors.APIError as e:
                raise errors.APIError(
                    e.code, e.reason, f"pod {ns}/{name}, PodResourceClaim {pc.get('name')}: {e.message}"
                ) from e
        if new:
            entries = [{"name": k, "resourceClaimName": v} for k, v in sorted(new.items())]
            pod = (
                self.client.patch(
                    self.pods_rt, ns, name, {"status": {"resourceClaimStatuses": entries}}, "strategic", "status"
                )
                or pod
            )  # the pod as written: no second read
        if not (pod.get("spec") or {}).get("nodeName"):
            return  # the scheduler reserves
        statuses = {s.get("name"): s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
        for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
            cname = pc.get("resourceClaimName") or (statuses.get(pc.get("name")) or {}).get("resourceClaimName")
            if not cname:
                continue
            claim = self.claim_inf.get(ns, cname)
            if claim is None:
                continue
            if wlc.matching_entry(pc, self._pod_group(pod)) is not None:
                continue  # KEP-5729: the scheduler reserved it for the PodGroup
            if pc.get("resourceClaimTemplateName") and owning_pod(claim)[1] != pod["metadata"]["uid"]:
                continue
            st = claim.get("status") or {}
            rf = st.get("reservedFor") or []
            if (
                st.get("allocation")
                and not any(r.get("uid") == pod["metadata"]["uid"] for r in rf)
                and len(rf) < RESERVED_FOR_MAX
            ):
                upd = meta.clone(claim)
                upd["status"].setdefault("reservedFor", []).append(
                    {"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}
                )
                self.client.update_status(self.claims_rt, upd)

    def _handle_claim(self, pod: dict, pc: dict, statuses: dict, new: dict[str, str]) -> None:
        ns = pod["metadata"]["namespace"]
        pod_claim = pc.get("name", "")
        template = pc.get("resourceClaimTemplateName")
        if not template:
            return
        pg = self._pod_group(pod)
        entry = wlc.matching_entry(pc, pg)
        if entry is not None and pg is not None:  # KEP-5729: the PodGroup's claim, once made
            cname = wlc.group_claim_name(entry, pg)
            if cname and (statuses.get(pod_claim) or {}).get("resourceClaimName") != cname:
                new[pod_claim] = cname
            return
        st = statuses.get(pod_claim)
        if st is not None:
            cname = st.get("resourceClaimName")
            if not cname:
                return  # no claim needed
            claim = self.claim_inf.get(ns, cname)
            if claim is not None and owning_pod(claim)[1] == pod["metadata"]["uid"]:
                return
        claim = self._owned_claim(pod, pod_claim)
        if claim is None:
            tmpl = self.template_inf.get(ns, template)
            if tmpl is None:
                raise errors.not_found("resourceclaimtemplates", "resource.k8s.io", template)
            tspec = tmpl.get("spec") or {}
            tmeta = tspec.get("metadata") or {}
            annotations = dict(tmeta.get("annotations") or {})
            annotations[POD_CLAIM_ANNOTATION] = pod_claim
            body = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "generateName": generate_name(pod["metadata"]["name"], pod_claim),
                    "namespace": ns,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": pod["metadata"]["name"],
                            "uid": pod["metadata"]["uid"],
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                    "annotations": annotations,
                },
                "spec": meta.clone(tspec.get("spec") or {}),
            }
            if tmeta.get("labels"):
                body["metadata"]["labels"] = dict(tmeta["labels"])
            claim = self.client.create(self.claims_rt, body, ns)
            self._on_claim("ADDED", claim, None)  # index it before the informer does
        new[pod_claim] = claim["metadata"]["name"]

    def sync_claim(self, ns: str, name: str) -> None:
        claim = self.claim_inf.get(ns, name)
        if claim is None:
            return
        st = claim.get("status") or {}
        reserved = st.get("reservedFor") or []
        valid = []
        for r in reserved:
            if wlc.is_group_ref(r) and self.group_inf is not None:
                pg = self.group_inf.get(ns, r.get("name", ""))
                if pg is not None and pg["metadata"].get("uid") == r.get("uid"):
                    valid.append(r)  # KEP-5729: kept while the PodGroup exists
                continue
            if r.get("apiGroup") or r.get("resource") != "pods":
                valid.append(r)  # not ours to judge
                continue
            if r.get("uid") in self._deleted:
                continue
            pod = self.pod_inf.get(ns, r.get("name", ""))
            if pod is None or pod["metadata"].get("uid") != r.get("uid") or is_pod_done(pod):
                continue
            valid.append(r)
        m = claim["metadata"]
        has_finalizer = FINALIZER in (m.get("finalizers") or [])
        if len(valid) < len(reserved):
            upd = meta.clone(claim)
            if valid:
                upd["status"]["reservedFor"] = valid
            else:
                upd["status"].pop("reservedFor", None)
                if has_finalizer:
                    upd["status"].pop("allocation", None)
            claim = self.client.update_status(self.claims_rt, upd)
            if has_finalizer and not (claim.get("status") or {}).get("allocation"):
                self._remove_finalizer(claim)
                claim = self.claim_inf.get(ns, name) or claim
        elif has_finalizer and m.get("deletionTimestamp") and not valid:
            if st.get("allocation"):
                upd = meta.clone(claim)
                upd["status"].pop("allocation", None)
                claim = self.client.update_status(self.claims_rt, upd)
            self._remove_finalizer(claim)
            return
        if not valid:
            pod_name, pod_uid = owning_pod(claim)
            if not pod_name:
                return
            pod = self.pod_inf.get(ns, pod_name)
            gone = pod is None and pod_uid in self._deleted or pod is None
            if gone or pod["metadata"].get("uid") != pod_uid or is_pod_done(pod):
                if not (self.claim_inf.get(ns, name) or {}).get("metadata", {}).get("deletionTimestamp"):
                    self.client.delete(self.claims_rt, ns, name)

    def _remove_finalizer(self, claim: dict) -> None:
        m = claim["metadata"]
        cur = self.client.get(self.claims_rt, m["namespace"], m["name"])
        if cur is None or FINALIZER not in (cur["metadata"].get("finalizers") or []):
            return
        upd = meta.clone(cur)
        rest = [f for f in upd["metadata"]["finalizers"] if f != FINALIZER]
        if rest:
            upd["metadata"]["finalizers"] = rest
        else:
            del upd["metadata"]["finalizers"]
        self.client.update(self.claims_rt, upd)


async def start(server: Any) -> list:
    ctrl = ResourceClaimController(server)
    await ctrl.start()
    return [ctrl]
