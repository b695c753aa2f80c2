"""The endpoints and endpointslice controllers: for every Service with a selector, an
Endpoints object (ready and not-ready addresses) and one EndpointSlice (``discovery.k8s.io/v1``,
with ready/serving/terminating conditions) listing the selected pods that have an IP,
ports resolved from each Service port's targetPort (numbers or container port names)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.machinery import errors
from mockkube.machinery.requestcontext import acting_as
from mockkube.rules.disruption import pod_ready
from mockkube.rules.identities import APISERVER, controller_user

if TYPE_CHECKING:
    from mockkube.server.server import Server

MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SLICE_CONTROLLER = "endpointslice-controller.k8s.io"
SERVICE_NAME = "kubernetes.io/service-name"


def _selects(svc: dict, pod: dict) -> bool:
    sel = (svc.get("spec") or {}).get("selector")
    if not sel:
        return False
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in sel.items())


def _target_port(port: dict, pod: dict) -> int | None:
    tp = port.get("targetPort", port.get("port"))
    if isinstance(tp, int):
        return tp
    for c in (pod.get("spec") or {}).get("containers") or ():
        for cp in c.get("ports") or ():
            if cp.get("name") == tp and cp.get("protocol", "TCP") == port.get("protocol", "TCP"):
                return cp.get("containerPort")
    return None


def _ref(pod: dict) -> dict:
    m = pod["metadata"]
    return {"kind": "Pod", "namespace": m["namespace"], "name": m["name"], "uid": m["uid"]}


class EndpointsController(Controller):
    name = "endpoint-controller"

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.svc_rt = self.client.rt("services")
        self.pod_rt = self.client.rt("pods")
        self.ep_rt = self.client.rt("endpoints")
        self.slice_rt = self.client.rt("endpointslices", "discovery.k8s.io")
        self.services = Informer(server.store, self.svc_rt)
        self.pods = Informer(server.store, self.pod_rt)
        self.services.add_handler(lambda t, o, p: self.queue.add((o["metadata"]["namespace"], o["metadata"]["name"])))
        self.pods.add_handler(self._on_pod)
        self.informers += [self.services, self.pods]

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        ns = obj["metadata"].get("namespace", "")
        for svc in self.services.list(ns):
            if _selects(svc, obj) or (prev is not None and _selects(svc, prev)):
                self.queue.add((ns, svc["metadata"]["name"]))

    def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        svc = self.services.get(ns, name)
        if svc is not None and (ns, name) == ("default", "kubernetes"):
            self._apiserver(svc)
            return
        if svc is None or not (svc.get("spec") or {}).get("selector"):
            return  # the garbage collector removes slices owned by a deleted Service
        pods = sorted(
            (
                p
                for p in self.pods.list(ns)
                if _selects(svc, p)
                and (p.get("status") or {}).get("podIP")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ),
            key=lambda p: p["metadata"]["name"],
        )
        self._endpoints(svc, pods)
        with acting_as(controller_user("endpointslice-controller")):  # a controller of its own upstream
            self._slice(svc, pods)

    def _apiserver(self, svc: dict) -> None:
        """kube-apiserver's endpoint reconciler: the ``kubernetes`` Service points at the
        API server itself."""
        import ipaddress

        try:
            ip = str(ipaddress.IPv4Address(getattr(self.server, "address", "") or ""))
        except ValueError:
            ip = "127.0.0.1"
        if ip == "0.0.0.0":
            ip = "127.0.0.1"
        port = int(getattr(self.server, "port", 0) or 6443)
        subsets = [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]
        labels = {"endpointslice.kubernetes.io/skip-mirror": "true"}
        with acting_as(APISERVER):  # kube-apiserver reconciles its own endpoints
            cur = self.client.get(self.ep_rt, "default", "kubernetes")
            if cur is None:
                self.client.create(
                    self.ep_rt,
                    {"metadata": {"name": "kubernetes", "namespace": "default", "labels": labels}, "subsets": subsets},
                )
            elif cur.get("subsets") != subsets:
                self.client.update(self.ep_rt, dict(cur, subsets=subsets))
            endpoints = [{"addresses": [ip], "conditions": {"ready": True}}]
            ports = [{"name": "https", "port": port, "protocol": "TCP"}]
            sl = self.client.get(self.slice_rt, "default", "kubernetes")
            if sl is None:
                self.client.create(
                    self.slice_rt,
                    {
                        "metadata": {
                            "name": "kubernetes",
                            "namespace": "default",
                            "labels": {SERVICE_NAME: "kubernetes"},
                        },
                        "addressType": "IPv4",
                        "endpoints": endpoints,
                        "ports": ports,
                    },
                )
            elif sl.get("endpoints") != endpoints or sl.get("ports") != ports:
                self.client.update(self.slice_rt, dict(sl, endpoints=endpoints, ports=ports))

    def _ports(self, svc: dict, pod: dict | None) -> list[dict]:
        out = []
        for p in (svc.get("spec") or {}).get("ports") or ():
            port = _target_port(p, pod) if pod is not None else None
            if port is None:
                continue
            entry = {"port": port, "protocol": p.get("protocol", "TCP")}
            if p.get("name"):
                entry = {"name": p["name"], **entry}
            if p.get("appProtocol"):
                entry["appProtocol"] = p["appProtocol"]
            out.append(entry)
        return out

    def _endpoints(self, svc: dict, pods: list[dict]) -> None:
        m = svc["metadata"]
        ready, not_ready = [], []
        for p in pods:
            addr = {"ip": p["status"]["podIP"], "targetRef": _ref(p)}
            if p["spec"].get("nodeName"):
                addr["nodeName"] = p["spec"]["nodeName"]
            if p["metadata"].get("deletionTimestamp"):
                continue
            (ready if pod_ready(p) else not_ready).append(addr)
        subsets = []
        if ready or not_ready:
            s: dict = {}
            if ready:
                s["addresses"] = ready
            if not_ready:
                s["notReadyAddresses"] = not_ready
            ports = self._ports(svc, pods[0])
            if ports:
                s["ports"] = ports
            subsets.append(s)
        body = {"metadata": {"name": m["name"], "namespace": m["namespace"], "labels": dict(m.get("labels") or {})}}
        if subsets:
            body["subsets"] = subsets
        cur = self.client.get(self.ep_rt, m["namespace"], m["name"])
        if cur is None:
            try:
                self.client.create(self.ep_rt, body)
            except errors.APIError as e:
                if e.code != 409:
                    raise
            return
        if cur.get("subsets") != body.get("subsets") or cur["metadata"].get("labels") != body["metadata"]["labels"]:
            new = dict(cur, metadata=dict(cur["metadata"], labels=body["metadata"]["labels"]))
            new.pop("subsets", None)
            if subsets:
                new["subsets"] = subsets
            self.client.update(self.ep_rt, new)

    def _slice(self, svc: dict, pods: list[dict]) -> None:
        m = svc["metadata"]
        endpoints = []
        for p in pods:
            terminating = bool(p["metadata"].get("deletionTimestamp"))
            ready = pod_ready(p)
            ep = {
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": ready and not terminating, "serving": ready, "terminating": terminating},
                "targetRef": _ref(p),
            }
            if p["spec"].get("nodeName"):
                ep["nodeName"] = p["spec"]["nodeName"]
            endpoints.append(ep)
        labels = dict(m.get("labels") or {})
        labels.update({SERVICE_NAME: m["name"], MANAGED_BY: SLICE_CONTROLLER})
        ports = self._ports(svc, pods[0]) if pods else []
        existing = [
            s
            for s in self.client.list(self.slice_rt, m["namespace"])
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == m["name"]
            and (s["metadata"].get("labels") or {}).get(MANAGED_BY) == SLICE_CONTROLLER
        ]
        if not existing:
            self.client.create(
                self.slice_rt,
                {
                    "metadata": {
                        "generateName": f"{m['name']}-",
                        "namespace": m["namespace"],
                        "labels": labels,
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Service",
                                "name": m["name"],
                                "uid": m["uid"],
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "addressType": "IPv4",
                    "endpoints": endpoints,
                    "ports": ports,
                },
            )
            return
        cur = existing[0]
        if (
            cur.get("endpoints") != endpoints
            or (cur.get("ports") or []) != ports
            or cur["metadata"].get("labels") != labels
        ):
            self.client.update(
                self.slice_rt,
                dict(cur, endpoints=endpoints, ports=ports, metadata=dict(cur["metadata"], labels=labels)),
            )


async def start(server: "Server") -> list:
    c = EndpointsController(server)
    await c.start()
    return [c]
