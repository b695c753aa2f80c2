"""certificates.k8s.io/v1 CertificateSigningRequests over HTTP: upstream's validation, the
requester recorded in spec, the approval and status subresources' rules, the csrsigning
controller issuing (or failing) approved requests of the built-in signers, the Table."""

from __future__ import annotations

import asyncio
import base64

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def request_pem(cn: str, orgs: tuple[str, ...] = (), dns: tuple[str, ...] = ()) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    b = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), *attrs])
    )
    if dns:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False)
    pem = b.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)
    return base64.b64encode(pem).decode()


def csr(name: str, request: str, signer: str = "kubernetes.io/kube-apiserver-client", **spec) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"request": request, "signerName": signer, "usages": ["client auth"], **spec},
    }


@pytest.fixture
async def cluster():
    """The API with kube-controller-manager's controllers (csrsigning) running."""
    async with running_server(components=True, cluster="nodes: []\ndeviceClasses: false\n") as server:
        async with aiohttp.ClientSession() as s:
            yield Api(s, server.url, server)


async def _until(fn, timeout: float = 10.0):
    for _ in range(int(timeout / 0.05)):
        out = await fn()
        if out:
            return out
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def test_validation_as_upstream(api):
    st, body, _ = await api.post(
        CSRS,
        csr(
            "bad",
            base64.b64encode(b"not a pem").decode(),
            signer="kubernetes.io/legacy-unknown",
            usages=["client auth", "client auth", "flying"],
            expirationSeconds=60,
        ),
    )
    assert st == 422
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "spec.request"),
        ("FieldValueNotSupported", "spec.usages[2]"),
        ("FieldValueDuplicate", "spec.usages[1]"),
        ("FieldValueInvalid", "spec.signerName"),
        ("FieldValueInvalid", "spec.expirationSeconds"),
    ]
    assert "PEM block type must be CERTIFICATE REQUEST" in body["message"]
    assert "the legacy signerName is not allowed via this API version" in body["message"]
    assert "may not specify a duration less than 600 seconds (10 minutes)" in body["message"]
    st, body, _ = await api.post(CSRS, csr("nosigner", request_pem("a"), signer="nodomain"))
    assert st == 422 and body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "nodomain": must be a fully qualified domain and path of the form '
            "'example.com/signer-name'",
            "field": "spec.signerName",
        }
    ]
    # CertificateSubjectRestriction
    st, body, _ = await api.post(CSRS, csr("masters", request_pem("eve", ("system:masters",))))
    assert (st, body["message"]) == (
        403,
        'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed",
    )


async def test_approve_issue_and_subresource_rules(cluster):
    api = cluster
    st, obj, _ = await api.post(
        CSRS, csr("alice", request_pem("alice", ("devs",)), username="mallory", expirationSeconds=3600)
    )
    assert st == 201, obj
    assert obj["spec"]["username"] == "kubernetes-admin"  # the requester, not what the body said
    assert obj["status"] == {}
    # the main resource cannot approve, nor can status
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "R"}]}
    st, out, _ = await api.put(f"{CSRS}/alice", obj)
    assert st == 200 and out["status"] == {}
    st, body, _ = await api.put(f"{CSRS}/alice/status", obj)
    assert (
        st == 422
        and 'status.conditions: Forbidden: updates may not add a condition of type "Approved"' in (body["message"])
    )
    st, out, _ = await api.put(f"{CSRS}/alice/approval", obj)
    assert st == 200, out
    cond = out["status"]["conditions"][0]
    assert cond["lastUpdateTime"] and cond["lastTransitionTime"]

    async def issued():
        return (await api.get(f"{CSRS}/alice"))[1]["status"].get("certificate")

    pem = base64.b64decode(await _until(issued))
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.subject == x509.load_pem_x509_csr(base64.b64decode(obj["spec"]["request"])).subject
    assert (cert.not_valid_after_utc - cert.not_valid_before_utc).total_seconds() == 3600 + 300
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert [u._name for u in eku] == ["clientAuth"]
    st, tbl, _ = await api.get(CSRS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in tbl["columnDefinitions"]] == [
        "Name",
        "Age",
        "SignerName",
        "Requestor",
        "RequestedDuration",
        "Condition",
    ]
    row = tbl["rows"][0]["cells"]
    assert [row[0], *row[2:]] == [
        "alice",
        "kubernetes.io/kube-apiserver-client",
        "kubernetes-admin",
        "60m",
        "Approved,Issued",
    ]
    # the certificate cannot be changed once issued, nor can approval be withdrawn
    st, cur, _ = await api.get(f"{CSRS}/alice")
    cur["status"]["certificate"] = base64.b64encode(b"x").decode()
    st, body, _ = await api.put(f"{CSRS}/alice/status", cur)
    assert st == 422 and "status.certificate" in {c["field"] for c in body["details"]["causes"]}
    st, cur, _ = await api.get(f"{CSRS}/alice")
    cur["status"]["conditions"] = []
    st, body, _ = await api.put(f"{CSRS}/alice/approval", cur)
    assert st == 422 and 'updates may not remove a condition of type "Approved"' in body["message"]


