"""``mockkube driver run DRIVER --node N --registry DIR --plugins DIR --kubeconfig FILE``:
a built-in driver as a separate process, shaped like a real DRA driver's kubelet plugin
(in a pod, the defaults are a DaemonSet's: ``$NODE_NAME``, the in-cluster configuration and
``/var/lib/kubelet/plugins_registry``, ``/var/lib/kubelet/plugins``).
It publishes the node's ResourceSlices through the API (as the upstream resourceslice
controller does: one pool named after the node, generation bumped on change), registers
with the node's kubelet over the registration socket and serves NodePrepareResources /
NodeUnprepareResources, fetching each claim from the API and refusing one that is not
allocated or whose UID differs (as upstream's kubeletplugin helper does).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING
from urllib.parse import quote

import aiohttp

from mockkube import drivers as driver_registry
from mockkube.config.profile import NodeSpec
from mockkube.drivers import devicemetadata
from mockkube.drivers.base import Driver
from mockkube.drivers.devicemetadata import base_request
from mockkube.drivers.publisher import slice_name

if TYPE_CHECKING:  # gRPC is imported by the driver process, not by every CLI command that builds the parser
    from mockkube.drivers.kubeletplugin import PreparedDevice

log = logging.getLogger("mockkube.driver")

RESOURCE = "/apis/resource.k8s.io/v1"


class APIClient:
    """The few API calls a driver makes, over HTTP with the kubeconfig's server and token."""

    def __init__(self, kubeconfig: str) -> None:
        from mockkube.client import kubeconfigs

        creds = kubeconfigs.load(kubeconfig) if kubeconfig else kubeconfigs.in_cluster()
        self.base, self.headers, self.ssl = creds.server, creds.headers, creds.ssl
        self.session: aiohttp.ClientSession | None = None

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        if self.session is None:
            self.session = aiohttp.ClientSession(
                headers=self.headers, connector=aiohttp.TCPConnector(ssl=self.ssl) if self.ssl else None
            )
        async with self.session.request(
            method, self.base + path, json=body, timeout=aiohttp.ClientTimeout(total=30)
        ) as r:
            return r.status, await r.json(content_type=None)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()


