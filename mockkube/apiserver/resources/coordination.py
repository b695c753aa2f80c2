"""coordination.k8s.io/v1 Leases (node heartbeats, leader election)."""

from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy


class LeaseStrategy(Strategy):
    allow_create_on_update = True


leases = REGISTRY.add(
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True, strategy=LeaseStrategy())
)
