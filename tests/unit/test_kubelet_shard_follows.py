"""What a kubelet shard (``mockkube kubelets --shard I/M``) lists and watches: what its kubelets
and drivers read from its replica, and nothing else. Leases (about 500 renewals a second at
5,000 nodes) and Events are written, never read: a shard that followed them would be sent
every node's renewals and every event of the cluster."""

from __future__ import annotations

from types import SimpleNamespace

from mockkube.apiserver.resources import registry
from mockkube.server import componentmain, kubeletmain


def _followed(processes: bool = False) -> set[tuple[str, str]]:
    host = SimpleNamespace(registry=registry(), runs_processes=lambda: processes)
    return {(rt.group, rt.plural) for rt in kubeletmain.Host.followed(host)}  # type: ignore[arg-type]


def test_a_shard_follows_what_its_kubelets_read():
    assert _followed() == {
        ("", "pods"),
        ("", "nodes"),
        ("", "configmaps"),
        ("", "secrets"),
        ("resource.k8s.io", "resourceclaims"),
        ("resource.k8s.io", "resourceslices"),
    }


def test_a_shard_running_processes_follows_what_services_route_by_too():
    assert _followed(processes=True) == _followed() | {("", "services"), ("discovery.k8s.io", "endpointslices")}


def test_a_shard_runs_processes_where_its_profile_asks():
    from mockkube.config.profile import load

    def runs(profile: str) -> bool:
        return kubeletmain.Host.runs_processes(SimpleNamespace(profile=load(profile)))  # type: ignore[arg-type]

    assert not runs("nodes: [{name: a}]")
    assert runs("nodes: [{name: a}]\nkubelet: {runtime: process}\n")
    assert runs("nodes: [{name: a}, {name: b, kubelet: {runtime: process}}]")


def test_a_shard_follows_no_leases_or_events_and_reads_strictly():
    followed = _followed()
    assert ("coordination.k8s.io", "leases") not in followed
    assert ("", "events") not in followed and ("events.k8s.io", "events") not in followed
    # a read of anything else raises (replica.NotFollowed) instead of answering empty
    assert kubeletmain.Host.strict_reads and not componentmain.Host.strict_reads
