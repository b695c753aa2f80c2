"""kubectl against the APIs every kind cluster serves beyond workloads: `kubectl autoscale`
and HorizontalPodAutoscalers (v2 and v1), `kubectl certificate approve|deny` and the issued
certificate authenticating, and `kubectl api-resources` listing them."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time

import pytest
import yaml

pytestmark = pytest.mark.e2e


def _until(fn, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        out = fn()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.1)


def _json(c, *args):
    return json.loads(c.kubectl(*args, "-o", "json").stdout)


def test_kubectl_autoscale(mockkube_fresh):
    c = mockkube_fresh
    c.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=5")
    out = c.kubectl("autoscale", "deployment", "web", "--min", "1", "--max", "3", "--cpu-percent", "50").stdout
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in out
    # the bounds rescale: 5 replicas are above maxReplicas
    _until(lambda: _json(c, "get", "deployment", "web")["spec"]["replicas"] == 3)
    hpa = _until(
        lambda: (
            (h := _json(c, "get", "hpa", "web"))
            and any(x["type"] == "ScalingActive" for x in (h.get("status") or {}).get("conditions") or ())
            and h
        )
    )
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]
    conds = {x["type"]: x for x in hpa["status"]["conditions"]}
    assert conds["AbleToScale"]["status"] == "True"
    assert (conds["ScalingActive"]["status"], conds["ScalingActive"]["reason"]) == ("False", "FailedGetResourceMetric")
    assert hpa["status"]["currentReplicas"] == 3 and hpa["status"]["desiredReplicas"] == 3
    table = c.kubectl("get", "hpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/50%", "1", "3", "3"]
    v1 = _json(c, "get", "horizontalpodautoscalers.v1.autoscaling", "web")
    assert v1["apiVersion"] == "autoscaling/v1" and v1["spec"]["targetCPUUtilizationPercentage"] == 50
    events = c.kubectl("get", "events", "--field-selector", "involvedObject.kind=HorizontalPodAutoscaler").stdout
    assert "SuccessfulRescale" in events and "New size: 3; reason: Current number of replicas above" in events
    assert "horizontalpodautoscaler.autoscaling/web" in c.kubectl("get", "all", "-o", "name").stdout
    bad = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bad"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 4, "maxReplicas": 3},
    }
    r = c.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert r.returncode != 0
    assert "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`" in r.stderr


def test_flow_control_as_kubectl_shows_it(mockkube_fresh):
    c = mockkube_fresh
    table = c.kubectl("get", "flowschemas").stdout.splitlines()
    assert table[0].split() == [
        "NAME",
        "PRIORITYLEVEL",
        "MATCHINGPRECEDENCE",
        "DISTINGUISHERMETHOD",
        "AGE",
        "MISSINGPL",
    ]
    rows = [line.split() for line in table[1:]]
    assert [r[0] for r in rows] == [  # printFlowSchemaList: by matching precedence, then name
        "exempt",
        "probes",
        "system-leader-election",
        "system-node-high",
        "system-nodes",
        "kube-controller-manager",
        "kube-scheduler",
        "kube-system-service-accounts",
        "service-accounts",
        "global-default",
        "catch-all",
    ]
    assert rows[0][1:4] == ["exempt", "1", "<none>"] and rows[0][-1] == "False"
    assert rows[-1][1:4] == ["catch-all", "10000", "ByUser"]
    table = c.kubectl("get", "prioritylevelconfigurations").stdout.splitlines()
    assert table[0].split() == [
        "NAME",
        "TYPE",
        "NOMINALCONCURRENCYSHARES",
        "QUEUES",
        "HANDSIZE",
        "QUEUELENGTHLIMIT",
        "AGE",
    ]


def test_service_ips_come_from_the_service_cidr(mockkube_fresh):
    c = mockkube_fresh
    c.kubectl("create", "service", "clusterip", "web", "--tcp=80:8080")
    vip = c.kubectl("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}").stdout
    table = c.kubectl("get", "ipaddresses").stdout.splitlines()
    assert table[0].split() == ["NAME", "PARENTREF"]  # printers.go declares no Age column for IPAddresses
    rows = {line.split()[0]: line.split()[1] for line in table[1:]}
    assert rows[vip] == "services/default/web" and rows["10.96.0.1"] == "services/default/kubernetes"
    assert c.kubectl("get", "servicecidr", "kubernetes", "--no-headers").stdout.split()[:2] == [
        "kubernetes",
        "10.96.0.0/12",
    ]
    c.kubectl("delete", "service", "web")
    assert vip not in c.kubectl("get", "ip", "-o", "name").stdout


def test_api_resources_lists_the_kind_apis(mockkube_fresh):
    """Each kind listed as upstream lists it, and explained from the served OpenAPI."""
    k = mockkube_fresh.kubectl
    assert "scaleDown" in k("explain", "hpa.spec.behavior").stdout
    assert "targetCPUUtilizationPercentage" in k("explain", "hpa.spec", "--api-version=autoscaling/v1").stdout
    assert "expirationSeconds" in k("explain", "csr.spec").stdout
    assert "matchingPrecedence" in k("explain", "flowschemas.spec").stdout
    assert "parentRef" in k("explain", "ipaddresses.spec").stdout
    assert "maximumVolumeSize" in k("explain", "csistoragecapacities").stdout
    rows = {}
    for line in mockkube_fresh.kubectl("api-resources", "--no-headers").stdout.splitlines():
        parts = line.split()
        rows[parts[0]] = parts[1:]
    assert rows["horizontalpodautoscalers"] == ["hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"]
    assert rows["certificatesigningrequests"] == ["csr", "certificates.k8s.io/v1", "false", "CertificateSigningRequest"]
    assert rows["flowschemas"] == ["flowcontrol.apiserver.k8s.io/v1", "false", "FlowSchema"]
    assert rows["csistoragecapacities"] == ["storage.k8s.io/v1", "true", "CSIStorageCapacity"]
    assert rows["volumeattributesclasses"] == ["vac", "storage.k8s.io/v1", "false", "VolumeAttributesClass"]
    assert rows["servicecidrs"] == ["networking.k8s.io/v1", "false", "ServiceCIDR"]
    assert rows["ipaddresses"] == ["ip", "networking.k8s.io/v1", "false", "IPAddress"]
    assert rows["prioritylevelconfigurations"] == [
        "flowcontrol.apiserver.k8s.io/v1",
        "false",
        "PriorityLevelConfiguration",
    ]


def _csr_manifest(name: str, cn: str, orgs: tuple[str, ...], key) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    req = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), *attrs]))
        .sign(key, hashes.SHA256())
    )
    return json.dumps(
        {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {
                "request": base64.b64encode(req.public_bytes(serialization.Encoding.PEM)).decode(),
                "signerName": "kubernetes.io/kube-apiserver-client",
                "expirationSeconds": 86400,
                "usages": ["client auth"],
            },
        }
    )


def test_certificate_approve_issues_a_client_certificate_that_authenticates(tmp_path):
    """kind's flow for a new user: a CSR, `kubectl certificate approve`, the issued
    certificate in a kubeconfig; on a server with TLS and RBAC the user is who the CN says."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from mockkube.testing import binaries

    profile = tmp_path / "profile.yaml"
    profile.write_text("nodes: []\ndeviceClasses: false\n")
    kc = tmp_path / "kubeconfig"
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--kubeconfig", str(kc), "--cluster", str(profile)]
        + ["--tls", "--authorization-mode=RBAC", "--cert-dir", str(tmp_path / "pki")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().startswith("mockkube ready at https://")

        def k(*args, config=str(kc), input=None):
            return subprocess.run(
                [binaries.kubectl(), "--kubeconfig", config, *args],
                capture_output=True,
                text=True,
                input=input,
                timeout=60,
            )

        key = ec.generate_private_key(ec.SECP256R1())
        assert k("apply", "-f", "-", input=_csr_manifest("alice", "alice", ("devs",), key)).returncode == 0
        assert k("apply", "-f", "-", input=_csr_manifest("bob", "bob", (), key)).returncode == 0
        table = k("get", "csr").stdout.splitlines()
        assert table[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
        assert table[1].split()[2:] == ["kubernetes.io/kube-apiserver-client", "kubernetes-admin", "24h", "Pending"]
        out = k("certificate", "approve", "alice")
        assert out.stdout.strip() == "certificatesigningrequest.certificates.k8s.io/alice approved", out.stderr
        assert (
            k("certificate", "deny", "bob").stdout.strip() == "certificatesigningrequest.certificates.k8s.io/bob denied"
        )
        cert = _until(lambda: k("get", "csr", "alice", "-o", "jsonpath={.status.certificate}").stdout.strip())
        rows = {line.split()[0]: line.split()[-1] for line in k("get", "csr", "--no-headers").stdout.splitlines()}
        assert rows == {"alice": "Approved,Issued", "bob": "Denied"}
        conds = json.loads(k("get", "csr", "alice", "-o", "json").stdout)["status"]["conditions"]
        assert [(c["type"], c["reason"], c["message"]) for c in conds] == [
            ("Approved", "KubectlApprove", "This CSR was approved by kubectl certificate approve.")
        ]
        config = yaml.safe_load(kc.read_text())
        config["users"] = [
            {
                "name": config["users"][0]["name"],
                "user": {
                    "client-certificate-data": cert,
                    "client-key-data": base64.b64encode(
                        key.private_bytes(
                            serialization.Encoding.PEM,
                            serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption(),
                        )
                    ).decode(),
                },
            }
        ]
        (tmp_path / "alice").write_text(yaml.safe_dump(config))
        who = k("auth", "whoami", "-o", "json", config=str(tmp_path / "alice"))
        info = json.loads(who.stdout)["status"]["userInfo"]
        assert info["username"] == "alice" and "devs" in info["groups"]
        r = k("get", "pods", config=str(tmp_path / "alice"))
        assert r.returncode == 1 and 'User "alice" cannot list resource "pods"' in r.stderr
    finally:
        p.terminate()
        p.wait(10)
