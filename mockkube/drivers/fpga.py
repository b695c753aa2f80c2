"""fpga.example.com: fabric-attached FPGAs (KEP-5007).

The devices live in pools shared by the nodes a fabric reaches (slice ``nodeSelector`` or
``allNodes``) and carry ``bindingConditions``: the scheduler waits in PreBind until
``FabricController`` has "attached and programmed" the device on the chosen node (after
``attachDelay``, read from the injectable clock) and set the condition True in the
claim's ``status.devices`` — or set the failure condition (seeded failure rate or a
per-device fault), after which the device is tainted so it is not picked again.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable

from mockkube.client.client import Client, clone
from mockkube.client.informer import Controller, Informer
from mockkube.drivers.base import Driver, PoolSlices, attr, chunk
from mockkube.machinery import meta

log = logging.getLogger("mockkube.fpga")

DRIVER = "fpga.example.com"
ATTACHED = "fpga.example.com/attached"
ATTACH_FAILED = "fpga.example.com/attach-failed"


class FPGADriver(Driver):
    name = DRIVER
    cdi_kind = "fpga"

    def shared_pools(self, fabric: list[dict]) -> list[PoolSlices]:
        pools = []
        for f in fabric:
            if f.get("driver", DRIVER) != DRIVER:
                continue
            where: dict = {"allNodes": True}
            if f.get("nodeSelector"):
                where = {
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": k, "operator": "In", "values": [v]}
                                    for k, v in sorted(f["nodeSelector"].items())
                                ]
                            }
                        ]
                    }
                }
            devices = [
                {
                    "name": f"fpga-{i}",
                    "attributes": {
                        "model": attr(f.get("model", "FABRIC-FPGA-1")),
                        "index": attr(i),
                        "fabric": attr(f["pool"]),
                    },
                    "capacity": {"logicCells": {"value": "1M"}},
                    "bindsToNode": True,
                    "bindingConditions": [ATTACHED],
                    "bindingFailureConditions": [ATTACH_FAILED],
                }
                for i in range(int(f["devices"]))
            ]
            pools.append(PoolSlices(f["pool"], [dict(where, devices=part) for part in chunk(devices)]))
        return pools

    def publish_shared(self, fabric: list[dict]) -> list[tuple[str, list[dict]]]:
        return [(p.pool, self._specs(p)) for p in self.shared_pools(fabric)]


def _conditions_set(claim: dict, result: dict) -> bool:
    for d in (claim.get("status") or {}).get("devices") or ():
        if (d.get("driver"), d.get("pool"), d.get("device")) == (
            result.get("driver"),
            result.get("pool"),
            result.get("device"),
        ):
            types = {c.get("type") for c in d.get("conditions") or ()}
            return bool(types & {ATTACHED, ATTACH_FAILED})
    return False


def _selected_node(claim: dict) -> str:
    sel = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector") or {}
    for term in sel.get("nodeSelectorTerms") or ():
        for f in (term.get("matchFields") or []) + (term.get("matchExpressions") or []):
            if f.get("key") in ("metadata.name", "kubernetes.io/hostname") and f.get("values"):
                return f["values"][0]
    return ""


class FabricController(Controller):
    """Attaches allocated fabric FPGAs and reports the outcome as binding conditions."""

    name = "fpga-fabric"

    def __init__(
        self,
        client: Client,
        clock: Callable[[], float],
        driver: FPGADriver,
        on_fault: Callable[[str, str], None] | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.clock = clock
        self.driver = driver
        self.on_fault = on_fault
        from mockkube.machinery.durations import parse_duration

        s = driver.settings
        self.delay = parse_duration(s.get("attachDelay", "1s"))
        self.failure_rate = float(s.get("failureRate", 0))
        self.rng = random.Random(s.get("seed", 0))
        self.faulty: set[str] = set(s.get("faultyDevices") or [])
        self.first_seen: dict[tuple[str, str, str], float] = {}
        self.rt = client.rt("resourceclaims", "resource.k8s.io")
        inf = Informer(client.store, self.rt)
        inf.add_handler(self._on_claim)
        self.informers.append(inf)

    def identity(self) -> dict | None:
        """The driver's controller acts as the driver's ServiceAccount (not bound to a node:
        it attaches devices of every node, so it holds ``arbitrary-node`` rights)."""
        from mockkube.rules.identities import driver_user

        return driver_user(DRIVER)

    def informer_identity(self) -> dict | None:
        return self.identity()

    def inject_fault(self, device: str) -> None:
        """Make the next attach of ``device`` (e.g. "fabric-a/fpga-1" or "fpga-1") fail."""
        self.faulty.add(device)

    def _on_claim(self, typ: str, obj: dict, prev: dict | None) -> None:
        if typ != "DELETED" and self._pending(obj):
            self.queue.add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
        elif typ == "DELETED" or not (obj.get("status") or {}).get("allocation"):
            # deallocated (binding failed or timed out): a new allocation attaches afresh
            uid = obj["metadata"].get("uid")
            for k in [k for k in self.first_seen if k[0] == uid]:
                del self.first_seen[k]

    def resync(self) -> None:
        """Look at every claim again (after a test advanced the injectable clock)."""
        for c in self.client.list(self.rt):
            self._on_claim("MODIFIED", c, None)

    def _pending(self, claim: dict) -> list[dict]:
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ()
        return [
            r
            for r in results
            if r.get("driver") == DRIVER and r.get("bindingConditions") and not _conditions_set(claim, r)
        ]

    def reconcile(self, key: tuple[str, str]) -> None:
        claim = self.client.get(self.rt, *key)
        if claim is None:
            return
        pending = self._pending(claim)
        if not pending:
            return
        now = self.clock()
        uid = claim["metadata"]["uid"]
        due_results, wait = [], None
        for r in pending:
            first = self.first_seen.setdefault((uid, r["pool"], r["device"]), now)
            left = first + self.delay - now
            if left > 0:
                wait = left if wait is None else min(wait, left)
            else:
                due_results.append(r)
        if due_results:
            self._report(claim, due_results, now)
        if wait is not None:
            self.queue.add_after(key, wait)

    def _fails(self, r: dict) -> bool:
        if r["device"] in self.faulty or f"{r['pool']}/{r['device']}" in self.faulty:
            return True
        return self.failure_rate > 0 and self.rng.random() < self.failure_rate

    def _report(self, claim: dict, results: list[dict], now: float) -> None:
        new = clone(claim)
        status = new.setdefault("status", {})
        devices = status.setdefault("devices", [])
        node = _selected_node(claim) or "the selected node"
        faults = []
        for r in results:
            failed = self._fails(r)
            cond = {
                "type": ATTACH_FAILED if failed else ATTACHED,
                "status": "True",
                "reason": "AttachFailed" if failed else "Attached",
                "message": (
                    f"fabric could not attach {r['device']} to {node}"
                    if failed
                    else f"{r['device']} attached to {node} and programmed"
                ),
                "lastTransitionTime": meta.rfc3339(now),
                "observedGeneration": claim["metadata"].get("generation", 1),
            }
            entry = next(
                (
                    d
                    for d in devices
                    if (d.get("driver"), d.get("pool"), d.get("device")) == (r["driver"], r["pool"], r["device"])
                ),
                None,
            )
            if entry is None:
                entry = {"driver": r["driver"], "pool": r["pool"], "device": r["device"]}
                devices.append(entry)
            entry["conditions"] = [c for c in entry.get("conditions") or () if c.get("type") != cond["type"]] + [cond]
            if failed:
                faults.append((r["pool"], r["device"]))
        self.client.update_status(self.rt, new)
        for pool, device in faults:
            log.info("fpga %s/%s failed to attach", pool, device)
            if self.on_fault is not None:
                self.on_fault(pool, device)
