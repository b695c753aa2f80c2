"""Table columns and cells (printers.go) for the cluster kinds around pods: priority
classes, disruption budgets, storage, endpoints, limit ranges, pod templates, networking,
runtime classes and API services. Registered into ``mockkube.apiserver.http.tables``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

Obj = dict[str, Any]


def _columns(t) -> dict[tuple[str, str], list[dict]]:
    col, name, age = t._col, t._name_col, t._age_col
    return {
        ("scheduling.k8s.io", "priorityclasses"): [
            name(),
            col("Value", "Value is the integer value of this PriorityClass.", type="integer"),
            col(
                "Global-Default",
                "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
                type="boolean",
            ),
            age(),
            col("PreemptionPolicy", "PreemptionPolicy is the Policy for preempting pods with lower priority."),
        ],
        ("policy", "poddisruptionbudgets"): [
            name(),
            col("Min Available", "The minimum number of pods that must be available."),
            col("Max Unavailable", "The maximum number of pods that may be unavailable."),
            col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.", type="integer"),
            age(),
        ],
        ("", "persistentvolumeclaims"): [
            name(),
            col("Status", "The status of the PVC"),
            col("Volume", "The name of the volume"),
            col("Capacity", "The capacity of the volume"),
            col("Access Modes", "The access modes of the volume"),
            col("StorageClass", "The storage class of the PVC"),
            col("VolumeAttributesClass", "The VolumeAttributesClass of the PVC"),
            age(),
            col("VolumeMode", "The volume mode of the PVC", priority=1),
        ],
        ("", "persistentvolumes"): [
            name(),
            col("Capacity", "The capacity of the volume"),
            col("Access Modes", "The access modes"),
            col("Reclaim Policy", "The reclaim policy"),
            col("Status", "The status of the volume"),
            col("Claim", "The claim bound to the volume"),
            col("StorageClass", "The storage class"),
            col("VolumeAttributesClass", "The VolumeAttributesClass"),
            col("Reason", "The reason"),
            age(),
            col("VolumeMode", "The volume mode", priority=1),
        ],
        ("storage.k8s.io", "storageclasses"): [
            name(),
            col("Provisioner", "Indicates the type of the provisioner."),
            col("ReclaimPolicy", "Indicates the type of the reclaim policy."),
            col("VolumeBindingMode", "Indicates when volume binding and dynamic provisioning should occur."),
            col("AllowVolumeExpansion", "Indicates whether the storage class allow volume expand", type="boolean"),
            age(),
        ],
        ("storage.k8s.io", "csidrivers"): [
            name(),
            col("AttachRequired", "", type="boolean"),
            col("PodInfoOnMount", "", type="boolean"),
            col("StorageCapacity", "", type="boolean"),
            col("TokenRequests", ""),
            col("RequiresRepublish", "", type="boolean"),
            col("Modes", ""),
            age(),
        ],
        ("storage.k8s.io", "csinodes"): [name(), col("Drivers", "", type="integer"), age()],
        ("storage.k8s.io", "volumeattachments"): [
            name(),
            col("Attacher", ""),
            col("PV", ""),
            col("Node", ""),
            col("Attached", "", type="boolean"),
            age(),
        ],
        ("", "endpoints"): [name(), col("Endpoints", "Endpoints of the service"), age()],
        ("discovery.k8s.io", "endpointslices"): [
            name(),
            col("AddressType", ""),
            col("Ports", ""),
            col("Endpoints", ""),
            age(),
        ],
        ("", "limitranges"): [name(), col("Created At", "")],
        **{
            ("rbac.authorization.k8s.io", r): [name(), col("Created At", "", type="string", format="date")]
            for r in ("roles", "clusterroles")
        },
        **{
            ("rbac.authorization.k8s.io", r): [
                name(),
                col("Role", ""),
                age(),
                col("Users", "", priority=1),
                col("Groups", "", priority=1),
                col("ServiceAccounts", "", priority=1),
            ]
            for r in ("rolebindings", "clusterrolebindings")
        },
        ("", "podtemplates"): [
            col("Template", "", format="name"),
            col("Containers", ""),
            col("Images", ""),
            col("Pod Labels", ""),
        ],
        ("networking.k8s.io", "ingresses"): [
            name(),
            col("Class", ""),
            col("Hosts", ""),
            col("Address", ""),
            col("Ports", ""),
            age(),
        ],
        ("networking.k8s.io", "ingressclasses"): [name(), col("Controller", ""), col("Parameters", ""), age()],
        ("networking.k8s.io", "networkpolicies"): [name(), col("Pod-Selector", ""), age()],
        ("node.k8s.io", "runtimeclasses"): [name(), col("Handler", ""), age()],
        ("apiregistration.k8s.io", "apiservices"): [
            name(),
            col("Service", "The reference to the service that hosts this API endpoint."),
            col("Available", "Whether this service is available."),
            age(),
        ],
    }


def _int_or_na(v) -> str:
    return "N/A" if v is None else str(v)


def _access_modes(modes) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short.get(m, m) for m in modes or ())


def _cells(t) -> dict[tuple[str, str], Callable[[Obj, datetime], list]]:
    meta, age = t._meta, t._age

    def nm(o):
        return meta(o).get("name", "")

    def pvc(o, now):
        s, st = o.get("spec") or {}, o.get("status") or {}
        phase = "Terminating" if meta(o).get("deletionTimestamp") else st.get("phase", "")
        bound = phase == "Bound" or s.get("volumeName")
        return [
            nm(o),
            phase,
            s.get("volumeName", ""),
            (st.get("capacity") or {}).get("storage", "") if bound else "",
            _access_modes(st.get("accessModes")) if bound else "",
            s.get("storageClassName") or "",
            s.get("volumeAttributesClassName") or "<unset>",
            age(o, now),
            s.get("volumeMode", "<unset>"),
        ]

    def pv(o, now):
        s, st = o.get("spec") or {}, o.get("status") or {}
        ref = s.get("claimRef")
        claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
        phase = "Terminating" if meta(o).get("deletionTimestamp") else st.get("phase", "")
        return [
            nm(o),
            (s.get("capacity") or {}).get("storage", ""),
            _access_modes(s.get("accessModes")),
            s.get("persistentVolumeReclaimPolicy", ""),
            phase,
            claim,
            s.get("storageClassName", ""),
            s.get("volumeAttributesClassName") or "<unset>",
            st.get("reason", ""),
            age(o, now),
            s.get("volumeMode", "<unset>"),
        ]

    def sc(o, now):
        n = nm(o)
        if (meta(o).get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true":
            n += " (default)"
        return [
            n,
            o.get("provisioner", ""),
            o.get("reclaimPolicy", "Delete"),
            o.get("volumeBindingMode", "Immediate"),
            bool(o.get("allowVolumeExpansion")),
            age(o, now),
        ]

    def endpoints(o, now):
        addrs = []
        for s in o.get("subsets") or ():
            ports = [p.get("port") for p in s.get("ports") or ()] or [None]
            for a in s.get("addresses") or ():
                for p in ports:
                    addrs.append(a.get("ip", "") + (f":{p}" if p is not None else ""))
        shown = ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")
        return [nm(o), shown or "<none>", age(o, now)]

    def slices(o, now):
        ports = ",".join(str(p.get("port", "")) for p in o.get("ports") or ()) or "<unset>"
        addrs = [a for e in o.get("endpoints") or () for a in e.get("addresses") or ()]
        shown = ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")
        return [nm(o), o.get("addressType", ""), ports, shown or "<unset>", age(o, now)]

    def podtemplate(o, now):
        tpl = o.get("template") or {}
        names, images = t._layout_containers((tpl.get("spec") or {}).get("containers"))
        return [nm(o), names, images, t._format_labels((tpl.get("metadata") or {}).get("labels"))]

    def ingress(o, now):
        s = o.get("spec") or {}
        hosts = ",".join(r.get("host", "") for r in s.get("rules") or () if r.get("host")) or "*"
        lb = ",".join(
            i.get("ip") or i.get("hostname", "")
            for i in ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()
        )
        ports = "80, 443" if s.get("tls") else "80"
        return [nm(o), s.get("ingressClassName") or "<none>", hosts, lb, ports, age(o, now)]

    def ingressclass(o, now):
        p = (o.get("spec") or {}).get("parameters")
        params = f"{p.get('kind', '')}/{p.get('name', '')}" if p else "<none>"
        return [nm(o), (o.get("spec") or {}).get("controller", ""), params, age(o, now)]

    def apiservice(o, now):
        s = o.get("spec") or {}
        svc = s.get("service")
        where = f"{svc.get('namespace', '')}/{svc.get('name', '')}" if svc else "Local"
        cond = next((c for c in (o.get("status") or {}).get("conditions") or () if c.get("type") == "Available"), None)
        avail = (
            "Unknown"
            if cond is None
            else cond.get("status", "")
            if cond.get("status") == "True"
            else f"{cond.get('status', '')} ({cond.get('reason', '')})"
        )
        return [nm(o), where, avail, age(o, now)]

    def csidriver(o, now):
        s = o.get("spec") or {}
        tokens = ",".join(r.get("audience", "") for r in s.get("tokenRequests") or ()) or "<unset>"
        return [
            nm(o),
            s.get("attachRequired", True),
            s.get("podInfoOnMount", False),
            s.get("storageCapacity", False),
            tokens,
            s.get("requiresRepublish", False),
            ",".join(s.get("volumeLifecycleModes") or ()),
            age(o, now),
        ]

    def binding(o, now):
        ref = o.get("roleRef") or {}
        subjects = o.get("subjects") or ()

        def of(kind: str) -> str:
            return ", ".join(
                (f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount" else s.get("name", ""))
                for s in subjects
                if s.get("kind") == kind
            )

        return [
            nm(o),
            f"{ref.get('kind', '')}/{ref.get('name', '')}",
            age(o, now),
            of("User"),
            of("Group"),
            of("ServiceAccount"),
        ]

    def va(o, now):
        s = o.get("spec") or {}
        return [
            nm(o),
            s.get("attacher", ""),
            (s.get("source") or {}).get("persistentVolumeName", ""),
            s.get("nodeName", ""),
            bool((o.get("status") or {}).get("attached")),
            age(o, now),
        ]

    return {
        ("scheduling.k8s.io", "priorityclasses"): lambda o, now: [
            nm(o),
            o.get("value", 0),
            bool(o.get("globalDefault")),
            age(o, now),
            o.get("preemptionPolicy", ""),
        ],
        ("policy", "poddisruptionbudgets"): lambda o, now: [
            nm(o),
            _int_or_na((o.get("spec") or {}).get("minAvailable")),
            _int_or_na((o.get("spec") or {}).get("maxUnavailable")),
            (o.get("status") or {}).get("disruptionsAllowed", 0),
            age(o, now),
        ],
        ("", "persistentvolumeclaims"): pvc,
        ("", "persistentvolumes"): pv,
        ("storage.k8s.io", "storageclasses"): sc,
        ("storage.k8s.io", "csidrivers"): csidriver,
        ("storage.k8s.io", "csinodes"): lambda o, now: [
            nm(o),
            len((o.get("spec") or {}).get("drivers") or ()),
            age(o, now),
        ],
        ("storage.k8s.io", "volumeattachments"): va,
        ("", "endpoints"): endpoints,
        ("discovery.k8s.io", "endpointslices"): slices,
        ("", "limitranges"): lambda o, now: [nm(o), meta(o).get("creationTimestamp", "")],
        ("", "podtemplates"): podtemplate,
        ("networking.k8s.io", "ingresses"): ingress,
        ("networking.k8s.io", "ingressclasses"): ingressclass,
        ("networking.k8s.io", "networkpolicies"): lambda o, now: [
            nm(o),
            t._format_label_selector((o.get("spec") or {}).get("podSelector")) or "<none>",
            age(o, now),
        ],
        ("node.k8s.io", "runtimeclasses"): lambda o, now: [nm(o), o.get("handler", ""), age(o, now)],
        ("apiregistration.k8s.io", "apiservices"): apiservice,
        **{
            ("rbac.authorization.k8s.io", r): lambda o, now: [nm(o), meta(o).get("creationTimestamp", "")]
            for r in ("roles", "clusterroles")
        },
        **{("rbac.authorization.k8s.io", r): binding for r in ("rolebindings", "clusterrolebindings")},
    }


def register(t) -> None:
    """Add these kinds' columns and cells to the tables module ``t``."""
    t.COLUMNS.update(_columns(t))
    t._CELLS.update(_cells(t))
