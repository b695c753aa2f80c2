"""NodePorts: a pod's container hostPorts against those the pods on a node already use,
with upstream's conflict rules (an empty hostIP is 0.0.0.0, which conflicts with every
address; protocol defaults to TCP) and reason. PreFilter returns Skip for a pod without
host ports, so only such pods ever look at a node's pods."""

from __future__ import annotations

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

Port = tuple[str, str, int]  # (hostIP, protocol, hostPort)


def host_ports(pod: dict) -> list[Port]:
    """getContainerPorts: the container ports with a hostPort, sanitized as HostPortInfo.Add does."""
    out = []
    for c in (pod.get("spec") or {}).get("containers") or ():
        for p in c.get("ports") or ():
            port = int(p.get("hostPort") or 0)
            if port <= 0:
                continue
            out.append((p.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP, p.get("protocol") or "TCP", port))
    return out


def used_ports(node: NodeInfo) -> set[Port]:
    used: set[Port] = set()
    for p in node.pods.values():
        spec = p.get("spec") or {}
        if any(c.get("ports") for c in spec.get("containers") or ()):
            used.update(host_ports(p))
    return used


def conflicts(want: Port, used: set[Port]) -> bool:
    """HostPortInfo.CheckConflict."""
    ip, proto, port = want
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        return any(u[1] == proto and u[2] == port for u in used)
    return (ip, proto, port) in used or (DEFAULT_BIND_ALL_HOST_IP, proto, port) in used


class NodePorts(fw.Plugin):
    name = NAME

    def pre_filter(self, state, pod):
        ports = host_ports(pod)
        if not ports:
            return fw.Status(fw.SKIP)
        state[self.name] = ports
        return None

    def filter(self, state, pod, node: NodeInfo):
        used = used_ports(node)
        if used and any(conflicts(p, used) for p in state[self.name]):
            return fw.unschedulable(ERR_REASON)
        return None

    def events_to_register(self):
        return [
            # spec.containers[*].ports are immutable: pod updates never matter
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.POD, fw.DELETE), ports_after_pod_deleted),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.NODE, fw.ADD)),
        ]


def ports_after_pod_deleted(pod: dict, old, new) -> int:
    """NodePorts.isSchedulableAfterPodDeleted: an assigned pod that held a port this pod wants."""
    spec, status = old.get("spec") or {}, old.get("status") or {}
    if not spec.get("nodeName") and not status.get("nominatedNodeName"):
        return fw.QUEUE_SKIP
    used = set(host_ports(old))
    if not used:
        return fw.QUEUE_SKIP
    return fw.QUEUE if any(conflicts(p, used) for p in host_ports(pod)) else fw.QUEUE_SKIP
