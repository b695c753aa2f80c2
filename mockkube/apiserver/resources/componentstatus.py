"""core/v1 ``componentstatuses`` (deprecated since v1.19, still served) and ``bindings``
(the pre-subresource way to bind a pod, create only).

ComponentStatus is not stored: kube-apiserver's REST (``pkg/registry/core/componentstatus``)
probes the controller-manager's and scheduler's ``/healthz`` and each etcd server on every
get and list. mockkube's components run in the server (or its scheduler process) and its
store stands for etcd, so each answers ``Healthy``/``ok`` as on a healthy kind cluster.
Every request carries the deprecation warning upstream's handler adds for the kind.
"""

from __future__ import annotations

from mockkube.machinery import errors
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

DEPRECATION_WARNING = "v1 ComponentStatus is deprecated in v1.19+"
# serversToValidate: the two components' /healthz, then one entry per etcd storage config
SERVERS = ("scheduler", "controller-manager", "etcd-0")


def component_status(name: str) -> dict:
    return {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    }


class ComponentStatuses(Strategy):
    """Answered from probes, never stored (``computed``): get, list (selectors filter as
    upstream's predicate does, there being no labels), no watch."""

    virtual = True  # never stored
    computed = True
    warnings = (DEPRECATION_WARNING,)

    def items(self) -> list[dict]:
        return [component_status(n) for n in SERVERS]

    def get(self, name: str) -> dict:
        if name not in SERVERS:
            # a plain Go error in the REST: the handler answers 500 with reason Unknown
            raise errors.APIError(500, "", f"Component not found: {name}")
        return component_status(name)


class LegacyBinding(Strategy):
    """``POST /api/v1/namespaces/{ns}/bindings``: pods/binding for the pod the Binding names
    (LegacyBindingREST)."""

    virtual = True  # never stored: it writes the pod
    legacy_binding = True


componentstatuses = REGISTRY.add(
    ResourceType(
        "",
        "v1",
        "ComponentStatus",
        "componentstatuses",
        namespaced=False,
        short_names=("cs",),
        verbs=("get", "list"),
        strategy=ComponentStatuses(),
    )
)
bindings = REGISTRY.add(
    ResourceType("", "v1", "Binding", "bindings", namespaced=True, verbs=("create",), strategy=LegacyBinding())
)
