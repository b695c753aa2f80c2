"""The official Python client creates a CRD (ApiextensionsV1Api, typed models) and drives its
custom objects (CustomObjectsApi): create, get, list, merge patch of status, watch, delete."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes import client, config, watch

CRD = Path(__file__).parent / "manifests" / "crontab-crd.yaml"

pytestmark = pytest.mark.e2e


@pytest.fixture
def api_client(mockkube_fresh):
    c = config.new_client_from_config(config_file=mockkube_fresh.kubeconfig)
    yield c
    c.close()


def test_custom_objects_api(api_client):
    ext = client.ApiextensionsV1Api(api_client)
    with open(CRD) as f:
        created = ext.create_custom_resource_definition(yaml.safe_load(f))
    assert created.spec.names.kind == "CronTab"
    crd = ext.read_custom_resource_definition("crontabs.stable.example.com")
    assert {c.type: c.status for c in crd.status.conditions} == {"NamesAccepted": "True", "Established": "True"}
    co = client.CustomObjectsApi(api_client)
    args = ("stable.example.com", "v1", "default", "crontabs")
    obj = co.create_namespaced_custom_object(
        *args,
        {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "py"},
            "spec": {"cronSpec": "* * * * *"},
        },
    )
    assert obj["spec"]["replicas"] == 1
    rv = co.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
    co.patch_namespaced_custom_object_status(*args, "py", {"status": {"phase": "Done"}})
    w = watch.Watch()
    events = []
    for ev in w.stream(co.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=5):
        events.append((ev["type"], ev["object"]["status"]))
        w.stop()
    assert events == [("MODIFIED", {"phase": "Done"})]
    co.delete_namespaced_custom_object(*args, "py")
    assert co.list_namespaced_custom_object(*args)["items"] == []
