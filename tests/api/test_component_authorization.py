"""In RBAC mode the in-process components are authorized as upstream's are: under their own
identities, with the bootstrap policy's roles, and a missing role is a 403 they log and
retry, not a crash."""

from __future__ import annotations

import logging

import pytest
from _lifecycle import eventually

from mockkube.apiserver.authz import components as component_authz
from mockkube.client.client import Client
from mockkube.machinery import errors
from mockkube.testing.cluster import running_server

RBAC = "rbac.authorization.k8s.io"
ONE_NODE = "nodes: [{name: n1}]\ndeviceClasses: false\n"


def _pod(name: str, **spec) -> dict:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def _forbidden_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "forbidden" in r.getMessage()]


async def test_the_demo_cluster_works_in_node_rbac_mode(caplog):
    caplog.set_level(logging.ERROR, logger="mockkube")
    async with running_server(components=True, authorization_mode="Node,RBAC") as server:
        await server.settled()
        assert server.store.authorizer is server.authorizer
        c = Client(server.resources, "test")
        cls = sorted(d["metadata"]["name"] for d in c.list(c.rt("deviceclasses", "resource.k8s.io")))[0]
        c.create(
            c.rt("resourceclaimtemplates", "resource.k8s.io"),
            {
                "metadata": {"name": "dev", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": cls}}]}}},
            },
        )
        pod = _pod("with-claim", resourceClaims=[{"name": "d", "resourceClaimTemplateName": "dev"}])
        pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "d"}]}
        c.create(c.rt("pods"), pod)
        c.create(
            c.rt("deployments", "apps"),
            {
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                    },
                },
            },
        )
        c.create(
            c.rt("jobs", "batch"),
            {
                "metadata": {"name": "once", "namespace": "default"},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}},
            },
        )
        pods_rt, claims_rt, jobs_rt = c.rt("pods"), c.rt("resourceclaims", "resource.k8s.io"), c.rt("jobs", "batch")

        def running(name: str) -> bool:
            p = c.get(pods_rt, "default", name)
            return bool(p) and (p.get("status") or {}).get("phase") == "Running"

        await eventually(lambda: running("with-claim"), timeout=20, what="the pod with a claim runs")
        claims = c.list(claims_rt, "default")
        assert len(claims) == 1 and claims[0]["status"]["allocation"] and claims[0]["status"]["reservedFor"]
        await eventually(
            lambda: (
                sum(
                    1
                    for p in c.list(pods_rt, "default", label_selector="app=web")
                    if (p.get("status") or {}).get("phase") == "Running"
                )
                == 2
            ),
            timeout=20,
            what="the Deployment's pods run",
        )
        await eventually(
            lambda: any(
                x.get("type") == "Complete" and x.get("status") == "True"
                for x in ((c.get(jobs_rt, "default", "once") or {}).get("status") or {}).get("conditions") or ()
            ),
            timeout=20,
            what="the Job completes",
        )
        # the built-in drivers published their slices as their own ServiceAccounts
        slices = c.list(c.rt("resourceslices", "resource.k8s.io"))
        assert slices and all(s["metadata"]["managedFields"][0]["manager"] == "dra-driver" for s in slices)
    assert _forbidden_logs(caplog) == []


async def test_the_scheduler_without_its_binding_cannot_bind_and_recovers(caplog):
    caplog.set_level(logging.ERROR, logger="mockkube.scheduler")
    async with running_server(components=True, authorization_mode="Node,RBAC", cluster=ONE_NODE) as server:
        await server.settled()
        c = Client(server.resources, "test")
        crb = c.rt("clusterrolebindings", RBAC)
        saved = c.get(crb, "", "system:kube-scheduler")
        c.delete(crb, "", "system:kube-scheduler")
        c.create(c.rt("pods"), _pod("p"))
        want = (
            'pods "p" is forbidden: User "system:kube-scheduler" cannot create resource "pods/binding" '
            'in API group "" in the namespace "default"'
        )
        await eventually(
            lambda: any(want in m for m in _forbidden_logs(caplog)), timeout=10, what="the scheduler logs the 403"
        )
        assert not (c.get(c.rt("pods"), "default", "p")["spec"].get("nodeName"))
        c.create(
            crb,
            {"metadata": {"name": "system:kube-scheduler"}, "roleRef": saved["roleRef"], "subjects": saved["subjects"]},
        )
        await eventually(
            lambda: c.get(c.rt("pods"), "default", "p")["spec"].get("nodeName") == "n1",
            timeout=15,
            what="the pod is bound once the binding is back",
        )


