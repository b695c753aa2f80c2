"""KEP-5304 device metadata as v1.36's kubelet-plugin library writes it
(mockkube/drivers/devicemetadata.py): the per-request metadata file, the CDI spec that
mounts it, the paths on the host and in the container, the cleanup; and the process
runtime's CDI reading of that spec (runtime/cdi.py)."""

from __future__ import annotations

import json
import os

from mockkube.drivers import devicemetadata as dm
from mockkube.kubelet.runtime import cdi

DRIVER = "gpu.example.com"


def _claim(template: bool = True) -> dict:
    meta = {"name": "app-gpu-x7k", "namespace": "ns", "uid": "u-1"}
    if template:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    return {"metadata": meta}


def test_container_paths_follow_the_claims_origin():
    assert dm.container_path(DRIVER, _claim(), "req") == (
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/req/gpu.example.com-metadata.json"
    )
    assert dm.container_path(DRIVER, _claim(template=False), "req") == (
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/app-gpu-x7k/req/gpu.example.com-metadata.json"
    )


def test_a_request_gets_a_metadata_file_and_a_cdi_spec_mounting_it(tmp_path):
    data, cdi_dir = str(tmp_path / "plugins" / DRIVER), str(tmp_path / "cdi")
    attrs = {"model": {"string": "LATEST-GPU-MODEL"}, "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"}}
    ids = dm.write(DRIVER, data, cdi_dir, _claim(), {"gpu/big": [("node-a", "gpu-0", attrs)]})
    assert ids == {"gpu": "gpu.example.com/metadata=u-1_gpu"}  # a subrequest is filed under its request
    host = os.path.join(data, "dra-device-metadata", "ns_app-gpu-x7k", "gpu", "metadata.json")
    text = open(host).read()
    assert text.endswith("\n") and len(text.splitlines()) == 1  # a JSON stream of the one configured version
    assert json.loads(text) == {
        "kind": "DeviceMetadata",
        "apiVersion": "metadata.resource.k8s.io/v1alpha1",
        "metadata": {"name": "app-gpu-x7k", "namespace": "ns", "uid": "u-1", "generation": 1},
        "podClaimName": "gpu",
        "requests": [
            {"name": "gpu/big", "devices": [{"driver": DRIVER, "pool": "node-a", "name": "gpu-0", "attributes": attrs}]}
        ],
    }
    assert oct(os.stat(host).st_mode & 0o777) == "0o644"
    spec_file = os.path.join(cdi_dir, "gpu.example.com_metadata_u-1_gpu.json")
    spec = json.loads(open(spec_file).read())
    assert spec["cdiVersion"] == "0.5.0" and spec["kind"] == "gpu.example.com/metadata"
    # the container runtime resolves the ID the plugin returned to a read-only bind mount
    edits = cdi.edits([cdi_dir], [ids["gpu"]])
    assert edits.missing == []
    assert edits.mounts == [(host, dm.container_path(DRIVER, _claim(), "gpu"), True)]
    dm.cleanup(DRIVER, data, cdi_dir, "ns", "app-gpu-x7k", "u-1")
    assert not os.path.exists(os.path.dirname(os.path.dirname(host))) and not os.path.exists(spec_file)


def test_a_device_without_attributes_and_a_claim_without_template():
    doc = dm.document(DRIVER, _claim(template=False), "r", [("p", "d", {})])
    assert "podClaimName" not in doc
    assert doc["requests"] == [{"name": "r", "devices": [{"driver": DRIVER, "pool": "p", "name": "d"}]}]
