"""Pure builders for what a kubelet writes about its node: the Node object (capacity,
allocatable, conditions, addresses, nodeInfo, daemonEndpoints) and its Lease."""

from __future__ import annotations

import hashlib

from mockkube.config.profile import NodeSpec
from mockkube.machinery import meta

KUBELET_VERSION = "v1.36.0"
LEASE_DURATION = 40  # seconds, upstream's default nodeLeaseDurationSeconds
RENEW_INTERVAL = 10.0  # 25% of the lease duration, as upstream
STATUS_REPORT_INTERVAL = 300.0  # nodeStatusReportFrequency
KUBELET_PORT = 10250


def node_ip(index: int) -> str:
    n = index + 2
    return f"172.18.{n // 256}.{n % 256}"


def pod_cidr(index: int) -> str:
    return f"10.{244 + index // 256}.{index % 256}.0/24"


def pod_ip(index: int, n: int) -> str:
    base = pod_cidr(index).rsplit(".", 1)[0]
    return f"{base}.{n % 253 + 2}"


def _hex(seed: str, n: int = 32) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()[:n]


def conditions(ready: bool, now: float, previous: list[dict] | None = None) -> list[dict]:
    """The four kubelet node conditions; transition times kept from ``previous`` when unchanged."""
    ts = meta.rfc3339(now)
    want = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        (
            "Ready",
            "True" if ready else "False",
            "KubeletReady" if ready else "KubeletNotReady",
            "kubelet is posting ready status" if ready else "container runtime is down",
        ),
    ]
    prev = {c.get("type"): c for c in previous or ()}
    out = []
    for typ, status, reason, msg in want:
        old = prev.get(typ)
        ltt = old["lastTransitionTime"] if old and old.get("status") == status and old.get("lastTransitionTime") else ts
        out.append(
            {
                "type": typ,
                "status": status,
                "lastHeartbeatTime": ts,
                "lastTransitionTime": ltt,
                "reason": reason,
                "message": msg,
            }
        )
    return out


def node_object(spec: NodeSpec, now: float, endpoint: tuple[str, int] | None = None) -> dict:
    """The Node a kubelet registers for ``spec`` (``endpoint``: where its kubelet API
    listens, when it serves one: a kubelet shard's address and port)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": dict(spec.labels),
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                **spec.annotations,
            },
        },
        "spec": _spec(spec),
        "status": node_status(spec, now, None, endpoint),
    }


def _spec(spec: NodeSpec) -> dict:
    out: dict = {
        "podCIDR": pod_cidr(spec.index),
        "podCIDRs": [pod_cidr(spec.index)],
        "providerID": f"mockkube://{spec.name}",
    }
    if spec.taints:
        out["taints"] = [dict(t) for t in spec.taints]
    if spec.unschedulable:
        out["unschedulable"] = True
    return out


def node_status(
    spec: NodeSpec, now: float, previous: dict | None = None, endpoint: tuple[str, int] | None = None
) -> dict:
    """The status a kubelet reports; with ``endpoint`` (address, port) its InternalIP and
    kubelet port are where the API server reaches it (as a real node's are), else made up."""
    address, port = endpoint if endpoint is not None else (node_ip(spec.index), KUBELET_PORT)
    return {
        "capacity": dict(spec.capacity),
        "allocatable": dict(spec.allocatable),
        "conditions": conditions(True, now, (previous or {}).get("conditions")),
        "addresses": [
            {"type": "InternalIP", "address": address},
            {"type": "Hostname", "address": spec.name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        "nodeInfo": {
            "machineID": _hex("machine/" + spec.name),
            "systemUUID": _hex("system/" + spec.name, 36),
            "bootID": _hex("boot/" + spec.name, 36),
            "kernelVersion": "6.8.0-mockkube",
            "osImage": "mockkube simulated node",
            "containerRuntimeVersion": "containerd://2.1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
        "images": [],
    }


def lease_object(node: str, node_uid: str | None, now: float) -> dict:
    meta_: dict = {"name": node, "namespace": "kube-node-lease"}
    if node_uid:
        meta_["ownerReferences"] = [owner_ref(node, node_uid)]
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": meta_,
        "spec": {"holderIdentity": node, "leaseDurationSeconds": LEASE_DURATION, "renewTime": meta.rfc3339_micro(now)},
    }


def owner_ref(node: str, uid: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid}
