"""Builders and a running scheduler + claim controller for scheduler tests."""

from __future__ import annotations

import contextlib
from typing import AsyncIterator, Callable

from mockkube.client.client import Client
from mockkube.controllers.resourceclaim import ResourceClaimController
from mockkube.scheduler.scheduler import Scheduler
from mockkube.testing.cluster import running_server
from mockkube.testing.waiting import eventually, settle

DRIVER = "gpu.example.com"
G = "resource.k8s.io"


class Env:
    def __init__(self, server, sched: Scheduler, ctrl: ResourceClaimController) -> None:
        self.server = server
        self.sched = sched
        self.ctrl = ctrl
        self.c = Client(server.resources, "test")

    def rt(self, plural: str, group: str = ""):
        return self.c.rt(plural, group)

    def node(
        self,
        name: str,
        labels: dict | None = None,
        taints: list | None = None,
        cpu: str = "4",
        memory: str = "32Gi",
        pods: str = "110",
        unschedulable: bool = False,
        extra: dict | None = None,
    ):
        alloc = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi", **(extra or {})}
        spec: dict = {}
        if taints:
            spec["taints"] = taints
        if unschedulable:
            spec["unschedulable"] = True
        return self.c.create(
            self.rt("nodes"),
            {
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                "spec": spec,
                "status": {"capacity": alloc, "allocatable": alloc},
            },
        )

    def slice(self, node: str, devices: list[dict] | int, name: str | None = None, **spec_extra):
        if isinstance(devices, int):
            devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(devices)]
        spec = {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
            **spec_extra,
        }
        return self.c.create(self.rt("resourceslices", G), {"metadata": {"name": name or f"{node}-gpu"}, "spec": spec})

    def device_class(self, name: str = "gpu", expr: str | None = None, **spec):
        sel = [{"cel": {"expression": expr or f'device.driver == "{DRIVER}"'}}]
        return self.c.create(
            self.rt("deviceclasses", G), {"metadata": {"name": name}, "spec": {"selectors": sel, **spec}}
        )

    def template(
        self,
        name: str,
        requests: list[dict] | None = None,
        ns: str = "default",
        constraints=None,
        labels=None,
        annotations=None,
    ):
        devices: dict = {"requests": requests or [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
        if constraints:
            devices["constraints"] = constraints
        meta: dict = {}
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        return self.c.create(
            self.rt("resourceclaimtemplates", G),
            {"metadata": {"name": name, "namespace": ns}, "spec": {"metadata": meta, "spec": {"devices": devices}}},
        )

    def claim(self, name: str, requests: list[dict] | None = None, ns: str = "default"):
        devices = {"requests": requests or [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
        return self.c.create(
            self.rt("resourceclaims", G), {"metadata": {"name": name, "namespace": ns}, "spec": {"devices": devices}}
        )

    def pod(
        self,
        name: str,
        template: str | None = None,
        claim: str | None = None,
        ns: str = "default",
        requests: dict | None = None,
        **spec_extra,
    ):
        container: dict = {"name": "c", "image": "busybox"}
        spec: dict = {"containers": [container], **spec_extra}
        if requests:
            container["resources"] = {"requests": requests}
        if template or claim:
            entry = {"name": "gpu"}
            if template:
                entry["resourceClaimTemplateName"] = template
            else:
                entry["resourceClaimName"] = claim
            spec["resourceClaims"] = [entry]
            container.setdefault("resources", {})["claims"] = [{"name": "gpu"}]
        return self.c.create(self.rt("pods"), {"metadata": {"name": name, "namespace": ns}, "spec": spec})

    def get_pod(self, name: str, ns: str = "default") -> dict | None:
        return self.c.get(self.rt("pods"), ns, name)

    def claim_of(self, pod_name: str, ns: str = "default") -> dict | None:
        pod = self.get_pod(pod_name, ns)
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            return self.c.get(self.rt("resourceclaims", G), ns, s["resourceClaimName"])
        for pc in pod["spec"].get("resourceClaims") or ():
            if pc.get("resourceClaimName"):
                return self.c.get(self.rt("resourceclaims", G), ns, pc["resourceClaimName"])
        return None

    def devices_of(self, pod_name: str) -> list[str]:
        claim = self.claim_of(pod_name)
        alloc = (claim.get("status") or {}).get("allocation") or {}
        return [r["device"] for r in (alloc.get("devices") or {}).get("results") or ()]

    def node_of(self, name: str) -> str | None:
        return ((self.get_pod(name) or {}).get("spec") or {}).get("nodeName")

    def events(self, name: str, reason: str = "FailedScheduling") -> list[dict]:
        return [
            e
            for e in self.c.list(self.rt("events"), "default")
            if e["involvedObject"]["name"] == name and e["reason"] == reason
        ]

    def condition(self, name: str) -> dict | None:
        for c in (self.get_pod(name).get("status") or {}).get("conditions") or ():
            if c["type"] == "PodScheduled":
                return c
        return None

    async def wait(self, pred: Callable[[], object], timeout: float = 5.0):
        return await eventually(pred, timeout)

    async def settle(self, rounds: int = 50) -> None:
        await settle(rounds)


@contextlib.asynccontextmanager
async def env(
    scheduler: bool = True,
    server_kw: dict | None = None,
    feature_gates: dict | None = None,
    runtime_config: dict | None = None,
    **kw,
) -> AsyncIterator[Env]:
    server_kw = {
        **(server_kw or {}),
        **({"feature_gates": feature_gates} if feature_gates else {}),
        **({"runtime_config": runtime_config} if runtime_config else {}),
    }
    async with running_server(**server_kw) as server:
        ctrl = ResourceClaimController(server)
        await ctrl.start()
        sched = Scheduler(server, initial_backoff=0.01, max_backoff=0.05, seed=1, **kw)
        if scheduler:
            await sched.start()
        try:
            yield Env(server, sched, ctrl)
        finally:
            if scheduler:
                await sched.stop()
            await ctrl.stop()
