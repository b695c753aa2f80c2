"""The kubelet API of the nodes a kubelet shard simulates (``mockkube kubelets``), as
pkg/kubelet/server/server.go serves it: ``/containerLogs/{ns}/{pod}/{container}``,
``/exec/...``, ``/attach/...`` (``{ns}/{pod}[/{uid}]/{container}``),
``/portForward/{ns}/{pod}[/{uid}]``, and what the API server's node proxy reaches
(nodeproxy.py: ``/healthz``, ``/pods``, ``/stats/summary``, ``/metrics`` and
``/metrics/{resource,cadvisor,probes}``, ``POST /run/...``). Each node's kubelet listens on a port of its
own on the shard's address, which its Node advertises (``status.addresses``,
``status.daemonEndpoints.kubeletEndpoint.Port``); the API server forwards to it
(kubeletclient.py). The answers are the ones the API server gives for the kubelets it runs
itself: the same ``NodeStreams`` (streaming.py) and node proxy (nodeproxy.py).

With a serving certificate the ports speak HTTPS and, with a client CA, admit only clients
whose certificate it signed (the kubelet's x509 authentication; no SubjectAccessReview
follows: whoever the CA vouches for may do everything, docs/compatibility.md)."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from typing import Any

from aiohttp import web

from mockkube.kubelet import nodeproxy
from mockkube.kubelet.streaming import NodeStreams
from mockkube.machinery import errors

log = logging.getLogger("mockkube.kubeletserver")


class KubeletServer:
    """One listening port per node, all served by one application on the host's loop. A
    node keeps its port for the life of the process (across resets)."""

    def __init__(self, host: Any, address: str, ssl_context: ssl.SSLContext | None) -> None:
        self.host = host  # registry, store (the shard's replica), clock
        self.address = address
        self.ssl = ssl_context
        self.streams = NodeStreams(host)
        self.ports: dict[str, int] = {}  # node -> its kubelet's port
        self.nodes: dict[int, str] = {}  # port -> node
        self._sites: dict[str, web.BaseSite] = {}
        self._starting: set[asyncio.Task] = set()
        from mockkube.kubelet.runtime.process import raise_fd_limit

        raise_fd_limit()  # a listening socket per node: thousands in a large shard
        app = web.Application(middlewares=[_errors])
        app.router.add_route("*", "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)

    async def start(self) -> None:
        await self._runner.setup()

    def endpoint(self, node: str) -> tuple[str, int] | None:
        """(address, port) of ``node``'s kubelet, listening from now on (a node registering);
        None when no port can be opened (its Node then advertises none that answers)."""
        port = self.ports.get(node)
        if port is not None:
            return self.address, port
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError as e:  # out of file descriptors
            log.error("node %s: its kubelet cannot listen: %s", node, e)
            return None
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.address, 0))
        port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock, ssl_context=self.ssl)
        self.ports[node], self.nodes[port], self._sites[node] = port, node, site
        # bound now (connections wait in its backlog), served as soon as the loop turns
        task = asyncio.get_running_loop().create_task(site.start())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)
        return self.address, port

    async def stop(self) -> None:
        for t in list(self._starting):
            await asyncio.gather(t, return_exceptions=True)
        await self._runner.cleanup()
        await self.streams.close()

    def _node(self, request: web.Request) -> str:
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        node = self.nodes.get(sockname[1]) if sockname else None
        if node is None:
            raise web.HTTPNotFound()
        return node

    def _pod(self, node: str, namespace: str, name: str) -> dict:
        pod = nodeproxy.pod_on(self.host, node, namespace, name)
        if pod is None:
            raise errors.APIError(404, "NotFound", f'pod "{name}" does not exist')
        return pod

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        node = self._node(request)
        parts = request.match_info["path"].split("/")
        head, m = parts[0], request.method
        if head == "containerLogs" and len(parts) == 4 and m == "GET":
            return await self._log(request, self._pod(node, parts[1], parts[2]), parts[3])
        if head in ("exec", "attach") and len(parts) in (4, 5) and m in ("GET", "POST"):
            pod = self._pod(node, parts[1], parts[2])
            return await self.streams.stream(request, pod, head, parts[-1])
        if head == "portForward" and len(parts) in (3, 4) and m in ("GET", "POST"):
            return await self.streams.stream(request, self._pod(node, parts[1], parts[2]), "portforward")
        rt = self.host.registry.get("", "v1", "nodes")
        entry = self.host.store.get(rt, "", node)
        node_obj = entry.obj if entry is not None else {"metadata": {"name": node}}
        return await nodeproxy.serve(self.streams, request, node_obj, request.match_info["path"])

    async def _log(self, request: web.Request, pod: dict, container: str) -> web.StreamResponse:
        """The kubelet's getContainerLogs: the options decoded as the API server decodes them
        (machinery/podlogoptions.py)."""
        from mockkube.machinery import podlogoptions

        try:  # getContainerLogs' own answers, as text
            opts = podlogoptions.decode(request.query)
        except errors.APIError:
            return web.Response(status=400, text='{"message": "Unable to decode query."}')
        if podlogoptions.validate(opts):
            return web.Response(status=422, text='{"message": "Invalid request."}')
        container = self.streams.pick_container(pod, container)
        return await self.streams.serve_log(request, pod, container, opts, self.host.clock())


@web.middleware
async def _errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """An error as a Status with its code (the API server passes it on as it is)."""
    import json

    try:
        return await handler(request)
    except errors.APIError as e:
        return web.Response(
            status=e.code, body=json.dumps(e.status()).encode(), content_type="application/json", headers=e.headers
        )
