"""The official Python client (``kubernetes``) with priority classes, budgets and
eviction, storage, endpoint slices and APIServices."""

from __future__ import annotations

import time

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e


def _until(fn, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (out := fn()):
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.1)
    return out


def test_python_client_cluster_objects(mockkube_fresh):
    api = config.new_client_from_config(config_file=mockkube_fresh.kubeconfig)
    try:
        core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
        names = [p.metadata.name for p in client.SchedulingV1Api(api).list_priority_class().items]
        assert {"system-node-critical", "system-cluster-critical"} <= set(names)
        assert [s.metadata.name for s in client.StorageV1Api(api).list_storage_class().items] == ["standard"]
        assert any(s.spec.service is None for s in client.ApiregistrationV1Api(api).list_api_service().items)
        ns = "default"
        core.create_namespaced_service(
            ns,
            {
                "metadata": {"name": "py"},
                "spec": {"selector": {"app": "py"}, "ports": [{"port": 80, "targetPort": 8080}]},
            },
        )
        core.create_namespaced_pod(
            ns,
            {
                "metadata": {"name": "py-0", "labels": {"app": "py"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        )
        policy.create_namespaced_pod_disruption_budget(
            ns, {"metadata": {"name": "py"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "py"}}}}
        )
        _until(lambda: policy.read_namespaced_pod_disruption_budget("py", ns).status.current_healthy == 1)
        slices = _until(
            lambda: [
                s
                for s in client.DiscoveryV1Api(api)
                .list_namespaced_endpoint_slice(ns, label_selector="kubernetes.io/service-name=py")
                .items
                if s.endpoints
            ]
        )
        assert slices[0].ports[0].port == 8080 and slices[0].endpoints[0].conditions.ready
        with pytest.raises(ApiException) as ei:
            core.create_namespaced_pod_eviction(
                "py-0",
                ns,
                {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "py-0", "namespace": ns}},
            )
        assert ei.value.status == 429
        claim = core.create_namespaced_persistent_volume_claim(
            ns,
            {
                "metadata": {"name": "py"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            },
        )
        assert claim.spec.storage_class_name == "standard"
        bound = _until(
            lambda: (c := core.read_namespaced_persistent_volume_claim("py", ns)).status.phase == "Bound" and c
        )
        assert core.read_persistent_volume(bound.spec.volume_name).spec.claim_ref.name == "py"
    finally:
        api.close()
