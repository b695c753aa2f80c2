"""Objects a fresh kube-apiserver creates besides namespaces: the system PriorityClasses
(scheduling post-start hook), the bootstrap RBAC policy, the API Priority and Fairness
configuration (mandatory and suggested FlowSchemas and PriorityLevelConfigurations), the Local APIServices (autoregister controller) and, as a
kind/minikube cluster ships one, a default StorageClass for the simulated provisioner."""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.resources.apiregistration import local_apiservices
from mockkube.apiserver.resources.rbac_bootstrap import (
    PODGROUP_PROTECTION,
    cluster_role_bindings,
    cluster_roles,
    namespaced_role_bindings,
    namespaced_roles,
)
from mockkube.apiserver.resources.scheduling import SYSTEM_PRIORITY_CLASSES
from mockkube.machinery.registry import Registry, ResourceType

SIMULATED_PROVISIONER = "mockkube.io/simulated"
DEFAULT_STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": SIMULATED_PROVISIONER,
    "reclaimPolicy": "Delete",
    "volumeBindingMode": "Immediate",
    "allowVolumeExpansion": True,
}


def bootstrap_objects(registry: Registry, gates: Any = None) -> list[tuple[ResourceType, str, dict]]:
    """(resource, namespace, object) to create when missing, in order (``gates``: the
    server's feature gates, which add to the bootstrap RBAC policy as upstream's do)."""
    out: list[tuple[ResourceType, str, dict]] = []
    pc = registry.get("scheduling.k8s.io", "v1", "priorityclasses")
    out += [(pc, "", o) for o in SYSTEM_PRIORITY_CLASSES]
    cr = registry.get("rbac.authorization.k8s.io", "v1", "clusterroles")
    out += [(cr, "", o) for o in cluster_roles(gates)]
    crb = registry.get("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
    out += [(crb, "", o) for o in cluster_role_bindings(gates)]
    roles = registry.get("rbac.authorization.k8s.io", "v1", "roles")
    out += [(roles, o["metadata"]["namespace"], o) for o in namespaced_roles()]
    rbs = registry.get("rbac.authorization.k8s.io", "v1", "rolebindings")
    out += [(rbs, o["metadata"]["namespace"], o) for o in namespaced_role_bindings()]
    from mockkube.rules.identities import controller_service_accounts, driver_service_accounts

    sa = registry.get("", "v1", "serviceaccounts")
    out += [
        (sa, "kube-system", {"metadata": {"name": n, "namespace": "kube-system"}})
        for n in controller_service_accounts() + driver_service_accounts()
    ]
    if gates is not None and gates.enabled("GenericWorkload"):  # kube-controller-manager runs it only then
        out.append((sa, "kube-system", {"metadata": {"name": PODGROUP_PROTECTION, "namespace": "kube-system"}}))
    from mockkube.rules.flowcontrol_bootstrap import flow_schemas, priority_levels

    pls = registry.get("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations")
    out += [(pls, "", o) for o in priority_levels()]
    fss = registry.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
    out += [(fss, "", o) for o in flow_schemas()]
    sc = registry.get("storage.k8s.io", "v1", "storageclasses")
    out.append((sc, "", DEFAULT_STORAGE_CLASS))
    api = registry.get("apiregistration.k8s.io", "v1", "apiservices")
    for o in local_apiservices(registry.group_versions()):
        o["status"] = {
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastTransitionTime": None,
                    "reason": "Local",
                    "message": "Local APIServices are always available",
                }
            ]
        }
        out.append((api, "", o))
    return out
