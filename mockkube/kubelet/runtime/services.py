"""Services for process pods: what kube-proxy and cluster DNS give a pod, as cheaply as a
host can without root networking. Each Service with a ClusterIP gets a listener per TCP
port on a loopback address of its own (127.0.0.0/8 is all loopback on Linux, nothing to
configure): ``127.<16*slot + (b-96)>.<c>.<d>`` for ClusterIP ``10.b.c.d`` in the default
10.96.0.0/12 range, ``slot`` chosen per cluster (1-15) so that clusters on one host do not
collide. A connection goes to a ready endpoint of the Service's EndpointSlices, round robin:
its pod's process (127.0.0.1:<targetPort> in the host's network, or inside the pod's own
network namespace). Process pods find Services by name through their /etc/hosts
(``svc``, ``svc.ns``, ``svc.ns.svc``, ``svc.ns.svc.cluster.local``), kept current.

A pod with a network namespace of its own (``network: pod``) gets the same listeners inside
it (its loopback is all of 127.0.0.0/8 too), held by the server's process and opened in the
namespace (``setns``), so its /etc/hosts names lead to them there as well.

Limits (docs/exec.md): TCP only; the ClusterIP itself is not reachable (only the name); a
Service whose endpoints are not process pods accepts and closes the connection.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import itertools
import logging
import socket
from typing import Callable, Hashable

from mockkube.client.informer import Controller, Informer
from mockkube.kubelet.runtime import process, sandbox

log = logging.getLogger("mockkube.kubelet.services")
SERVICE_NAME = "kubernetes.io/service-name"


def loopback(cluster_ip: str, slot: int) -> str | None:
    """The loopback address standing for a ClusterIP in cluster ``slot``, or None when the
    ClusterIP is not an IPv4 address of 10.96.0.0/12."""
    try:
        ip = ipaddress.ip_address(cluster_ip)
    except ValueError:
        return None
    if ip.version != 4 or ip not in ipaddress.ip_network("10.96.0.0/12"):
        return None
    _, b, c, d = (int(x) for x in str(ip).split("."))
    return f"127.{16 * slot + (b - 96)}.{c}.{d}"


class ServiceProxy(Controller):
    name = "process-service-proxy"

    def __init__(self, store, client, on_hosts_change: Callable[[], None], api: Callable[[], tuple[str, str]]) -> None:
        super().__init__()
        self.api = api  # the API server's address for pods: default/kubernetes leads there
        self.client = client
        self.services = Informer(store, client.rt("services"))
        self.slices = Informer(store, client.rt("endpointslices", "discovery.k8s.io"))
        self.services.add_handler(lambda t, o, p: self.queue.add((o["metadata"]["namespace"], o["metadata"]["name"])))
        self.slices.add_handler(self._on_slice)
        self.informers += [self.services, self.slices]
        self.slot = 0  # chosen at the first listener
        self.listeners: dict[tuple, asyncio.base_events.Server] = {}  # (ns, name, port) -> server
        self.addresses: dict[tuple[str, str], str] = {}  # (ns, name) -> its loopback address
        self.port_names: dict[tuple, str] = {}  # (ns, name, port) -> the port's name
        self.netns: dict[str, int] = {}  # pod uid -> the pid holding its network namespace
        self.pod_listeners: dict[tuple, asyncio.base_events.Server] = {}  # (uid, (ns, name, port)) -> server
        self.rr = itertools.count()
        self.on_hosts_change = on_hosts_change

    def _on_slice(self, typ: str, obj: dict, prev: dict | None) -> None:
        svc = ((obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME)
        if svc:
            self.queue.add((obj["metadata"]["namespace"], svc))

    def hosts(self, namespace: str) -> list[tuple[str, list[str]]]:
        """/etc/hosts lines for a pod of ``namespace``: (address, names) per Service."""
        out = []
        for (ns, name), addr in sorted(self.addresses.items()):
            names = [f"{name}.{ns}.svc.cluster.local", f"{name}.{ns}.svc", f"{name}.{ns}"]
            if ns == namespace:
                names.append(name)
            out.append((addr, names))
        return out

    async def reconcile(self, key: Hashable) -> None:
        ns, name = key  # type: ignore[misc]
        svc = self.services.get(ns, name)
        spec = (svc or {}).get("spec") or {}
        ip = spec.get("clusterIP") or ""
        want = {
            int(p["port"]): p.get("name", "")
            for p in spec.get("ports") or ()
            if (p.get("protocol") or "TCP") == "TCP" and p.get("port")
        }
        addr = None
        if svc is not None and ip and ip != "None":
            addr = await self._address(ip, want)
        for k in [k for k in self.listeners if k[:2] == (ns, name) and (addr is None or k[2] not in want)]:
            self.listeners.pop(k).close()
            for pk in [pk for pk in self.pod_listeners if pk[1] == k]:
                self.pod_listeners.pop(pk).close()
        changed = False
        if addr is None:
            changed = self.addresses.pop((ns, name), None) is not None
        else:
            for port, port_name in want.items():
                if (ns, name, port) in self.listeners:
                    continue
                try:
                    self.listeners[(ns, name, port)] = await asyncio.start_server(
                        lambda r, w, ns=ns, name=name, pn=port_name: self._connect(r, w, ns, name, pn), addr, port
                    )
                except OSError as e:
                    log.warning("service %s/%s: cannot listen on %s:%s: %s", ns, name, addr, port, e)
                    continue
                self.port_names[(ns, name, port)] = port_name
                for uid, pid in list(self.netns.items()):
                    await self._listen_in(uid, pid, (ns, name, port), addr)
            changed = self.addresses.get((ns, name)) != addr
            self.addresses[(ns, name)] = addr
        if changed:
            self.on_hosts_change()

    async def _address(self, ip: str, ports: dict[int, str]) -> str | None:
        """The Service's loopback address; the first one also picks the cluster's slot (the
        first whose address is free on this host)."""
        if self.slot:
            return loopback(ip, self.slot)
        for slot in range(1, 16):
            addr = loopback(ip, slot)
            if addr is None:
                return None
            port = next(iter(ports), 0)
            try:
                with socket.socket() as s:
                    s.bind((addr, port))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    continue  # another cluster's: try the next slot
                # e.g. a port below 1024 without the right to bind it: the slot is free as
                # far as we know (the listener logs why it cannot listen)
            self.slot = slot
            return addr
        log.warning("no free loopback range for this cluster's Services")
        return None

    # -- pods with a network of their own ------------------------------------------------------
    async def attach(self, uid: str, pid: int) -> None:
        """A pod's network namespace is up: every Service listens in it too."""
        self.netns[uid] = pid
        for key in list(self.listeners):
            addr = self.addresses.get(key[:2])
            if addr is not None:
                await self._listen_in(uid, pid, key, addr)

    def detach(self, uid: str) -> None:
        """The pod's network namespace is going: its listeners close."""
        self.netns.pop(uid, None)
        for pk in [pk for pk in self.pod_listeners if pk[0] == uid]:
            self.pod_listeners.pop(pk).close()

    async def _listen_in(self, uid: str, pid: int, key: tuple, addr: str) -> None:
        ns, name, port = key
        port_name = self.port_names.get(key, "")
        try:
            sock = await asyncio.to_thread(sandbox.in_netns, pid, lambda: sandbox.listener(addr, port))
        except OSError as e:  # the pod went meanwhile, or the port is taken in its network
            log.debug("service %s/%s: cannot listen in pod %s: %s", ns, name, uid, e)
            return
        if self.netns.get(uid) != pid:  # detached while the socket was made
            sock.close()
            return
        self.pod_listeners[(uid, key)] = await asyncio.start_server(
            lambda r, w: self._connect(r, w, ns, name, port_name), sock=sock
        )

    def _endpoints(self, ns: str, name: str, port_name: str) -> list[tuple[str, int]]:
        """(pod uid, target port) of the Service's ready endpoints that are process pods."""
        out = []
        for s in self.slices.list(ns):
            if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME) != name:
                continue
            port = next((p.get("port") for p in s.get("ports") or () if (p.get("name") or "") == port_name), None)
            if not port:
                continue
            for ep in s.get("endpoints") or ():
                ref = ep.get("targetRef") or {}
                if (ep.get("conditions") or {}).get("ready") is False or ref.get("kind") != "Pod":
                    continue
                pp = process.pod(ref.get("uid", ""))
                if pp is not None and not pp.holder:  # a pod that runs what the Service reaches
                    out.append((ref["uid"], int(port)))
        return out

    async def _connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ns: str, name: str, port_name: str
    ) -> None:
        if (ns, name) == ("default", "kubernetes"):
            host, api_port = self.api()
            eps = [("", int(api_port))]
        else:
            eps = self._endpoints(ns, name, port_name)
        if not eps:
            writer.close()
            return
        uid, port = eps[next(self.rr) % len(eps)]
        pp = process.pod(uid) if uid else None
        try:
            if pp is not None and pp.pause is not None:  # the pod's own network
                pid = pp.pause.child_pid

                def dial() -> socket.socket:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5)
                    s.setblocking(False)
                    return s

                sock = await asyncio.to_thread(sandbox.in_netns, pid, dial)
                up_r, up_w = await asyncio.open_connection(sock=sock)
            else:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            writer.close()
            return

        async def pipe(a: asyncio.StreamReader, b: asyncio.StreamWriter) -> None:
            try:
                while data := await a.read(65536):
                    b.write(data)
                    await b.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                try:
                    if b.can_write_eof():
                        b.write_eof()
                except OSError:
                    pass

        await asyncio.gather(pipe(reader, up_w), pipe(up_r, writer))
        writer.close()
        up_w.close()

    async def stop(self) -> None:
        for srv in list(self.listeners.values()) + list(self.pod_listeners.values()):
            srv.close()
        self.listeners.clear()
        self.pod_listeners.clear()
        await super().stop()
