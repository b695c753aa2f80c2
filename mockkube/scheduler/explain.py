"""Why is this pod pending? A read-only diagnosis over the scheduler's view.

Upstream answers with a count per reason ("0/4 nodes are available: 4 cannot allocate all
claims"). This pass, run on demand and never on the scheduling hot path, replays the
pod's PreEnqueue and PreFilter on a fresh cycle state, runs every Filter plugin on every
node (not stopping at the first rejection), and for DynamicResources walks each claim's
requests over every device the cluster publishes, saying why each was not taken and what
would make the pod fit. Nothing here writes: plugins get a throw-away CycleState and the
allocator's tally is only read.

    report = explain(scheduler, pod)      # a JSON-able dict
    print(render_text(report))            # what `mockkube explain pod` prints
"""

from __future__ import annotations

import re
from typing import Any

from mockkube.dra import capacity as cap
from mockkube.dra import cel
from mockkube.dra.allocator import _Fatal, _Req, claim_ref
from mockkube.dra.counters import CounterTracker, consumption
from mockkube.dra.pools import DeviceInfo
from mockkube.dra.taints import BLOCKING_EFFECTS, tolerates
from mockkube.scheduler import framework as fw

ANNOTATION = "mockkube.dev/why-pending"
EVENT_REASON = "WhyPending"
EVENT_MESSAGE_MAX = 1024  # upstream truncates Event messages at 1 KiB
_ATTR_REF = re.compile(r'device\.(attributes|capacity)\[\s*"([^"]+)"\s*\](?:\.([A-Za-z_][\w]*)|\[\s*"([^"]+)"\s*\])?')
_CODES = {
    fw.SUCCESS: "Success",
    fw.ERROR: "Error",
    fw.UNSCHEDULABLE: "Unschedulable",
    fw.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    fw.WAIT: "Wait",
    fw.SKIP: "Skip",
}


def find_scheduler(server: Any) -> Any:
    """The running scheduler component of a server, or None."""
    for c in getattr(server, "components", None) or ():
        if getattr(c, "name", "") == "scheduler" and hasattr(c, "dra_plugin"):
            return c
    return None


def _status(st: fw.Status | None) -> dict:
    if st is None or st.ok:
        return {"code": "Success"}
    return {"code": _CODES.get(st.code, str(st.code)), "reasons": list(st.reasons)}


