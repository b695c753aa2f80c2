"""One module per API group; importing this package registers every served resource.

``registry()`` is the process-wide registry with all of them (the machinery layer only
defines the registry; this layer fills it, so machinery never imports resources).
"""

from mockkube.apiserver.resources import (  # noqa: F401
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    authreviews,
    autoscaling,
    batch,
    certificates,
    componentstatus,
    coordination,
    core,
    core_cluster,
    discovery,
    dra,
    dra_poolstatus,
    events,
    flowcontrol,
    networking,
    node,
    policy,
    rbac,
    scheduling,
    storage,
    webhookconfigurations,
)
from mockkube.machinery.registry import REGISTRY, Registry  # noqa: E402


def registry() -> Registry:
    """The process-wide registry with every built-in resource registered."""
    return REGISTRY
