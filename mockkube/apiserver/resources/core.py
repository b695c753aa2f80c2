"""core/v1: namespaces, nodes, pods, events, configmaps, secrets, serviceaccounts, services,
resourcequotas."""

from __future__ import annotations

from mockkube.apiserver.resources import core_validation, feature_drops, pod_admission, pod_defaults, pod_resize
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy, Subresource


def _get(obj: dict, *path: str) -> str:
    cur = obj
    for p in path:
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


class NamespaceStrategy(SpecStatusStrategy):
    tracks_generation = False

    def default(self, obj: dict, now: str | None = None) -> None:
        meta = obj["metadata"]
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        labels["kubernetes.io/metadata.name"] = meta.get("name", "")
        meta["labels"] = labels

    def initial_status(self, obj: dict) -> dict:
        return {"phase": "Active"}

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        fins = obj.setdefault("spec", {}).setdefault("finalizers", [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")

    def prepare_update(self, new: dict, old: dict) -> None:
        super().prepare_update(new, old)
        new["spec"] = old.get("spec", {})  # spec.finalizers only change through /finalize

    def delays_deletion(self, obj: dict) -> bool:
        return bool((obj.get("spec") or {}).get("finalizers"))

    def on_deleting(self, obj: dict) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"


class NodeStrategy(SpecStatusStrategy):
    tracks_generation = False
    reset_status_on_create = False  # kubelets create nodes with their status


def _merge_keys(selector: dict, labels: dict, match: list, mismatch: list) -> None:
    exprs = selector.setdefault("matchExpressions", [])
    for keys, op in ((match, "In"), (mismatch, "NotIn")):
        for key in keys or ():
            if key in labels:
                exprs.append({"key": key, "operator": op, "values": [labels[key]]})
    if not exprs:
        del selector["matchExpressions"]


def merge_label_keys(pod: dict) -> None:
    """PrepareForCreate's mutatePodAffinity and mutateTopologySpreadConstraints
    (MatchLabelKeysInPodAffinity, MatchLabelKeysInPodTopologySpreadSelectorMerge, on in
    v1.36): the pod's values of matchLabelKeys (In) and mismatchLabelKeys (NotIn) are
    ANDed into each term's labelSelector; a term without a labelSelector is left alone."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    labels = (pod.get("metadata") or {}).get("labels") or {}
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [w.get("podAffinityTerm") for w in a.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        for t in terms:
            if not isinstance(t, dict) or not isinstance(t.get("labelSelector"), dict):
                continue
            if t.get("matchLabelKeys") or t.get("mismatchLabelKeys"):
                _merge_keys(t["labelSelector"], labels, t.get("matchLabelKeys"), t.get("mismatchLabelKeys"))
    for c in spec.get("topologySpreadConstraints") or ():
        if isinstance(c, dict) and c.get("matchLabelKeys") and isinstance(c.get("labelSelector"), dict):
            _merge_keys(c["labelSelector"], labels, c.get("matchLabelKeys"), [])


class PodStrategy(SpecStatusStrategy):
    return_deleted_object = True

    def default(self, obj: dict, now: str | None = None) -> None:
        pod_defaults.default_pod(obj)

    def admit(self, obj: dict, old: dict | None, res) -> None:
        pod_admission.admit_pod(obj, old, res)

    def initial_status(self, obj: dict) -> dict:
        return {"phase": "Pending", "qosClass": pod_defaults.qos_class(obj.get("spec") or {})}

    def validate(self, obj: dict):
        return core_validation.validate_pod(obj)

    def validate_update(self, new: dict, old: dict):
        return core_validation.validate_pod_update(new, old)

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        merge_label_keys(obj)

    def prepare_resize_update(self, new: dict, old: dict) -> None:
        pod_resize.prepare(new, old)

    def drop_disabled(self, new: dict, old: dict | None, gates, subresource: str) -> None:
        feature_drops.pod(new, old, gates, subresource)

    def validate_resize_update(self, new: dict, old: dict):
        return pod_resize.validate(new, old)

    def grace_period(self, obj: dict, requested: int | None) -> int | None:
        spec = obj.get("spec", {})
        phase = obj.get("status", {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0  # nothing runs it: delete at once, as upstream
        if requested is not None:
            return max(int(requested), 0)
        return int(spec.get("terminationGracePeriodSeconds", 30))


class ServiceStrategy(SpecStatusStrategy):
    tracks_generation = False
    return_deleted_object = True

    def default(self, obj: dict, now: str | None = None) -> None:
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}
        spec = obj["spec"]
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))

    def initial_status(self, obj: dict) -> dict:
        return {"loadBalancer": {}}

    def admit(self, obj: dict, old: dict | None, res) -> None:
        if old is None:  # the ClusterIP allocator: from the ServiceCIDRs, one IPAddress per IP
            from mockkube.apiserver.resources import ipallocation

            ipallocation.allocate(obj, res)

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        spec = obj["spec"]
        if spec.get("type") == "ExternalName":
            return
        spec.setdefault("internalTrafficPolicy", "Cluster")
        if not spec.get("clusterIP"):
            spec["clusterIP"] = service_ip(obj["metadata"]["uid"])
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
            for i, p in enumerate(spec.get("ports") or []):
                if isinstance(p, dict) and not p.get("nodePort"):
                    p["nodePort"] = node_port(obj["metadata"]["uid"], i)
            if spec["type"] == "LoadBalancer":
                spec.setdefault("allocateLoadBalancerNodePorts", True)

    def prepare_update(self, new: dict, old: dict) -> None:
        super().prepare_update(new, old)
        # allocated addresses and ports stay when an update leaves them out
        ospec, nspec = old.get("spec") or {}, new.get("spec")
        if isinstance(nspec, dict):
            for k in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"):
                if k in ospec and not nspec.get(k):
                    nspec[k] = ospec[k]


def service_ip(uid: str) -> str:
    """A ClusterIP from 10.96.0.0/12 (kube-apiserver's default service range), spread by uid."""
    n = 2 + int(uid.replace("-", ""), 16) % ((1 << 20) - 3)  # .0.0 (network), .0.1 (kubernetes) stay free
    return f"10.{96 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"


def node_port(uid: str, index: int) -> int:
    """A nodePort from the default 30000-32767 range."""
    return 30000 + (int(uid.replace("-", ""), 16) + index * 7919) % 2768


class SecretStrategy(Strategy):
    def default(self, obj: dict, now: str | None = None) -> None:
        obj.setdefault("type", "Opaque")


def _pod_ips(obj: dict) -> str:
    return ",".join(i.get("ip", "") for i in obj.get("status", {}).get("podIPs") or [])


_EVENT_FIELDS = {
    "involvedObject.kind": lambda o: _get(o, "involvedObject", "kind"),
    "involvedObject.namespace": lambda o: _get(o, "involvedObject", "namespace"),
    "involvedObject.name": lambda o: _get(o, "involvedObject", "name"),
    "involvedObject.uid": lambda o: _get(o, "involvedObject", "uid"),
    "involvedObject.apiVersion": lambda o: _get(o, "involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": lambda o: _get(o, "involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": lambda o: _get(o, "involvedObject", "fieldPath"),
    "reason": lambda o: _get(o, "reason"),
    "reportingComponent": lambda o: _get(o, "reportingComponent"),
    "source": lambda o: _get(o, "source", "component"),
    "type": lambda o: _get(o, "type"),
}


namespaces = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Namespace",
        "namespaces",
        namespaced=False,
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),  # no deletecollection upstream
        subresources=(Subresource("status", "Namespace"), Subresource("finalize", "Namespace", verbs=("update",))),
        strategy=NamespaceStrategy(),
        selectable_fields={"status.phase": lambda o: _get(o, "status", "phase")},
    )
)

nodes = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Node",
        "nodes",
        namespaced=False,
        short_names=("no",),
        subresources=(
            Subresource("status", "Node"),
            Subresource("proxy", "NodeProxyOptions", verbs=("create", "delete", "get", "patch", "update")),
        ),
        strategy=NodeStrategy(),
        selectable_fields={"spec.unschedulable": lambda o: _get(o, "spec", "unschedulable") or "false"},
    )
)

