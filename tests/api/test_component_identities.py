"""In-process components act under upstream's identities, as admission sees them."""

from __future__ import annotations

from _lifecycle import eventually

from mockkube.client.client import Client
from mockkube.rules.identities import controller_user, node_user
from mockkube.testing.cluster import running_server

ADM = "admissionregistration.k8s.io"
POLICY = {
    "metadata": {"name": "only-the-publisher"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
            ]
        },
        "validations": [
            {
                "expression": "object.metadata.name != 'kube-root-ca.crt' || "
                "request.userInfo.username == "
                "'system:serviceaccount:kube-system:root-ca-cert-publisher'"
            }
        ],
    },
}
BINDING = {
    "metadata": {"name": "only-the-publisher"},
    "spec": {"policyName": "only-the-publisher", "validationActions": ["Deny"]},
}


def test_controller_service_accounts_exist():
    from mockkube.rules.identities import controller_service_accounts

    names = controller_service_accounts()
    assert "generic-garbage-collector" in names and "job-controller" in names and "garbage-collector" not in names


async def test_kube_system_holds_the_controllers_service_accounts():
    async with running_server() as server:
        rt = server.registry.get("", "v1", "serviceaccounts")
        assert server.store.get(rt, "kube-system", "resource-claim-controller") is not None
        assert server.store.get(rt, "kube-system", "replicaset-controller") is not None


def test_identity_names():
    assert (
        controller_user("garbage-collector")["username"]
        == "system:serviceaccount:kube-system:generic-garbage-collector"
    )
    assert controller_user("job-controller")["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
        "system:authenticated",
    ]
    assert node_user("n1") == {"username": "system:node:n1", "groups": ["system:nodes", "system:authenticated"]}


async def test_controllers_write_as_their_service_accounts():
    async with running_server(components=True, cluster="nodes: []\ndeviceClasses: false\n") as server:
        await server.settled()
        c = Client(server.resources, manager="test")
        c.create(c.rt("validatingadmissionpolicies", ADM), POLICY)
        c.create(c.rt("validatingadmissionpolicybindings", ADM), BINDING)
        c.create(c.rt("namespaces"), {"metadata": {"name": "fresh"}})
        cms = c.rt("configmaps")
        await eventually(
            lambda: c.get(cms, "fresh", "kube-root-ca.crt") is not None,
            what="the publisher (as its ServiceAccount) passes the policy",
        )
