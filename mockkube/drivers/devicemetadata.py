"""KEP-5304 device metadata as v1.36's DRA kubelet-plugin library writes it (its
``EnableDeviceMetadata`` option with ``MetadataVersions(metadata.resource.k8s.io/v1alpha1)``):
per prepared claim and request, a metadata file under the plugin's data directory and a CDI
spec that bind-mounts it read-only into the containers using the claim, at a path the
workload can compute from names it knows.

In v1.36 this is no Kubernetes feature gate (the KEP lists none): a driver opts in, and the
container runtime applies the CDI spec like any other. mockkube's ``driver run`` opts in with
``--device-metadata``; the process runtime then mounts the file as containerd would.

Host layout (k8s.io/dynamic-resource-allocation kubeletplugin, v1.36)::

    {pluginDataDir}/dra-device-metadata/{claimNamespace}_{claimName}/{request}/metadata.json
    {cdiDir}/{driver}_metadata_{claimUID}_{request}.json      kind {driver}/metadata

Container path (its api/metadata helpers)::

    /var/run/kubernetes.io/dra-device-attributes/resourceclaims/{claimName}/{request}/{driver}-metadata.json
    /var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/{podClaimName}/{request}/{driver}-metadata.json
"""

from __future__ import annotations

import glob
import json
import os
from typing import Iterable

GROUP_VERSION = "metadata.resource.k8s.io/v1alpha1"
CONTAINER_DIR = "/var/run/kubernetes.io/dra-device-attributes"
METADATA_SUBDIR = "dra-device-metadata"
CDI_VERSION = "0.5.0"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


def base_request(request: str) -> str:
    """``gpu/high-memory`` (a subrequest) is written under its request, ``gpu``."""
    return request.split("/", 1)[0]


def pod_claim_name(claim: dict) -> str | None:
    """A claim made from a pod's template names the pod's claim entry (its annotation)."""
    return ((claim.get("metadata") or {}).get("annotations") or {}).get(POD_CLAIM_ANNOTATION) or None


def container_path(driver: str, claim: dict, request: str) -> str:
    """Where the workload reads the metadata of ``request`` of ``claim``."""
    pcn = pod_claim_name(claim)
    if pcn:
        return os.path.join(CONTAINER_DIR, "resourceclaimtemplates", pcn, request, f"{driver}-metadata.json")
    return os.path.join(CONTAINER_DIR, "resourceclaims", claim["metadata"]["name"], request, f"{driver}-metadata.json")


def host_path(data_dir: str, namespace: str, name: str, request: str) -> str:
    return os.path.join(data_dir, METADATA_SUBDIR, f"{namespace}_{name}", request, "metadata.json")


def cdi_path(cdi_dir: str, driver: str, claim_uid: str, request: str) -> str:
    return os.path.join(cdi_dir, f"{driver}_metadata_{claim_uid}_{request}.json")


def document(
    driver: str, claim: dict, request: str, devices: Iterable[tuple[str, str, dict]], generation: int = 1
) -> dict:
    """The v1alpha1 DeviceMetadata of one request: ``devices`` are (pool, device, attributes)."""
    m = claim.get("metadata") or {}
    doc: dict = {
        "kind": "DeviceMetadata",
        "apiVersion": GROUP_VERSION,
        "metadata": {
            "name": m.get("name", ""),
            "namespace": m.get("namespace", ""),
            "uid": m.get("uid", ""),
            "generation": generation,
        },
    }
    pcn = pod_claim_name(claim)
    if pcn:
        doc["podClaimName"] = pcn
    devs = []
    for pool, name, attributes in devices:
        d: dict = {"driver": driver, "pool": pool, "name": name}
        if attributes:
            d["attributes"] = attributes
        devs.append(d)
    doc["requests"] = [{"name": request, **({"devices": devs} if devs else {})}]
    return doc


def write(
    driver: str, data_dir: str, cdi_dir: str, claim: dict, by_request: dict[str, list[tuple[str, str, dict]]]
) -> dict[str, str]:
    """Write each request's metadata file and CDI spec; {base request: its CDI device ID}
    (the ID the plugin adds to that request's prepared devices)."""
    m = claim["metadata"]
    out: dict[str, str] = {}
    for request, devices in by_request.items():
        base = base_request(request)
        path = host_path(data_dir, m.get("namespace", ""), m["name"], base)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        _write(path, json.dumps(document(driver, claim, request, devices)) + "\n")  # a stream of one version
        device = f"{m['uid']}_{base}"
        spec = {
            "cdiVersion": CDI_VERSION,
            "kind": f"{driver}/metadata",
            "devices": [
                {
                    "name": device,
                    "containerEdits": {
                        "mounts": [
                            {
                                "hostPath": path,
                                "containerPath": container_path(driver, claim, base),
                                "options": ["ro", "bind"],
                            }
                        ]
                    },
                }
            ],
        }
        os.makedirs(cdi_dir, mode=0o755, exist_ok=True)
        _write(cdi_path(cdi_dir, driver, m["uid"], base), json.dumps(spec, indent=2))
        out[base] = f"{driver}/metadata={device}"
    return out


def cleanup(driver: str, data_dir: str, cdi_dir: str, namespace: str, name: str, claim_uid: str) -> None:
    """NodeUnprepareResources: the claim's metadata directory and its CDI specs go."""
    import shutil

    shutil.rmtree(os.path.join(data_dir, METADATA_SUBDIR, f"{namespace}_{name}"), ignore_errors=True)
    for p in glob.glob(
        os.path.join(glob.escape(cdi_dir), f"{glob.escape(driver)}_metadata_{glob.escape(claim_uid)}_*.json")
    ):
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


def _write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
