"""coordination.k8s.io/v1 Leases (node heartbeats, leader election)."""

from mockkube.machinery.registry import REGISTRY, ResourceType

leases = REGISTRY.add(ResourceType("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True))
