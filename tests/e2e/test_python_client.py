"""The official Python client (``kubernetes``) lists and watches DRA objects."""

from __future__ import annotations

import pytest
from kubernetes import client, config, watch

pytestmark = pytest.mark.e2e

SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "py-slice"},
    "spec": {
        "driver": "py.example.com",
        "nodeName": "node-a",
        "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}}}],
    },
}


@pytest.fixture
def resource_api(mockkube_cluster):
    api_client = config.new_client_from_config(config_file=mockkube_cluster.kubeconfig)
    yield client.ResourceV1Api(api_client)
    api_client.close()


def test_list_and_watch_resourceslices(resource_api):
    created = resource_api.create_resource_slice(SLICE)
    assert created.metadata.name == "py-slice" and created.spec.devices[0].name == "gpu-0"
    lst = resource_api.list_resource_slice(field_selector="spec.driver=py.example.com")
    assert [s.metadata.name for s in lst.items] == ["py-slice"]
    rv = lst.metadata.resource_version
    resource_api.patch_resource_slice("py-slice", {"metadata": {"labels": {"seen": "yes"}}})
    w = watch.Watch()
    events = []
    for ev in w.stream(resource_api.list_resource_slice, resource_version=rv, timeout_seconds=5):
        events.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.labels))
        w.stop()
    assert events == [("MODIFIED", "py-slice", {"seen": "yes"})]


def test_errors_are_api_exceptions(resource_api):
    with pytest.raises(client.ApiException) as e:
        resource_api.read_resource_slice("nope")
    assert e.value.status == 404
    bad = dict(SLICE, metadata={"name": "bad"}, spec=dict(SLICE["spec"], nodeName=None))
    with pytest.raises(client.ApiException) as e:
        resource_api.create_resource_slice(bad)
    assert e.value.status == 422
