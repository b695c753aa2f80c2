"""Table columns and cells (printers.go) for HorizontalPodAutoscalers, CertificateSigningRequests,
API Priority and Fairness objects, storage capacities, volume attributes classes, ServiceCIDRs
and IPAddresses. Registered into ``mockkube.apiserver.http.tables``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from mockkube.apiserver.http.tablecells import _age, _age_col, _col, _doc, _meta, _name_col, human_duration

Obj = dict[str, Any]
_HPA = "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"
_CSR = "io.k8s.api.certificates.v1.CertificateSigningRequest"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_FC = "io.k8s.api.flowcontrol.v1."


def _q(v: Any) -> str:
    """A quantity as resource.Quantity.String() prints it."""
    if v is None:
        return "<nil>"
    try:
        from mockkube.machinery.quantity import parse_quantity

        return str(parse_quantity(v))
    except (ValueError, TypeError):
        return str(v)


def format_hpa_metrics(specs: list, statuses: list) -> str:
    """printers.go formatHPAMetrics."""
    if not specs:
        return "<none>"
    out: list[str] = []
    for i, spec in enumerate(specs):
        st = statuses[i] if i < len(statuses) and isinstance(statuses[i], dict) else {}
        typ = spec.get("type")
        if typ in ("External", "Object"):
            key = typ.lower()
            src, cur = spec.get(key) or {}, (st.get(key) or {}).get("current") if st.get(key) else None
            target = src.get("target") or {}
            if target.get("averageValue") is not None:
                current = _q(cur["averageValue"]) if cur and cur.get("averageValue") is not None else "<unknown>"
                out.append(f"{current}/{_q(target['averageValue'])} (avg)")
            else:
                current = _q(cur.get("value")) if cur is not None else "<unknown>"
                out.append(f"{current}/{_q(target.get('value'))}")
        elif typ == "Pods":
            cur = (st.get("pods") or {}).get("current") if st.get("pods") else None
            current = _q(cur.get("averageValue")) if cur is not None else "<unknown>"
            out.append(f"{current}/{_q(((spec.get('pods') or {}).get('target') or {}).get('averageValue'))}")
        elif typ in ("Resource", "ContainerResource"):
            key = "resource" if typ == "Resource" else "containerResource"
            src = spec.get(key) or {}
            target = src.get("target") or {}
            cur = (st.get(key) or {}).get("current") if st.get(key) else None
            if target.get("averageValue") is not None:
                current = _q(cur.get("averageValue")) if cur is not None else "<unknown>"
                out.append(f"{src.get('name', '')}: {current}/{_q(target['averageValue'])}")
            else:
                current = "<unknown>"
                if cur is not None and cur.get("averageUtilization") is not None:
                    current = f"{cur['averageUtilization']}%"
                tgt = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
                out.append(f"{src.get('name', '')}: {current}/{tgt}")
        else:
            out.append("<unknown type>")
    if len(out) > 2:
        return ", ".join(out[:2]) + f" + {len(out) - 2} more..."
    return ", ".join(out)


def csr_condition(csr: Obj) -> str:
    """printers.go extractCSRStatus."""
    types = {c.get("type") for c in (csr.get("status") or {}).get("conditions") or ()}
    out = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        out += ",Failed"
    if (csr.get("status") or {}).get("certificate"):
        out += ",Issued"
    return out


def _columns(t) -> dict[tuple[str, str], list[dict]]:
    return {
        ("networking.k8s.io", "servicecidrs"): [
            _name_col(),
            _col("CIDRs", _doc("io.k8s.api.networking.v1.ServiceCIDRSpec", "cidrs")),
            _age_col(),
        ],
        # two columns, three cells (the age too), as printers.go has it
        ("networking.k8s.io", "ipaddresses"): [
            _name_col(),
            _col("ParentRef", _doc("io.k8s.api.networking.v1.IPAddressSpec", "parentRef")),
        ],
        ("storage.k8s.io", "csistoragecapacities"): [
            _name_col(),
            _col("StorageClassName", _doc("io.k8s.api.storage.v1.CSIStorageCapacity", "storageClassName")),
            _col("Capacity", _doc("io.k8s.api.storage.v1.CSIStorageCapacity", "capacity")),
        ],
        ("storage.k8s.io", "volumeattributesclasses"): [
            _name_col(),
            _col("DriverName", _doc("io.k8s.api.storage.v1.VolumeAttributesClass", "driverName")),
            _age_col(),
        ],
        ("flowcontrol.apiserver.k8s.io", "flowschemas"): [
            _name_col(),
            _col("PriorityLevel", _doc(_FC + "PriorityLevelConfigurationReference", "name")),
            _col("MatchingPrecedence", _doc(_FC + "FlowSchemaSpec", "matchingPrecedence")),
            _col("DistinguisherMethod", _doc(_FC + "FlowSchemaSpec", "distinguisherMethod")),
            _age_col(),
            _col("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
        ],
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): [
            _name_col(),
            _col("Type", _doc(_FC + "PriorityLevelConfigurationSpec", "type")),
            _col(
                "NominalConcurrencyShares", _doc(_FC + "LimitedPriorityLevelConfiguration", "nominalConcurrencyShares")
            ),
            _col("Queues", _doc(_FC + "QueuingConfiguration", "queues")),
            _col("HandSize", _doc(_FC + "QueuingConfiguration", "handSize")),
            _col("QueueLengthLimit", _doc(_FC + "QueuingConfiguration", "queueLengthLimit")),
            _age_col(),
        ],
        ("certificates.k8s.io", "certificatesigningrequests"): [
            _name_col(),
            _age_col(),
            _col("SignerName", _doc(_CSR + "Spec", "signerName")),
            _col("Requestor", _doc(_CSR + "Spec", "request")),
            _col("RequestedDuration", _doc(_CSR + "Spec", "expirationSeconds")),
            _col("Condition", _doc(_CSR + "Status", "conditions")),
        ],
        ("autoscaling", "horizontalpodautoscalers"): [
            _name_col(),
            _col("Reference", _doc(_HPA + "Spec", "scaleTargetRef")),
            _col("Targets", _doc(_HPA + "Spec", "metrics")),
            _col("MinPods", _doc(_HPA + "Spec", "minReplicas")),
            _col("MaxPods", _doc(_HPA + "Spec", "maxReplicas")),
            _col("Replicas", _doc(_HPA + "Status", "currentReplicas")),
            _age_col(),
        ],
    }


def _cells(t) -> dict[tuple[str, str], Callable[[Obj, datetime], list]]:
    def hpa(o: Obj, now: datetime) -> list:
        s, st = o.get("spec") or {}, o.get("status") or {}
        ref = s.get("scaleTargetRef") or {}
        mn = s.get("minReplicas")
        return [
            _meta(o).get("name", ""),
            f"{ref.get('kind', '')}/{ref.get('name', '')}",
            format_hpa_metrics(s.get("metrics") or [], st.get("currentMetrics") or []),
            "<unset>" if mn is None else str(mn),
            s.get("maxReplicas", 0),
            st.get("currentReplicas", 0),
            _age(o, now),
        ]

    def csr(o: Obj, now: datetime) -> list:
        s = o.get("spec") or {}
        exp = s.get("expirationSeconds")
        return [
            _meta(o).get("name", ""),
            _age(o, now),
            s.get("signerName") or "<none>",
            s.get("username", ""),
            "<none>" if exp is None else human_duration(exp * 1_000_000_000),
            csr_condition(o),
        ]

    def flowschema(o: Obj, now: datetime) -> list:
        s = o.get("spec") or {}
        dm = s.get("distinguisherMethod")
        missing = next(
            (
                c.get("status", "")
                for c in (o.get("status") or {}).get("conditions") or ()
                if c.get("type") == "Dangling"
            ),
            "?",
        )
        return [
            _meta(o).get("name", ""),
            (s.get("priorityLevelConfiguration") or {}).get("name", ""),
            s.get("matchingPrecedence", 0),
            dm.get("type", "") if dm is not None else "<none>",
            _age(o, now),
            missing,
        ]

    def prioritylevel(o: Obj, now: datetime) -> list:
        s = o.get("spec") or {}
        ncs: Any = "<none>"
        queues: Any = "<none>"
        hand: Any = "<none>"
        qll: Any = "<none>"
        lim = s.get("limited")
        if lim is not None:
            ncs = lim.get("nominalConcurrencyShares", 0)
            q = (lim.get("limitResponse") or {}).get("queuing")
            if q is not None:
                queues, hand, qll = q.get("queues", 0), q.get("handSize", 0), q.get("queueLengthLimit", 0)
        return [_meta(o).get("name", ""), s.get("type", ""), ncs, queues, hand, qll, _age(o, now)]

    def ipaddress(o: Obj, now: datetime) -> list:
        ref = (o.get("spec") or {}).get("parentRef")
        parent = "<none>"
        if ref is not None:
            parent = (ref.get("resource", "") + ("." + ref["group"] if ref.get("group") else "")).lower()
            if ref.get("namespace"):
                parent += "/" + ref["namespace"]
            parent += "/" + ref.get("name", "")
        return [_meta(o).get("name", ""), parent, _age(o, now)]

    return {
        ("networking.k8s.io", "servicecidrs"): lambda o, now: [
            _meta(o).get("name", ""),
            ",".join((o.get("spec") or {}).get("cidrs") or ()),
            _age(o, now),
        ],
        ("networking.k8s.io", "ipaddresses"): ipaddress,
        ("storage.k8s.io", "csistoragecapacities"): lambda o, now: [
            _meta(o).get("name", ""),
            o.get("storageClassName", ""),
            "<unset>" if o.get("capacity") is None else _q(o["capacity"]),
        ],
        ("storage.k8s.io", "volumeattributesclasses"): lambda o, now: [
            _meta(o).get("name", ""),
            o.get("driverName", ""),
            _age(o, now),
        ],
        ("flowcontrol.apiserver.k8s.io", "flowschemas"): flowschema,
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): prioritylevel,
        ("autoscaling", "horizontalpodautoscalers"): hpa,
        ("certificates.k8s.io", "certificatesigningrequests"): csr,
    }


def flow_schema_order(objs: list[Obj]) -> list[Obj]:
    """apihelpers.FlowSchemaSequence: by matchingPrecedence, then name."""
    return sorted(objs, key=lambda o: ((o.get("spec") or {}).get("matchingPrecedence", 0), _meta(o).get("name", "")))


def register(t) -> None:
    """Add these kinds' columns and cells to the tables module ``t``."""
    t.COLUMNS.update(_columns(t))
    t._CELLS.update(_cells(t))
    t.ROW_ORDER[("flowcontrol.apiserver.k8s.io", "flowschemas")] = flow_schema_order