pods = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Pod",
        "pods",
        namespaced=True,
        short_names=("po",),
        categories=("all",),
        subresources=(
            Subresource("status", "Pod"),
            Subresource("resize", "Pod"),
            Subresource("log", "Pod", verbs=("get",)),
            Subresource("exec", "PodExecOptions", verbs=("create", "get")),
            Subresource("attach", "PodAttachOptions", verbs=("create", "get")),
            Subresource("portforward", "PodPortForwardOptions", verbs=("create", "get")),
            Subresource("binding", "Binding", verbs=("create",)),
            Subresource("eviction", "Eviction", group="policy", version="v1", verbs=("create",)),
        ),
        strategy=PodStrategy(),
        indexed_fields=("spec.nodeName",),  # as upstream's watch cache (each kubelet's query)
        selectable_fields={
            "spec.nodeName": lambda o: _get(o, "spec", "nodeName"),
            "spec.restartPolicy": lambda o: _get(o, "spec", "restartPolicy"),
            "spec.schedulerName": lambda o: _get(o, "spec", "schedulerName"),
            "spec.serviceAccountName": lambda o: _get(o, "spec", "serviceAccountName"),
            "spec.hostNetwork": lambda o: _get(o, "spec", "hostNetwork") or "false",
            "status.phase": lambda o: _get(o, "status", "phase"),
            "status.podIP": lambda o: _get(o, "status", "podIP"),
            "status.podIPs": _pod_ips,
            "status.nominatedNodeName": lambda o: _get(o, "status", "nominatedNodeName"),
        },
    )
)