class DriverProcess:
    def __init__(
        self,
        driver: Driver,
        node: str,
        config: dict,
        api: APIClient,
        cdi_root: str = "",
        metadata_dir: str = "",
    ) -> None:
        self.driver, self.node, self.config, self.api = driver, node, config, api
        self.cdi_root = cdi_root  # where CDI spec files go (the container runtime reads them), or nowhere
        # KEP-5304 (the kubelet-plugin library's EnableDeviceMetadata): the plugin's data
        # directory, under which each prepared request's metadata file goes; "" = off
        self.metadata_dir = metadata_dir

    # -- ResourceSlices -------------------------------------------------------------
    async def publish(self) -> None:
        status, node = await self.api.request("GET", f"/api/v1/nodes/{quote(self.node)}")
        if status != 200:
            raise RuntimeError(f"node {self.node}: {node.get('message', status)}")
        owner = {
            "apiVersion": "v1",
            "kind": "Node",
            "name": self.node,
            "uid": node["metadata"]["uid"],
            "controller": True,
        }
        specs = self.driver.publish(NodeSpec(name=self.node), self.config)
        sel = quote(f"spec.nodeName={self.node},spec.driver={self.driver.name}")
        _, existing = await self.api.request("GET", f"{RESOURCE}/resourceslices?fieldSelector={sel}")
        live = {s["metadata"]["name"]: s for s in existing.get("items") or ()}
        gen = max([int(s["spec"]["pool"].get("generation", 0)) for s in live.values()] or [0])

        def content(spec: dict) -> dict:
            c = copy.deepcopy(spec)
            c["pool"].pop("generation", None)
            return c

        names = [slice_name(self.driver.name, self.node, i) for i in range(len(specs))]
        if set(names) == set(live) and all(content(live[n]["spec"]) == content(s) for n, s in zip(names, specs)):
            return
        gen += 1
        for name, spec in zip(names, specs):
            spec = copy.deepcopy(spec)
            spec["pool"]["generation"] = gen
            obj = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": name, "ownerReferences": [owner]},
                "spec": spec,
            }
            if name in live:
                obj["metadata"]["resourceVersion"] = live[name]["metadata"]["resourceVersion"]
                status, body = await self.api.request("PUT", f"{RESOURCE}/resourceslices/{name}", obj)
            else:
                status, body = await self.api.request("POST", f"{RESOURCE}/resourceslices", obj)
            if status >= 300:
                raise RuntimeError(f"publishing {name}: {body.get('message', status)}")
        for name in set(live) - set(names):
            await self.api.request("DELETE", f"{RESOURCE}/resourceslices/{name}")

    # -- kubelet plugin -------------------------------------------------------------
    async def prepare(self, ref: dict) -> "list[PreparedDevice] | str":
        status, claim = await self.api.request(
            "GET", f"{RESOURCE}/namespaces/{quote(ref['namespace'])}/resourceclaims/{quote(ref['name'])}"
        )
        if status != 200:
            return f"retrieve claim {ref['namespace']}/{ref['name']}: {claim.get('message', status)}"
        if claim["metadata"].get("uid") != ref["uid"]:
            return (
                f"claim {ref['namespace']}/{ref['name']}: UID mismatch (expected {ref['uid']}, "
                f"got {claim['metadata'].get('uid')})"
            )
        if not (claim.get("status") or {}).get("allocation"):
            return f"claim {ref['namespace']}/{ref['name']} not allocated"
        try:
            prepared = self.driver.prepare(claim, {})
        except RuntimeError as e:
            return str(e)
        from mockkube.drivers.kubeletplugin import PreparedDevice

        share = {
            (r.get("pool"), r.get("device")): r.get("shareID")
            for r in claim["status"]["allocation"]["devices"].get("results") or ()
        }
        self.write_cdi(ref["uid"], [p.device for p in prepared])
        meta_ids = self.write_metadata(claim, prepared)
        return [
            PreparedDevice(
                [p.request],
                p.pool,
                p.device,
                list(p.cdi_device_ids)
                + ([meta_ids[base_request(p.request)]] if base_request(p.request) in meta_ids else []),
                share.get((p.pool, p.device)),
            )
            for p in prepared
        ]

    def write_metadata(self, claim: dict, prepared: list) -> dict[str, str]:
        """KEP-5304: each request's metadata file and the CDI spec mounting it; the
        attributes are the devices' as this plugin publishes them."""
        if not (self.metadata_dir and self.cdi_root):
            return {}
        attrs = {
            (s["pool"]["name"], d.get("name")): d.get("attributes") or {}
            for s in self.driver.publish(NodeSpec(name=self.node), self.config)
            for d in s.get("devices") or ()
        }
        by_request: dict[str, list[tuple[str, str, dict]]] = {}
        for p in prepared:
            by_request.setdefault(p.request, []).append((p.pool, p.device, attrs.get((p.pool, p.device), {})))
        return devicemetadata.write(self.driver.name, self.metadata_dir, self.cdi_root, claim, by_request)

    async def unprepare(self, ref: dict) -> str:
        self.driver.unprepare(ref["uid"])
        if self.cdi_root:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.cdi_file(ref["uid"]))
            if self.metadata_dir:
                devicemetadata.cleanup(
                    self.driver.name,
                    self.metadata_dir,
                    self.cdi_root,
                    ref.get("namespace", ""),
                    ref["name"],
                    ref["uid"],
                )
        return ""

    def cdi_file(self, claim_uid: str) -> str:
        return os.path.join(self.cdi_root, f"{self.driver.name}-{claim_uid}.json")

    def write_cdi(self, claim_uid: str, devices: list[str]) -> None:
        """A CDI spec for the claim's devices, as drivers write them for the container runtime:
        each device's containerEdits set ``<KIND>_DEVICE_<i>=<device>`` (as upstream's example
        driver does) and ``DRA_CLAIM_UID``."""
        if not self.cdi_root:
            return
        kind = self.driver.cdi_kind
        spec = {
            "cdiVersion": "0.6.0",
            "kind": f"{self.driver.name}/{kind}",
            "devices": [
                {
                    "name": d,
                    "containerEdits": {
                        "env": [f"{kind.upper().replace('-', '_')}_DEVICE_{i}={d}", f"DRA_CLAIM_UID={claim_uid}"]
                    },
                }
                for i, d in enumerate(devices)
            ],
        }
        os.makedirs(self.cdi_root, exist_ok=True)
        tmp = self.cdi_file(claim_uid) + ".tmp"
        with open(tmp, "w") as f:
            json.dump(spec, f)
        os.replace(tmp, self.cdi_file(claim_uid))


async def run(args: argparse.Namespace) -> int:
    from mockkube.drivers.kubeletplugin import KubeletPlugin

    settings = json.loads(args.settings) if args.settings else {}
    driver = driver_registry.make(args.driver, settings)
    config = json.loads(args.config) if args.config else {}
    node = args.node or os.environ.get("NODE_NAME", "")
    if not node:
        raise RuntimeError("the node is not known: pass --node or set NODE_NAME")
    api = APIClient(args.kubeconfig if args.kubeconfig is not None else os.environ.get("KUBECONFIG", ""))
    # the plugin's data directory is where its DRA socket is (upstream's pluginDataDirectoryPath)
    metadata_dir = os.path.join(args.plugins, driver.name) if args.device_metadata else ""
    proc = DriverProcess(driver, node, config, api, args.cdi_root, metadata_dir)
    plugin = KubeletPlugin(
        driver.name, args.registry, args.plugins, proc.prepare, proc.unprepare, versions=args.versions.split(",")
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        for attempt in range(100):  # the node may not be registered yet
            try:
                await proc.publish()
                break
            except (RuntimeError, aiohttp.ClientError) as e:
                if attempt == 99:
                    raise
                log.info("waiting to publish: %s", e)
                await asyncio.sleep(0.2)
        await plugin.start()
        print(f"{driver.name} kubelet plugin for node {node} serving at {plugin.dra_socket}", flush=True)
        await stop.wait()
    finally:
        await plugin.stop()
        await api.close()
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run(args))
    except (RuntimeError, OSError, KeyError) as e:
        print(f"mockkube driver run: {e}", file=sys.stderr)
        return 1