# -- CEL detail -------------------------------------------------------------------------
def _conjuncts(expr: str) -> list[str]:
    """Top-level `&&` parts of an expression (outside strings and brackets)."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and expr.startswith("&&", i):
            parts.append(expr[start:i].strip())
            start = i + 2
            i += 1
        i += 1
    parts.append(expr[start:].strip())
    return [p for p in parts if p]


def _seen_values(expr: str, dev: DeviceInfo) -> dict[str, Any]:
    """The attribute and capacity values an expression refers to, as the device has them
    ("<missing>" when it has none)."""
    out: dict[str, Any] = {}
    if "device.driver" in expr:
        out["device.driver"] = dev.driver
    for kind, domain, attr, attr2 in _ATTR_REF.findall(expr):
        name = attr or attr2
        label = f'device.{kind}["{domain}"]' + (f".{name}" if name else "")
        if not name:
            continue
        fq = f"{domain}/{name}"
        if kind == "attributes":
            value = dev.attribute(fq)
            out[label] = next(iter(value.values())) if value else "<missing>"
        else:
            hit = dev.capacity().get(fq)
            raw = ((dev.device.get("capacity") or {}).get(hit[2]) or {}).get("value") if hit else None
            out[label] = raw if raw is not None else (str(hit[0]) if hit else "<missing>")
    return out


def _selector_verdict(req: _Req, dev: DeviceInfo) -> dict | None:
    """None when the device matches the class and request selectors; otherwise which
    expression was false (its first false `&&` part) or failed, with the values seen."""
    for source, exprs in (("class " + req.class_name, req.class_exprs), ("request", req.exprs)):
        for i, expr in enumerate(exprs):
            try:
                ok = dev.matches(expr)
            except cel.CELError as exc:
                return {
                    "reason": "CELRuntimeError",
                    "selector": f"{source} selector #{i}",
                    "expression": expr,
                    "message": f"{source} selector #{i}: CEL runtime error: {exc.message}",
                    "fix": "fix the expression or the device's attributes (a runtime error aborts "
                    "scheduling of the pod)",
                }
            if ok:
                continue
            failing = expr
            for part in _conjuncts(expr):
                if part == expr:
                    break
                try:
                    if not dev.matches(part):
                        failing = part
                        break
                except cel.CELError:
                    break
            seen = _seen_values(failing, dev)
            shown = ", ".join(f"{k}={v!r}" for k, v in seen.items())
            return {
                "reason": "SelectorFalse",
                "selector": f"{source} selector #{i}",
                "expression": failing,
                "seen": seen,
                "message": f"{source} selector #{i} is false: {failing}" + (f" (device has {shown})" if shown else ""),
                "fix": f"a selector other than `{failing}` (devices have {shown or 'other values'}), or a "
                "device for which it is true",
            }
    return None


# -- the diagnosis ------------------------------------------------------------------------
class _Holders:
    """Which claim (and pods) hold each allocated device."""

    def __init__(self, dra: Any) -> None:
        self.by_device: dict[tuple, list[tuple[str, list[str], bool]]] = {}
        for claim in dra.claims.values():
            alloc = (claim.get("status") or {}).get("allocation")
            if alloc:
                self._add(claim, alloc, False)
        by_uid = {(c.get("metadata") or {}).get("uid"): c for c in dra.claims.values()}
        for uid, alloc in dra.in_flight.items():
            claim = by_uid.get(uid)
            if claim is not None:
                self._add(claim, alloc, True)

    def _add(self, claim: dict, alloc: dict, in_flight: bool) -> None:
        pods = [
            r.get("name", "")
            for r in (claim.get("status") or {}).get("reservedFor") or ()
            if r.get("resource") == "pods"
        ]
        for r in (alloc.get("devices") or {}).get("results") or ():
            if r.get("adminAccess"):
                continue
            did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            self.by_device.setdefault(did, []).append((claim_ref(claim), pods, in_flight))

    def describe(self, did: tuple) -> str:
        parts = []
        for ref, pods, in_flight in self.by_device.get(did, ()):
            s = f"claim {ref}"
            if pods:
                s += f" (pod {', '.join(pods)})"
            if in_flight:
                s += " (being allocated)"
            parts.append(s)
        return "; ".join(parts) or "another claim"


def _device_verdict(
    sched: Any,
    req: _Req,
    dev: DeviceInfo,
    nodes: dict[str, Any],
    node_rejects: dict[str, list],
    holders: _Holders,
    tracker: CounterTracker,
    own: set,
) -> dict:
    did = dev.id
    state = sched.dra.state
    pool = dev.pool
    if not pool.complete:
        return {
            "reason": "PoolIncomplete",
            "message": f"pool {pool.pool_id} is incomplete: {len(pool.slices)} of {pool.slice_count} "
            f"ResourceSlices of generation {pool.generation} published",
            "fix": f"publish the pool's remaining ResourceSlices (resourceSliceCount {pool.slice_count})",
        }
    if pool.invalid:
        return {
            "reason": "PoolInvalid",
            "message": f"pool {pool.pool_id} is invalid: {pool.invalid}",
            "fix": "publish the pool with unique device names",
        }
    kind, value = dev.target
    where: list[str]
    if kind == "name":
        if value not in nodes:
            known = ", ".join(sorted(nodes)[:8]) or "none"
            return {
                "reason": "NodeNotFound",
                "message": f"its ResourceSlice names node {value}, which does not exist",
                "fix": f"publish the slice for an existing node ({known}) or add node {value}",
            }
        where = [value]
    elif kind == "none":
        return {
            "reason": "NoNode",
            "message": "its ResourceSlice selects no node",
            "fix": "set nodeName, nodeSelector or allNodes on the slice",
        }
    else:
        where = [n for n, info in nodes.items() if dev.on_node(info.node)]
        if not where:
            return {
                "reason": "NoMatchingNode",
                "message": "its ResourceSlice's node selector matches no node",
                "fix": "label a node to match the slice's nodeSelector",
            }
    sel = _selector_verdict(req, dev)
    if sel is not None:
        return sel
    if not req.admin and did in state.devices:
        who = holders.describe(did)
        return {
            "reason": "Allocated",
            "message": f"allocated to {who}",
            "holders": who,
            "fix": f"delete or finish the pod(s) holding {who}",
        }
    if req.capacity or dev.allow_multiple:
        try:
            amounts = cap.consumption_for(dev, req.capacity)
        except cap.CapacityRequestError as exc:
            return {"reason": "Capacity", "message": str(exc), "fix": "request capacity the device's policy allows"}
        if amounts is None:
            return {
                "reason": "Capacity",
                "message": "the request asks for capacity the device does not have",
                "fix": "request only capacity names the device publishes",
            }
        used = state.capacity.get(did)
        if not cap.fits(dev, amounts, used):
            need = ", ".join(f"{k}={v}" for k, v in amounts.items())
            left = ", ".join(
                f"{k}={dev.capacity()[k][0] - (used or {}).get(k, 0) if k in dev.capacity() else '?'}" for k in amounts
            )
            return {
                "reason": "CapacityExhausted",
                "message": f"capacity needed {need}, left {left}",
                "fix": "free shares of this device or request less",
            }
    if dev.consumes_counters and not (dev.allow_multiple and did in state.capacity):
        avail = tracker._pool_available(pool)
        short = []
        for cs, name, amount in consumption(dev):
            have = avail.get(cs, {}).get(name)
            if have is not None and have.cmp(amount) < 0:
                short.append(f"counter set {cs} counter {name}: needs {amount}, {have} left")
        if short:
            users = sorted(
                {holders.describe(d.id) for d in pool.devices if d.consumes_counters and d.id in state.devices}
            )
            return {
                "reason": "CountersExhausted",
                "message": "; ".join(short),
                "fix": "free a device drawing from the same counters" + (f" ({'; '.join(users)})" if users else ""),
            }
    blocking = [
        t
        for t in dev.taints
        if t.get("effect") in BLOCKING_EFFECTS and not any(tolerates(tol, t) for tol in req.tolerations)
    ]
    if blocking:
        t = blocking[0]
        shown = f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
        return {
            "reason": "TaintNotTolerated",
            "message": f"taint {shown} not tolerated",
            "fix": f"add a toleration to the request: {{key: {t.get('key')}, operator: Exists, "
            f"effect: {t.get('effect')}}}, or remove the taint",
        }
    blocked = {n: node_rejects[n] for n in where if node_rejects.get(n)}
    if blocked and len(blocked) == len(where):
        n = where[0]
        plugin, reasons = blocked[n][0]
        return {
            "reason": "NodeRejected",
            "message": f"on node {n}, which {plugin} rejects: {', '.join(reasons)}",
            "fix": f"make node {n} acceptable to {plugin}",
        }
    if did in own:
        return {
            "reason": "TakenByThisPod",
            "message": "taken by another request of this pod",
            "fix": "add devices or ask for fewer",
        }
    out = {"reason": "Fits", "message": "free and matching" + (f" on node {where[0]}" if len(where) == 1 else "")}
    if dev.binding_conditions:
        out["reason"] = "BindingConditions"
        out["message"] += (
            f"; has binding conditions {', '.join(dev.binding_conditions)}: the pod waits in PreBind "
            "until they are True"
        )
    return out


def _claim_report(sched: Any, claim: dict, nodes: dict, node_rejects: dict, holders: _Holders) -> dict:
    alloc = sched.dra.allocator
    ref = claim_ref(claim)
    out: dict[str, Any] = {"claim": ref, "requests": []}
    st = claim.get("status") or {}
    if st.get("allocation"):
        devs = [
            f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
            for r in (st["allocation"].get("devices") or {}).get("results") or ()
        ]
        out["allocated"] = devs
        pods = [r.get("name") for r in st.get("reservedFor") or ()]
        conds = []
        for d in st.get("devices") or ():
            for c in d.get("conditions") or ():
                conds.append(f"{d.get('device')}: {c.get('type')}={c.get('status')}")
        out["message"] = f"already allocated ({', '.join(devs)})" + (
            f", reserved for {', '.join(pods)}" if pods else ""
        )
        pending = [
            r for r in (st["allocation"].get("devices") or {}).get("results") or () if r.get("bindingConditions")
        ]
        if pending:
            out["message"] += (
                "; binding conditions "
                + ", ".join(c for r in pending for c in r["bindingConditions"])
                + (f" (now: {', '.join(conds)})" if conds else "")
            )
        return out
    try:
        plan = alloc._plan(claim)
    except _Fatal as exc:
        fix = "create the DeviceClass" if "not found" in exc.message else "fix the claim or its class"
        out["error"] = exc.message
        out["fix"] = fix
        return out
    tracker = CounterTracker(lambda d: sched.dra.state.in_use(d.id) or sched.dra.state.shared_in_use(d.id))
    devices = [d for key in sorted(alloc.pools) for d in alloc.pools[key].devices]
    for slot in plan.slots:
        for req in slot.alts:
            rows = []
            other = 0
            for dev in devices:
                v = _device_verdict(sched, req, dev, nodes, node_rejects, holders, tracker, set())
                if v["reason"] == "SelectorFalse" and v["selector"].startswith("class "):
                    other += 1  # not of this request's class: not a candidate at all
                    continue
                v["device"] = "/".join(dev.id)
                rows.append(v)
            fits = [r for r in rows if r["reason"] in ("Fits", "BindingConditions")]
            want = req.count if req.mode == "ExactCount" else max(len(fits), 1)
            entry = {
                "request": req.full_name,
                "deviceClassName": req.class_name,
                "mode": req.mode,
                "count": req.count,
                "candidates": rows,
                "fitting": len(fits),
                "otherClassDevices": other,
            }
            if not rows:
                entry["message"] = f"no published device is of class {req.class_name}" + (
                    f" ({other} device(s) of other classes)" if other else ""
                )
                entry["fix"] = [
                    f"install the DRA driver for class {req.class_name} on a node (or apply a "
                    f"ResourceSlice with devices its selectors accept)"
                ]
            elif len(fits) < want:
                entry["message"] = f"{len(fits)} of {want} device(s) available"
                fixes = []
                for r in sorted(rows, key=lambda r: r["reason"] == "SelectorFalse"):
                    if r.get("fix") and r["fix"] not in fixes:
                        fixes.append(r["fix"])
                entry["fix"] = fixes[:6]
            out["requests"].append(entry)
    return out


def explain(sched: Any, pod: dict) -> dict:
    """The diagnosis of one pod (see the module docstring); read-only."""
    m = pod.get("metadata") or {}
    report: dict[str, Any] = {
        "kind": "PodExplanation",
        "apiVersion": "mockkube.dev/v1",
        "pod": f"{m.get('namespace')}/{m.get('name')}",
    }
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        report["verdict"] = f"scheduled on node {spec['nodeName']}"
        report["scheduled"] = True
        return report
    report["scheduled"] = False
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            report["schedulerMessage"] = c.get("message", "")
    for p in sched.plugins:
        st = p.pre_enqueue(pod)
        if st is not None and not st.ok:
            report["verdict"] = f"waiting before the queue: {p.name}: {st.message}"
            report["preEnqueue"] = {"plugin": p.name, **_status(st)}
            report["fix"] = [
                "create the pod's ResourceClaims (or wait for the ResourceClaim controller)"
                if p.name == "DynamicResources"
                else "remove the pod's schedulingGates"
            ]
            return report
    state = fw.CycleState()
    skip: set[str] = set()
    for p in sched.plugins:
        st = p.pre_filter(state, pod)
        if st is not None and st.code == fw.SKIP:
            skip.add(p.name)
        elif st is not None and not st.ok:
            report["verdict"] = f"PreFilter {p.name}: {st.message}"
            report["preFilter"] = {"plugin": p.name, **_status(st)}
            s = state.get(sched.dra_plugin.name)
            if p is sched.dra_plugin and s is not None and s.claims:
                # e.g. a missing DeviceClass: the claims that cannot be planned say why
                holders = _Holders(sched.dra)
                bad = [r for r in (_claim_report(sched, c, {}, {}, holders) for c in s.claims) if r.get("error")]
                if bad:
                    report["claims"] = bad
                    report["fix"] = list(dict.fromkeys(r["fix"] for r in bad if r.get("fix")))
            return report
    nodes = {n.name: n for n in sched.cache.node_list}
    filters = [p for p in sched.plugins if p.name not in skip and type(p).filter is not fw.Plugin.filter]
    per_node: list[dict] = []
    rejects: dict[str, list] = {}
    dra_rejects: dict[str, list] = {}
    fitting: list[str] = []
    for name, node in nodes.items():
        verdicts = {}
        for p in filters:
            try:
                st = p.filter(state, pod, node)
            except Exception as exc:  # pragma: no cover - diagnosis must not fail the request
                st = fw.error(str(exc))
            verdicts[p.name] = _status(st)
            if st is not None and not st.ok:
                target = dra_rejects if p.name == sched.dra_plugin.name else rejects
                target.setdefault(name, []).append((p.name, list(st.reasons)))
        if not rejects.get(name) and not dra_rejects.get(name):
            fitting.append(name)
        per_node.append({"node": name, "fits": name in fitting, "plugins": verdicts})
    report["nodes"] = per_node
    s = state.get(sched.dra_plugin.name)
    if s is not None and (s.claims or s.extended is not None):
        holders = _Holders(sched.dra)
        claims = [c for c in s.claims]
        if s.extended is not None:
            claims.append(s.extended)
        report["claims"] = [_claim_report(sched, c, nodes, rejects, holders) for c in claims]
    if not nodes:
        report["verdict"] = "no nodes in the cluster"
        report["fix"] = ["add a node (a cluster profile, or `mockkube apply-profile`)"]
    elif fitting:
        report["verdict"] = (
            f"fits on {len(fitting)} node(s) now ({', '.join(fitting[:5])}); the scheduler "
            "will place it on its next attempt"
        )
    else:
        hist: dict[str, int] = {}
        for name in nodes:
            for plugin, reasons in rejects.get(name, []) + dra_rejects.get(name, []):
                for r in reasons:
                    hist[f"{plugin}: {r}"] = hist.get(f"{plugin}: {r}", 0) + 1
        report["verdict"] = f"0/{len(nodes)} nodes fit: " + ", ".join(f"{v} {k}" for k, v in sorted(hist.items()))
        fixes: list[str] = []
        for c in report.get("claims") or ():
            for f in [c.get("fix")] + [x for r in c.get("requests") or () for x in (r.get("fix") or [])]:
                if isinstance(f, str) and f and f not in fixes:
                    fixes.append(f)
        if not fixes:
            for name in nodes:
                for plugin, reasons in rejects.get(name, []):
                    f = f"node {name}: {plugin} ({', '.join(reasons)})"
                    if f not in fixes:
                        fixes.append(f)
        report["fix"] = fixes[:8]
    return report


def _grouped(rows: list[dict], all_devices: bool = False) -> list[tuple[str, str]]:
    """Candidates with the same verdict on one line: "a, b, c (+5 more): message"."""
    groups: dict[str, list[str]] = {}
    for d in rows:
        groups.setdefault(d["message"], []).append(d["device"])
    out = []
    for message, devs in groups.items():
        if all_devices or len(devs) <= 3:
            out.append((", ".join(devs), message))
        else:
            out.append((f"{', '.join(devs[:3])} (+{len(devs) - 3} more)", message))
    return out


def render_text(report: dict, all_devices: bool = False) -> str:
    """The human-readable explanation (CLI, annotation)."""
    lines = [f"Pod {report.get('pod')}: {report.get('verdict', '')}"]
    if report.get("scheduled"):
        return lines[0]
    if report.get("schedulerMessage"):
        lines.append(f"  scheduler said: {report['schedulerMessage']}")
    for n in report.get("nodes") or ():
        parts = []
        for plugin, v in n["plugins"].items():
            parts.append(f"{plugin}={'ok' if v['code'] == 'Success' else ', '.join(v.get('reasons') or [v['code']])}")
        lines.append(f"  node {n['node']}: {'fits' if n['fits'] else 'no'} ({'; '.join(parts)})")
    for c in report.get("claims") or ():
        if c.get("error"):
            lines.append(f"  claim {c['claim']}: {c['error']}")
            continue
        if c.get("message") and not c.get("requests"):
            lines.append(f"  claim {c['claim']}: {c['message']}")
            continue
        lines.append(f"  claim {c['claim']}:")
        for r in c.get("requests") or ():
            head = f"    request {r['request']} (class {r['deviceClassName']}, {r['mode']}"
            head += f" {r['count']})" if r["mode"] == "ExactCount" else ")"
            lines.append(head + (f": {r['message']}" if r.get("message") else ""))
            for devs, message in _grouped(r["candidates"], all_devices):
                lines.append(f"      {devs}: {message}")
    if report.get("fix"):
        lines.append("  to make it fit:")
        lines.extend(f"    - {f}" for f in report["fix"])
    return "\n".join(lines)


def summary(report: dict, limit: int = EVENT_MESSAGE_MAX) -> str:
    """One Event-sized message: the verdict, the first telling device reason per request
    and the first fix."""
    parts = [report.get("verdict", "")]
    for c in report.get("claims") or ():
        if c.get("error"):
            parts.append(f"claim {c['claim']}: {c['error']}")
        for r in c.get("requests") or ():
            if not r.get("message"):
                continue
            told = sorted(
                (d for d in r["candidates"] if d["reason"] not in ("Fits", "BindingConditions")),
                key=lambda d: d["reason"] == "SelectorFalse",
            )
            shown = "; ".join(f"{devs}: {message}" for devs, message in _grouped(told)[:3])
            parts.append(
                f"claim {c['claim']} request {r['request']}: {r['message']}" + (f" ({shown})" if shown else "")
            )
    if report.get("fix"):
        parts.append(f"to fit: {report['fix'][0]}")
    text = ". ".join(p.rstrip(".") for p in parts if p) + "."
    return text if len(text) <= limit else text[: limit - 3] + "..."


class WhyPendingReporter:
    """Writes the explanation where kubectl shows it (an Event ``WhyPending`` on the pod,
    the full text in the ``mockkube.dev/why-pending`` annotation) after a failed attempt,
    but only while the scheduler's active queue is empty: the diagnosis never delays a
    scheduling cycle. One report per pod and FailedScheduling message."""

    BATCH = 1  # one diagnosis per turn of the loop: it walks every node
    ANNOTATION_MAX = 8192

    def __init__(self, sched: Any) -> None:
        self.sched = sched
        self.pending: dict[str, str] = {}  # pod key -> FailedScheduling message
        self.done: dict[str, str] = {}  # pod uid -> message already explained
        self._handle = None

    def note(self, key: str, pod: dict, message: str) -> None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        if self.done.get(uid) == message:
            return
        self.pending[key] = message
        self._arm()

    def forget(self, uid: str) -> None:
        self.done.pop(uid, None)

    def _arm(self) -> None:
        if self._handle is None:
            import asyncio

            try:
                self._handle = asyncio.get_running_loop().call_later(0.05, self._drain)
            except RuntimeError:  # no loop (unit tests driving schedule_one directly)
                self._handle = None

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _drain(self) -> None:
        self._handle = None
        if self.sched.queue.has_active():
            self._arm()
            return
        for _ in range(min(self.BATCH, len(self.pending))):
            key, message = next(iter(self.pending.items()))
            del self.pending[key]
            try:
                self._report(key, message)
            except Exception:  # pragma: no cover - a diagnosis must never break the scheduler
                import logging

                logging.getLogger("mockkube.scheduler").debug("explaining %s failed", key, exc_info=True)
        if self.pending:
            self._arm()

    def _report(self, key: str, message: str) -> None:
        from mockkube.machinery import errors

        sched = self.sched
        ns, _, name = key.partition("/")
        pod = sched.client.get(sched.pods_rt, ns, name)
        if pod is None or (pod.get("spec") or {}).get("nodeName"):
            return
        uid = pod["metadata"].get("uid", "")
        report = explain(sched, pod)
        if report.get("scheduled"):
            return
        self.done[uid] = message
        if len(self.done) > 50_000:
            self.done.clear()
        text = render_text(report)
        if len(text) > self.ANNOTATION_MAX:
            text = text[: self.ANNOTATION_MAX - 4] + "\n..."
        if (pod["metadata"].get("annotations") or {}).get(ANNOTATION) != text:
            try:
                sched.client.patch(
                    sched.pods_rt, ns, name, {"metadata": {"uid": uid, "annotations": {ANNOTATION: text}}}, "merge"
                )
            except errors.APIError:
                return
        sched.recorder.event(pod, "Normal", EVENT_REASON, summary(report), action="Scheduling")