async def test_signer_refuses_what_it_does_not_sign(cluster):
    api = cluster
    req = csr(
        "node",
        request_pem("system:node:n1", ("system:nodes",), dns=("n1",)),
        "kubernetes.io/kube-apiserver-client-kubelet",
    )
    req["spec"]["usages"] = ["digital signature", "client auth"]
    assert (await api.post(CSRS, req))[0] == 201
    st, obj, _ = await api.get(f"{CSRS}/node")
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "R"}]}
    assert (await api.put(f"{CSRS}/node/approval", obj))[0] == 200

    async def failed():
        conds = (await api.get(f"{CSRS}/node"))[1]["status"].get("conditions") or []
        return next((c for c in conds if c["type"] == "Failed"), None)

    cond = await _until(failed)
    assert (cond["reason"], cond["message"]) == ("SignerValidationFailure", "DNS subjectAltNames are not allowed")
    # a denied request is never signed
    assert (await api.post(CSRS, csr("denied", request_pem("bob"))))[0] == 201
    st, obj, _ = await api.get(f"{CSRS}/denied")
    obj["status"] = {"conditions": [{"type": "Denied", "status": "True", "reason": "R"}]}
    assert (await api.put(f"{CSRS}/denied/approval", obj))[0] == 200
    await asyncio.sleep(0.2)
    assert "certificate" not in (await api.get(f"{CSRS}/denied"))[1]["status"]


async def test_discovery(api):
    st, body, _ = await api.get("/apis/certificates.k8s.io/v1")
    assert [(r["name"], r.get("shortNames"), r["namespaced"]) for r in body["resources"]] == [
        ("certificatesigningrequests", ["csr"], False),
        ("certificatesigningrequests/approval", None, False),
        ("certificatesigningrequests/status", None, False),
    ]


async def test_approval_needs_approve_on_the_signer():
    """CertificateApproval: /approval needs `approve` on signers (by name or `<domain>/*`)."""
    async with running_server(authorization_mode="RBAC") as server:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.tls.client_context())) as s:
            api = Api(s, server.url, server)
            bob = {"Impersonate-User": "bob"}
            rbac = "/apis/rbac.authorization.k8s.io/v1"
            role = {
                "metadata": {"name": "csr-approver"},
                "rules": [
                    {
                        "verbs": ["get", "update"],
                        "apiGroups": ["certificates.k8s.io"],
                        "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
                    }
                ],
            }
            assert (await api.post(f"{rbac}/clusterroles", role))[0] == 201
            binding = {
                "metadata": {"name": "bob-approves"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-approver"},
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}],
            }
            assert (await api.post(f"{rbac}/clusterrolebindings", binding))[0] == 201
            assert (await api.post(CSRS, csr("c", request_pem("carol"))))[0] == 201
            st, obj, _ = await api.get(f"{CSRS}/c", headers=bob)
            obj["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "R"}]}
            st, body, _ = await api.put(f"{CSRS}/c/approval", obj, headers=bob)
            assert (st, body["message"]) == (
                403,
                'certificatesigningrequests.certificates.k8s.io "c" is forbidden: user not permitted to approve '
                'requests with signerName "kubernetes.io/kube-apiserver-client"',
            )
            role["rules"].append(
                {
                    "verbs": ["approve"],
                    "apiGroups": ["certificates.k8s.io"],
                    "resources": ["signers"],
                    "resourceNames": ["kubernetes.io/*"],
                }
            )
            st, cur, _ = await api.get(f"{rbac}/clusterroles/csr-approver")
            cur["rules"] = role["rules"]
            assert (await api.put(f"{rbac}/clusterroles/csr-approver", cur))[0] == 200
            st, body, _ = await api.put(f"{CSRS}/c/approval", obj, headers=bob)
            assert st == 200, body