async def test_a_controller_without_its_role_cannot_write(caplog):
    caplog.set_level(logging.ERROR, logger="mockkube")
    async with running_server(components=True, authorization_mode="Node,RBAC", cluster=ONE_NODE) as server:
        await server.settled()
        c = Client(server.resources, "test")
        crb = c.rt("clusterrolebindings", RBAC)
        name = "system:controller:replicaset-controller"
        saved = c.get(crb, "", name)
        c.delete(crb, "", name)
        c.create(
            c.rt("replicasets", "apps"),
            {
                "metadata": {"name": "rs", "namespace": "default"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "rs"}},
                    "template": {
                        "metadata": {"labels": {"app": "rs"}},
                        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                    },
                },
            },
        )
        want = 'is forbidden: User "system:serviceaccount:kube-system:replicaset-controller" cannot '

        await eventually(
            lambda: any(want in m for m in _forbidden_logs(caplog)),
            timeout=10,
            what="the replicaset controller logs the 403",
        )
        assert c.list(c.rt("pods"), "default", label_selector="app=rs") == []
        c.create(crb, {"metadata": {"name": name}, "roleRef": saved["roleRef"], "subjects": saved["subjects"]})
        await eventually(
            lambda: len(c.list(c.rt("pods"), "default", label_selector="app=rs")) == 1,
            timeout=15,
            what="the pod is created once the role is bound again",
        )


async def test_a_driver_writes_as_its_service_account():
    async with running_server(components=True, authorization_mode="Node,RBAC") as server:
        await server.settled()
        from mockkube.kubelet.cluster import runtime_for

        c = Client(server.resources, "test")
        runtime = runtime_for(server.resources)
        gpu = next(
            s for s in c.list(c.rt("resourceslices", "resource.k8s.io")) if s["spec"]["driver"] == "gpu.example.com"
        )
        node, device = gpu["spec"]["nodeName"], gpu["spec"]["devices"][0]["name"]
        c.delete(c.rt("clusterrolebindings", RBAC), "", "mockkube:dra-driver:gpu.example.com")
        with pytest.raises(errors.APIError) as e:
            runtime.set_health("gpu.example.com", node, device, False)
        assert e.value.code == 403
        assert (
            'User "system:serviceaccount:kube-system:gpu-example-com-driver" cannot update resource '
            '"resourceslices" in API group "resource.k8s.io" at the cluster scope'
        ) in e.value.message


async def test_a_controller_informer_waits_for_list_and_watch_rights(caplog):
    caplog.set_level(logging.ERROR, logger="mockkube.informer")
    async with running_server(components=False, authorization_mode="Node,RBAC", cluster=ONE_NODE) as server:
        from mockkube.controllers.replicaset import ReplicaSetController

        c = Client(server.resources, "test")
        crb = c.rt("clusterrolebindings", RBAC)
        saved = c.get(crb, "", "system:kube-controller-manager")
        c.delete(crb, "", "system:kube-controller-manager")  # the shared informers' identity
        ctl = ReplicaSetController(server)
        await ctl.start()
        try:
            assert any(
                'User "system:kube-controller-manager" cannot list resource "replicasets"' in m
                for m in _forbidden_logs(caplog)
            )
            assert ctl._informer_retries
            c.create(
                crb,
                {
                    "metadata": {"name": "system:kube-controller-manager"},
                    "roleRef": saved["roleRef"],
                    "subjects": saved["subjects"],
                },
            )
            await eventually(lambda: not ctl._informer_retries, timeout=10, what="the informers start")
        finally:
            await ctl.stop()


async def test_with_authorization_off_nothing_is_built(monkeypatch):
    async with running_server() as server:
        assert server.store.authorizer is None

        def boom(*a, **k):
            raise AssertionError("attributes built with authorization off")

        monkeypatch.setattr(component_authz, "request", boom)
        monkeypatch.setattr(component_authz, "attributes", boom)
        c = Client(server.resources, "test")
        cm = c.create(c.rt("configmaps"), {"metadata": {"name": "x", "namespace": "default"}})
        c.update(c.rt("configmaps"), cm)
        c.patch(c.rt("configmaps"), "default", "x", {"data": {"a": "b"}})
        c.delete(c.rt("configmaps"), "default", "x")


