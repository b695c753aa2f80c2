"""DRAResourceClaimGranularStatusAuthorization under RBAC: status.allocation/reservedFor need
resourceclaims/binding, status.devices need associated-node or arbitrary-node verbs on
resourceclaims/driver for the driver, as v1.36 checks them."""

from __future__ import annotations

import aiohttp
import pytest

from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

RES = "/apis/resource.k8s.io/v1"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
SA = "system:serviceaccount:drivers:gpu-plugin"


def _as_sa(node: str) -> dict:
    return {
        "Impersonate-User": SA,
        "Impersonate-Group": "system:serviceaccounts",
        "Impersonate-Extra-Authentication.kubernetes.io%2fnode-name": node,
    }


ALLOCATION = {
    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
    "nodeSelector": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    },
}


@pytest.fixture
async def api():
    async with running_server(authorization_mode="RBAC") as server:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.tls.client_context())) as s:
            api = Api(s, server.url, server)
            claim = {
                "metadata": {"name": "c"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            }
            assert (await api.post(f"{RES}/namespaces/default/resourceclaims", claim))[0] == 201
            yield api


async def _grant(api: Api, name: str, rules: list[dict]) -> None:
    role = {"metadata": {"name": name}, "rules": rules}
    assert (await api.post(f"{RBAC}/clusterroles", role))[0] == 201
    b = {
        "metadata": {"name": name},
        "subjects": [{"kind": "User", "name": SA}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
    }
    assert (await api.post(f"{RBAC}/clusterrolebindings", b))[0] == 201


async def _set_status(api: Api, status: dict, headers: dict | None = None):
    _, claim, _ = await api.get(f"{RES}/namespaces/default/resourceclaims/c")
    claim["status"] = status
    return await api.put(f"{RES}/namespaces/default/resourceclaims/c/status", claim, headers=headers or {})


async def test_allocation_needs_binding_and_devices_need_driver_verbs(api):
    await _grant(
        api,
        "status",
        [
            {
                "apiGroups": ["resource.k8s.io"],
                "resources": ["resourceclaims/status"],
                "verbs": ["get", "update", "patch"],
            },
            {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]},
        ],
    )
    code, body, _ = await _set_status(api, {"allocation": ALLOCATION}, _as_sa("n1"))
    assert code == 422
    assert body["message"] == (
        'ResourceClaim.resource.k8s.io "c" is invalid: status: Forbidden: changing status.allocation or '
        'status.reservedFor requires resource="resourceclaims/binding", verb="update" permission: '
        f'resourceclaims.resource.k8s.io is forbidden: User "{SA}" cannot update resource '
        '"resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope'
    )
    assert (await _set_status(api, {"allocation": ALLOCATION}))[0] == 200  # the admin may
    devices = {
        "allocation": ALLOCATION,
        "devices": [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "conditions": []}],
    }
    code, body, _ = await _set_status(api, devices, _as_sa("n1"))
    assert code == 422 and 'verb="[associated-node:update arbitrary-node:update]"' in body["message"]
    await _grant(
        api,
        "driver",
        [
            {
                "apiGroups": ["resource.k8s.io"],
                "resources": ["resourceclaims/driver"],
                "verbs": ["associated-node:update"],
                "resourceNames": ["gpu.example.com"],
            }
        ],
    )
    code, body, _ = await _set_status(api, devices, _as_sa("n2"))  # another node's plugin
    assert code == 422 and 'verb="[arbitrary-node:update]"' in body["message"]
    code, body, _ = await _set_status(api, devices, _as_sa("n1"))
    assert code == 200, body