class EventStrategy(Strategy):
    allow_create_on_update = True
    held_as_json = True


events = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Event",
        "events",
        namespaced=True,
        short_names=("ev",),
        strategy=EventStrategy(),
        selectable_fields=_EVENT_FIELDS,
        indexed_fields=("involvedObject.name",),  # kubectl describe's query
    )
)

configmaps = REGISTRY.add(ResourceType("", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",)))

secrets = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Secret",
        "secrets",
        namespaced=True,
        strategy=SecretStrategy(),
        selectable_fields={"type": lambda o: _get(o, "type")},
    )
)

serviceaccounts = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        namespaced=True,
        short_names=("sa",),
        subresources=(
            Subresource("token", "TokenRequest", group="authentication.k8s.io", version="v1", verbs=("create",)),
        ),
    )
)

services = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "Service",
        "services",
        namespaced=True,
        short_names=("svc",),
        categories=("all",),
        subresources=(Subresource("status", "Service"),),
        strategy=ServiceStrategy(),
        selectable_fields={
            "spec.clusterIP": lambda o: _get(o, "spec", "clusterIP"),
            "spec.type": lambda o: _get(o, "spec", "type"),
        },
    )
)


class ResourceQuotaStrategy(SpecStatusStrategy):
    """status (hard, used) belongs to the quota controller and the quota admission."""

    tracks_generation = False

    def validate(self, obj: dict):
        return core_validation.validate_resource_quota(obj)

    def validate_update(self, new: dict, old: dict):
        return core_validation.validate_resource_quota(new)


resourcequotas = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "ResourceQuota",
        "resourcequotas",
        namespaced=True,
        short_names=("quota",),
        subresources=(Subresource("status", "ResourceQuota"),),
        strategy=ResourceQuotaStrategy(),
    )
)


class ReplicationControllerStrategy(SpecStatusStrategy):
    """SetDefaults_ReplicationController: the selector and labels default to the
    template's labels, replicas to 1."""

    drop_disabled = staticmethod(feature_drops.pod_template(("spec", "template")))  # DropDisabledTemplateFields

    def default(self, obj: dict, now: str | None = None) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        tpl = spec.get("template")
        tlabels = ((tpl or {}).get("metadata") or {}).get("labels") if isinstance(tpl, dict) else None
        if tlabels:
            if not spec.get("selector"):
                spec["selector"] = dict(tlabels)
            m = obj.setdefault("metadata", {})
            if not m.get("labels"):
                m["labels"] = dict(tlabels)
        spec.setdefault("replicas", 1)
        if isinstance(tpl, dict):
            pod_defaults.default_pod_spec(tpl.get("spec"))

    def initial_status(self, obj: dict) -> dict:
        return {"replicas": 0}

    def validate(self, obj: dict):
        from mockkube.apiserver.resources import apps_validation

        return apps_validation.validate_replication_controller(obj)


replicationcontrollers = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        namespaced=True,
        short_names=("rc",),
        categories=("all",),
        subresources=(
            Subresource("status", "ReplicationController"),
            Subresource("scale", "Scale", group="autoscaling", version="v1"),
        ),
        strategy=ReplicationControllerStrategy(),
        selectable_fields={"status.replicas": lambda o: str((o.get("status") or {}).get("replicas", 0))},
    )
)