async def test_the_scheduler_needs_resourceclaims_binding_to_allocate(caplog):
    """DRAResourceClaimGranularStatusAuthorization applies to the in-process scheduler too."""
    caplog.set_level(logging.ERROR, logger="mockkube.scheduler")
    async with running_server(components=True, authorization_mode="Node,RBAC") as server:
        await server.settled()
        c = Client(server.resources, "test")
        cr = c.rt("clusterroles", RBAC)
        role = c.get(cr, "", "system:kube-scheduler")
        c.update(cr, dict(role, rules=[r for r in role["rules"] if "resourceclaims/binding" not in r["resources"]]))
        c.create(
            c.rt("resourceclaims", "resource.k8s.io"),
            {
                "metadata": {"name": "dev", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            },
        )
        pod = _pod("p", resourceClaims=[{"name": "d", "resourceClaimName": "dev"}])
        pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "d"}]}
        c.create(c.rt("pods"), pod)
        want = (
            'changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", '
            'verb="update" permission: resourceclaims.resource.k8s.io is forbidden: User "system:kube-scheduler"'
        )
        await eventually(
            lambda: any(want in m for m in _forbidden_logs(caplog)),
            timeout=10,
            what="the scheduler's claim status write is refused",
        )
        claim = c.get(c.rt("resourceclaims", "resource.k8s.io"), "default", "dev")
        assert not (claim.get("status") or {}).get("allocation")


async def test_kubelets_need_the_node_authorizer(caplog):
    """With RBAC alone (no Node mode) a kubelet may not even register its node, as upstream's:
    the system:node ClusterRoleBinding has no subjects."""
    caplog.set_level(logging.WARNING, logger="mockkube.kubelet")
    async with running_server(components=True, authorization_mode="RBAC", cluster=ONE_NODE) as server:
        await server.settled()
        c = Client(server.resources, "test")
        assert c.get(c.rt("nodes"), "", "n1") is None
        logs = [r.getMessage() for r in caplog.records]
        assert any("has no Node: the simulated kubelets (system:node:<name>) may do nothing" in m for m in logs)
        assert any(
            'node n1: unable to register node with API server: nodes is forbidden: User "system:node:n1" '
            'cannot create resource "nodes"' in m
            for m in logs
        )


GANG_GATES = {"GenericWorkload": True, "GangScheduling": True, "DRAWorkloadResourceClaims": True}


async def test_a_gang_is_scheduled_under_rbac_with_the_workload_gates_on(caplog):
    """With GenericWorkload on, the bootstrap policy grants what upstream's does: the
    scheduler reads PodGroups and writes their status, the PodGroup protection controller
    has a role of its own. Without those rules both would be refused (and log it)."""
    caplog.set_level(logging.ERROR, logger="mockkube")
    async with running_server(
        components=True,
        authorization_mode="Node,RBAC",
        cluster=ONE_NODE,
        feature_gates=GANG_GATES,
        runtime_config={"scheduling.k8s.io/v1alpha2": True},
    ) as server:
        await server.settled()
        c = Client(server.resources, "test")
        pg_rt = c.rt("podgroups", "scheduling.k8s.io")
        c.create(
            pg_rt,
            {
                "metadata": {"name": "gang", "namespace": "default"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
            },
        )
        for i in range(2):
            c.create(c.rt("pods"), _pod(f"member-{i}", schedulingGroup={"podGroupName": "gang"}))
        pods_rt = c.rt("pods")
        await eventually(
            lambda: all(
                (c.get(pods_rt, "default", f"member-{i}") or {}).get("spec", {}).get("nodeName") for i in range(2)
            ),
            timeout=20,
            what="the gang is bound",
        )
        await eventually(
            lambda: (
                "scheduling.k8s.io/podgroup-protection"
                in ((c.get(pg_rt, "default", "gang") or {}).get("metadata") or {}).get("finalizers", [])
            ),
            timeout=20,
            what="the PodGroup protection controller adds its finalizer",
        )
    assert _forbidden_logs(caplog) == []
