"""KEP-5004 (extended resources backed by DRA) end to end with kubectl, on the KEP's
motivating cluster: a node with 8 DRA GPUs and a node whose device plugin advertises
example.com/gpu: 2 (it also has 2 DRA GPUs, which a pod asking for example.com/gpu never
gets there: a node never offers one extended resource both ways)."""

from __future__ import annotations

import json
import random

import pytest

from mockkube.testing.cluster import ThreadedCluster
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

PROFILE = """
apiVersion: mockkube.io/v1alpha1
kind: ClusterProfile
name: kep-5004
nodes:
- name: dra-node
  capacity: {cpu: "4", memory: 16Gi}
  drivers:
    gpu.example.com: {count: 8}
- name: dp-node
  capacity: {cpu: "4", memory: 16Gi}
  extendedResources: {example.com/gpu: "2"}
  drivers:
    gpu.example.com: {count: 2}
"""

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example-gpu}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: gpu-app}
spec:
  replicas: 2
  selector: {matchLabels: {app: gpu-app}}
  template:
    metadata: {labels: {app: gpu-app}}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: "3"}
          limits: {example.com/gpu: 1}
"""

CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


@pytest.fixture
def kep(tmp_path):
    (tmp_path / "profile.yaml").write_text(PROFILE)
    c = ThreadedCluster(workdir=str(tmp_path), cluster=str(tmp_path / "profile.yaml")).start()
    try:
        c.kubectl("apply", "-f", "-", input=CLASS)
        yield c
    finally:
        c.stop()


def get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def pod_yaml(
    name: str,
    ns: str = "default",
    node: str | None = None,
    requests: dict | None = None,
    init: dict | None = None,
    gated: bool = False,
    claim: str | None = None,
    template: str | None = None,
) -> str:
    spec: dict = {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {"requests": dict(requests or {}), "limits": dict(requests or {})},
            }
        ]
    }
    if init:
        spec["initContainers"] = [
            {"name": "init", "image": "busybox", "resources": {"requests": dict(init), "limits": dict(init)}}
        ]
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    if claim or template:
        entry = {"name": "gpu", **({"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template})}
        spec["resourceClaims"] = [entry]
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec})


def running(k, pod: str, ns: str = "default") -> dict:
    k("wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", f"pod/{pod}", "--timeout=60s")
    return get(k, "-n", ns, "pod", pod)


def claims_owned_by(k, pod: dict) -> list[dict]:
    ns = pod["metadata"]["namespace"]
    return [
        c
        for c in get(k, "-n", ns, "resourceclaims")["items"]
        if any(o["uid"] == pod["metadata"]["uid"] for o in c["metadata"].get("ownerReferences") or ())
    ]


def allocated_devices(k, node: str | None = None) -> list[tuple[str, str]]:
    out = []
    for c in get(k, "resourceclaims", "-A")["items"]:
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ():
            if node is None or r["pool"] == node:
                out.append((r["pool"], r["device"]))
    return out


def slice_devices(k, node: str) -> list[str]:
    return [
        d["name"]
        for s in get(k, "resourceslices")["items"]
        if s["spec"].get("nodeName") == node
        for d in s["spec"]["devices"]
    ]


def test_kep_motivating_example_dra_node_and_device_plugin_node(kep):
    k = kep.kubectl
    k("apply", "-f", "-", input=DEPLOYMENT)
    k("rollout", "status", "deployment/gpu-app", "--timeout=60s")
    pods = {p["spec"]["nodeName"]: p for p in get(k, "pods", "-l", "app=gpu-app")["items"]}
    assert set(pods) == {"dra-node", "dp-node"}
    dra_pod, dp_pod = pods["dra-node"], pods["dp-node"]
    # DRA node: one special claim, one of the 8 GPUs allocated, seven free.
    [claim] = claims_owned_by(k, dra_pod)
    assert dra_pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == claim["metadata"]["name"]
    used = allocated_devices(k, "dra-node")
    assert len(slice_devices(k, "dra-node")) == 8 and len(used) == 1
    assert len(set(slice_devices(k, "dra-node")) - {d for _, d in used}) == 7
    # Device-plugin node: no claim, its DRA GPUs untouched.
    assert claims_owned_by(k, dp_pod) == [] and "extendedResourceClaimStatus" not in dp_pod["status"]
    assert allocated_devices(k, "dp-node") == []
    node = get(k, "node", "dp-node")
    assert node["status"]["allocatable"]["example.com/gpu"] == "2"


def test_special_claim_shape_mappings_and_per_container_devices(kep):
    k = kep.kubectl
    pod = json.loads(
        pod_yaml(
            "shape", node="dra-node", requests={"example.com/gpu": "2", "cpu": "100m"}, init={"example.com/gpu": "3"}
        )
    )
    pod["spec"]["containers"].append(
        {
            "name": "side",
            "image": "busybox",
            "resources": {
                "requests": {"deviceclass.resource.kubernetes.io/example-gpu": "1"},
                "limits": {"deviceclass.resource.kubernetes.io/example-gpu": "1"},
            },
        }
    )
    k("apply", "-f", "-", input=json.dumps(pod))
    pod = running(k, "shape")
    st = pod["status"]["extendedResourceClaimStatus"]
    claim = get(k, "resourceclaim", st["resourceClaimName"])
    meta = claim["metadata"]
    assert meta["name"].startswith("shape-extended-resources-")
    assert meta["annotations"][CLAIM_ANNOTATION] == "true"
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "shape", "uid": pod["metadata"]["uid"], "controller": True}
    ]
    # init container 0 reuses container 1's two devices and asks for one more; the
    # implicit name of container 2 is its own resource.
    reqs = {
        r["name"]: (r["exactly"]["deviceClassName"], r["exactly"]["count"])
        for r in claim["spec"]["devices"]["requests"]
    }
    assert reqs == {
        "container-0-request-0": ("example-gpu", 1),
        "container-1-request-1": ("example-gpu", 2),
        "container-2-request-0": ("example-gpu", 1),
    }
    assert sorted((m["containerName"], m["resourceName"], m["requestName"]) for m in st["requestMappings"]) == [
        ("c", "example.com/gpu", "container-1-request-1"),
        ("init", "example.com/gpu", "container-0-request-0"),
        ("init", "example.com/gpu", "container-1-request-1"),
        ("side", "deviceclass.resource.kubernetes.io/example-gpu", "container-2-request-0"),
    ]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "shape", "uid": pod["metadata"]["uid"]}]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == 4 and len({r["device"] for r in results}) == 4
    assert len(claims_owned_by(k, pod)) == 1  # at most one per pod
    # kubelet: each container gets exactly the devices of its own requests
    res = json.loads(k("get", "--raw", "/mockkube/v1/nodes/dra-node/podresources").stdout)
    [entry] = [p for p in res["podResources"] if p["name"] == "shape"]
    per = {
        c["name"]: sorted(d["deviceName"] for dr in c["dynamicResources"] for d in dr["claimResources"])
        for c in entry["containers"]
    }
    by_request = {}
    for r in results:
        by_request.setdefault(r["request"], []).append(r["device"])
    assert per == {
        "c": sorted(by_request["container-1-request-1"]),
        "side": sorted(by_request["container-2-request-0"]),
    }


def test_implicit_name_and_newest_class_wins(kep):
    k = kep.kubectl
    k(
        "apply",
        "-f",
        "-",
        input=pod_yaml(
            "implicit", node="dra-node", requests={"deviceclass.resource.kubernetes.io/gpu.example.com": "2"}
        ),
    )
    pod = running(k, "implicit")
    claim = get(k, "resourceclaim", pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"])
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    assert len(claim["status"]["allocation"]["devices"]["results"]) == 2
    # two more classes name example.com/gpu: the newest wins, on a tie the first name
    for name in ("b-gpu", "a-gpu"):
        k("apply", "-f", "-", input=CLASS.replace("example-gpu", name))
    classes = [
        c for c in get(k, "deviceclasses")["items"] if c["spec"].get("extendedResourceName") == "example.com/gpu"
    ]
    winner = sorted(classes, key=lambda c: c["metadata"]["name"])
    winner = max(winner, key=lambda c: c["metadata"]["creationTimestamp"])["metadata"]["name"]
    k("apply", "-f", "-", input=pod_yaml("explicit", node="dra-node", requests={"example.com/gpu": "1"}))
    pod = running(k, "explicit")
    claim = get(k, "resourceclaim", pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"])
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == winner


def special_claim(pod: dict, requests: list[dict], annotate: bool = True) -> str:
    return json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": f"{pod['metadata']['name']}-extended-resources-old",
                "namespace": "default",
                "annotations": {CLAIM_ANNOTATION: "true"} if annotate else {},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": pod["metadata"]["name"],
                        "uid": pod["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {"devices": {"requests": requests}},
        }
    )


def test_special_claim_left_by_an_earlier_scheduler_is_reused_or_deleted(kep):
    """A scheduler that stopped after PreBind's claim writes left an allocated special claim
    (a gated pod stands in for it): a claim that still fits is reused; one that does not
    (here: never allocated) is deleted in PostFilter and replaced."""
    k = kep.kubectl
    req = [
        {
            "name": "container-0-request-0",
            "exactly": {"deviceClassName": "example-gpu", "allocationMode": "ExactCount", "count": 1},
        }
    ]
    k("apply", "-f", "-", input=pod_yaml("reuse", requests={"example.com/gpu": "1"}, gated=True))
    pod = get(k, "pod", "reuse")
    k("apply", "-f", "-", input=special_claim(pod, req))
    alloc = {
        "devices": {
            "results": [
                {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "dra-node", "device": "gpu-5"}
            ]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["dra-node"]}]}]
        },
        "allocationTimestamp": "2026-01-01T00:00:00Z",
    }
    k(
        "patch",
        "resourceclaim",
        "reuse-extended-resources-old",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"allocation": alloc}}),
    )
    k("patch", "pod", "reuse", "--type=json", "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    pod = running(k, "reuse")
    assert pod["spec"]["nodeName"] == "dra-node"
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "resourceClaimName": "reuse-extended-resources-old",
        "requestMappings": [
            {"containerName": "c", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}
        ],
    }
    claim = get(k, "resourceclaim", "reuse-extended-resources-old")
    assert claim["status"]["reservedFor"][0]["uid"] == pod["metadata"]["uid"]
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-5"]
    assert len(claims_owned_by(k, pod)) == 1

    k("apply", "-f", "-", input=pod_yaml("stale", node="dra-node", requests={"example.com/gpu": "1"}, gated=True))
    pod = get(k, "pod", "stale")
    k("apply", "-f", "-", input=special_claim(pod, req))
    k("patch", "pod", "stale", "--type=json", "-p", '[{"op": "remove", "path": "/spec/schedulingGates"}]')
    pod = running(k, "stale")
    name = pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    assert name != "stale-extended-resources-old"
    assert k("get", "resourceclaim", "stale-extended-resources-old", check=False).returncode != 0
    assert [c["metadata"]["name"] for c in claims_owned_by(k, pod)] == [name]


def test_pod_over_the_per_claim_device_limit_stays_pending(kep):
    k = kep.kubectl
    k("apply", "-f", "-", input=pod_yaml("huge", requests={"example.com/gpu": "33"}))
    k("wait", "--for=condition=PodScheduled=False", "pod/huge", "--timeout=30s")
    pod = get(k, "pod", "huge")
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    events = until(
        lambda: [
            e
            for e in get(k, "events", "--field-selector", "involvedObject.name=huge")["items"]
            if e["reason"] == "FailedScheduling"
        ],
        what="FailedScheduling",
    )
    assert "number of requested devices 33 exceeds the claim limit of 32" in events[0]["message"]
    assert claims_owned_by(k, pod) == []


QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu, namespace: team}
spec:
  hard:
    requests.example.com/gpu: "10"
    requests.deviceclass.resource.kubernetes.io/example-gpu: "10"
    example-gpu.deviceclass.resource.k8s.io/devices: "10"
"""


def quota_used(k) -> dict:
    return (get(k, "-n", "team", "resourcequota", "gpu").get("status") or {}).get("used") or {}


def test_resource_quota_counts_as_the_kep_adjusted_example(kep):
    """gpu-0 from the device plugin (explicit name), gpu-1 from DRA (explicit name), gpu-2
    from DRA (implicit name), gpu-3 from a claim, gpu-4 from a claim template."""
    k = kep.kubectl
    k("create", "namespace", "team")
    k("apply", "-f", "-", input=QUOTA)
    until(lambda: quota_used(k), what="quota status")
    k("apply", "-f", "-", input=pod_yaml("gpu-0", "team", node="dp-node", requests={"example.com/gpu": "1"}))
    k("apply", "-f", "-", input=pod_yaml("gpu-1", "team", node="dra-node", requests={"example.com/gpu": "1"}))
    k(
        "apply",
        "-f",
        "-",
        input=pod_yaml(
            "gpu-2", "team", node="dra-node", requests={"deviceclass.resource.kubernetes.io/example-gpu": "1"}
        ),
    )
    request = [{"name": "gpu", "exactly": {"deviceClassName": "example-gpu"}}]
    k(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "gpu-3", "namespace": "team"},
                "spec": {"devices": {"requests": request}},
            }
        ),
    )
    k(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpu-4", "namespace": "team"},
                "spec": {"spec": {"devices": {"requests": request}}},
            }
        ),
    )
    k("apply", "-f", "-", input=pod_yaml("gpu-3", "team", claim="gpu-3"))
    k("apply", "-f", "-", input=pod_yaml("gpu-4", "team", template="gpu-4"))
    for p in ("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4"):
        running(k, p, "team")
    want = {
        "requests.example.com/gpu": "5",
        "requests.deviceclass.resource.kubernetes.io/example-gpu": "4",
        "example-gpu.deviceclass.resource.k8s.io/devices": "4",
    }
    until(lambda: quota_used(k) == want, what=f"quota used {want}")
    out = " ".join(k("describe", "quota", "gpu", "-n", "team").stdout.split())
    assert "Resource Used Hard -------- ---- ----" in out
    assert "requests.example.com/gpu 5 10" in out
    assert "requests.deviceclass.resource.kubernetes.io/example-gpu 4 10" in out
    assert "example-gpu.deviceclass.resource.k8s.io/devices 4 10" in out
    # over the limit: refused at admission with upstream's wording
    p = k("apply", "-f", "-", input=pod_yaml("greedy", "team", requests={"example.com/gpu": "6"}), check=False)
    assert p.returncode == 1
    assert (
        'pods "greedy" is forbidden: exceeded quota: gpu, requested: requests.example.com/gpu=6, '
        "used: requests.example.com/gpu=5, limited: requests.example.com/gpu=10"
    ) in p.stderr
    # a finished pod stops counting
    k("delete", "pod", "gpu-0", "-n", "team", "--wait=true")
    until(lambda: quota_used(k).get("requests.example.com/gpu") == "4", what="usage released")


def metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            got = dict(kv.split("=", 1) for kv in line[line.find("{") + 1 : line.find("}")].split(",") if "=" in kv)
            if all(got.get(k) == f'"{v}"' for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_claim_creates_and_claim_source(kep):
    k = kep.kubectl
    k("apply", "-f", "-", input=pod_yaml("m1", node="dra-node", requests={"example.com/gpu": "1"}))
    running(k, "m1")
    text = k("get", "--raw", "/metrics").stdout
    assert "# TYPE scheduler_resourceclaim_creates_total counter" in text
    assert metric(text, "scheduler_resourceclaim_creates_total", status="success") == 1
    assert (
        metric(
            text,
            "resourceclaim_controller_resource_claims",
            allocated="true",
            admin_access="false",
            source="extended_resource",
        )
        == 1
    )
    # a quota on the implicit name refuses the scheduler's claim: a failed create, pod Pending
    k("create", "namespace", "tight")
    k(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "q", "namespace": "tight"},
                "spec": {"hard": {"requests.deviceclass.resource.kubernetes.io/example-gpu": "0"}},
            }
        ),
    )
    until(lambda: (get(k, "-n", "tight", "resourcequota", "q").get("status") or {}).get("used"), what="quota status")
    k("apply", "-f", "-", input=pod_yaml("m2", "tight", node="dra-node", requests={"example.com/gpu": "1"}))
    until(
        lambda: (
            metric(k("get", "--raw", "/metrics").stdout, "scheduler_resourceclaim_creates_total", status="failure") >= 1
        ),
        what="a failed claim create",
    )
    pod = get(k, "-n", "tight", "pod", "m2")
    assert pod["status"]["phase"] == "Pending" and claims_owned_by(k, pod) == []


def test_randomized_mix_of_claims_and_extended_resources_never_overallocates(kep):
    k = kep.kubectl
    rng = random.Random(5004)
    k(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "example-gpu"}}]}}
                },
            }
        ),
    )
    docs = []
    for i in range(16):
        kind = rng.choice(["template", "explicit", "implicit"])
        if kind == "template":
            docs.append(pod_yaml(f"mix-{i}", template="one-gpu"))
        elif kind == "explicit":
            docs.append(pod_yaml(f"mix-{i}", requests={"example.com/gpu": str(rng.randint(1, 3))}))
        else:
            docs.append(
                pod_yaml(
                    f"mix-{i}", requests={"deviceclass.resource.kubernetes.io/example-gpu": str(rng.randint(1, 3))}
                )
            )
    k("apply", "-f", "-", input="\n---\n".join(docs))

    def settled():
        pods = get(k, "pods", "-l", "!app")["items"]
        pods = [p for p in pods if p["metadata"]["name"].startswith("mix-")]
        done = [
            p
            for p in pods
            if p["status"].get("phase") == "Running"
            or any(c["type"] == "PodScheduled" and c["status"] == "False" for c in p["status"].get("conditions") or ())
        ]
        return pods if len(done) == 16 else None

    pods = until(settled, timeout=60, what="every pod running or unschedulable")
    used = allocated_devices(k)
    assert len(used) == len(set(used)), "a device was allocated twice"
    for pool, dev in used:
        assert dev in slice_devices(k, pool)
    dra_total = len(slice_devices(k, "dra-node")) + len(slice_devices(k, "dp-node"))
    assert len(used) <= dra_total
    # device-plugin grants never exceed what dp-node advertises
    dp = [
        p
        for p in pods
        if p["spec"].get("nodeName") == "dp-node"
        and p["status"].get("phase") == "Running"
        and "extendedResourceClaimStatus" not in p["status"]
        and not p["spec"].get("resourceClaims")
    ]
    assert sum(int(p["spec"]["containers"][0]["resources"]["requests"].get("example.com/gpu", 0)) for p in dp) <= 2
    assert any(p["status"].get("phase") == "Running" for p in pods)


def test_get_quota_columns(kep):
    k = kep.kubectl
    k("create", "namespace", "team")
    k("apply", "-f", "-", input=QUOTA)
    until(lambda: quota_used(k), what="quota status")
    out = k("get", "quota", "-n", "team").stdout.splitlines()
    assert out[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert out[1].split(None, 2)[2].strip() == (
        "example-gpu.deviceclass.resource.k8s.io/devices: 0/10, requests.deviceclass.resource.kubernetes.io/"
        "example-gpu: 0/10, requests.example.com/gpu: 0/10"
    )


def test_quota_validation_names_the_field(kep):
    k = kep.kubectl
    k("create", "namespace", "team")
    bad = QUOTA.replace('requests.example.com/gpu: "10"', 'requests.example.com/gpu: "-1"')
    p = k("apply", "-f", "-", input=bad, check=False)
    assert p.returncode == 1
    assert (
        'The ResourceQuota "gpu" is invalid: spec.hard[requests.example.com/gpu]: Invalid value: "-1": '
        "must be greater than or equal to 0"
    ) in p.stderr


FPGA_PROFILE = """
nodes:
- name: fpga-node
  labels: {example.com/fabric: fabric-a}
  drivers: {fpga.example.com: {}}
fabric:
- pool: fabric-a
  devices: 2
  nodeSelector: {example.com/fabric: fabric-a}
drivers:
  fpga.example.com: {attachDelay: 1h, seed: 7}
"""


def test_special_claim_is_reused_after_a_scheduler_restart(tmp_path):
    """The pod waits in PreBind (its FPGA has a binding condition) with its special claim
    created, allocated and reserved; a new scheduler finds that claim and reuses it."""
    from mockkube.testing.clock import FakeClock
    from tests.e2e.test_binding_conditions_kubectl import _restart_scheduler, events

    (tmp_path / "profile.yaml").write_text(FPGA_PROFILE)
    c = ThreadedCluster(
        workdir=str(tmp_path), cluster=str(tmp_path / "profile.yaml"), clock=FakeClock(), binding_timeout=600
    ).start()
    try:
        k = c.kubectl
        k(
            "apply",
            "-f",
            "-",
            input=CLASS.replace("example-gpu", "fpga")
            .replace("example.com/gpu", "example.com/fpga")
            .replace("gpu.example.com", "fpga.example.com"),
        )
        k("apply", "-f", "-", input=pod_yaml("fpga", requests={"example.com/fpga": "1"}))
        until(lambda: events(k, "fpga", "BindingConditionsPending"), what="waiting in PreBind")
        pod = get(k, "pod", "fpga")
        [claim] = claims_owned_by(k, pod)
        assert pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == claim["metadata"]["name"]
        _restart_scheduler(c)
        until(
            lambda: sum(e.get("count", 1) for e in events(k, "fpga", "BindingConditionsPending")) >= 2,
            what="waiting again after the restart",
        )
        claim = get(k, "resourceclaim", claim["metadata"]["name"])
        r = claim["status"]["allocation"]["devices"]["results"][0]
        claim["status"]["devices"] = [
            {
                "driver": r["driver"],
                "pool": r["pool"],
                "device": r["device"],
                "conditions": [
                    {
                        "type": "fpga.example.com/attached",
                        "status": "True",
                        "reason": "Attached",
                        "message": "done by hand",
                        "lastTransitionTime": "2023-11-14T22:15:00Z",
                    }
                ],
            }
        ]
        k("replace", "--subresource=status", "-f", "-", input=json.dumps(claim))
        pod = running(k, "fpga")
        assert [x["metadata"]["name"] for x in claims_owned_by(k, pod)] == [claim["metadata"]["name"]]
        assert pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == claim["metadata"]["name"]
        text = k("get", "--raw", "/metrics").stdout
        assert metric(text, "scheduler_resourceclaim_creates_total", status="success") == 1
    finally:
        c.stop()


@pytest.mark.parametrize("scheduler_process", [False, True], ids=["thread", "process"])
def test_unreserve_deletes_the_special_claim_when_binding_fails(tmp_path, scheduler_process):
    """PreBind created the special claim, then the device's binding failed (KEP-5007
    failure condition): Unreserve deletes the claim and the next attempt makes a new one.
    In a scheduler process the retry after a conflict reads the claim from the API (its
    replica may not have the latest write yet), as upstream's deleteClaim does."""
    from mockkube.testing.clock import FakeClock
    from tests.e2e.test_binding_conditions_kubectl import events

    (tmp_path / "profile.yaml").write_text(
        FPGA_PROFILE.replace("attachDelay: 1h", "attachDelay: 30s, faultyDevices: [fpga-0]")
    )
    c = ThreadedCluster(
        workdir=str(tmp_path),
        cluster=str(tmp_path / "profile.yaml"),
        clock=FakeClock(),
        scheduler_process=scheduler_process,
    ).start()
    try:
        k = c.kubectl
        k(
            "apply",
            "-f",
            "-",
            input=CLASS.replace("example-gpu", "fpga")
            .replace("example.com/gpu", "example.com/fpga")
            .replace("gpu.example.com", "fpga.example.com"),
        )
        k("apply", "-f", "-", input=pod_yaml("flaky", requests={"example.com/fpga": "1"}))
        until(lambda: events(k, "flaky", "BindingConditionsPending"), what="waiting in PreBind")
        [first] = claims_owned_by(k, get(k, "pod", "flaky"))
        assert first["status"]["allocation"]["devices"]["results"][0]["device"] == "fpga-0"
        c.advance(30)  # the attach of fpga-0 fails
        until(
            lambda: [e for e in events(k, "flaky", "FailedScheduling") if "binding failed" in e["message"]],
            what="FailedScheduling for the failure",
        )
        until(
            lambda: k("get", "resourceclaim", first["metadata"]["name"], check=False).returncode != 0,
            what="the special claim deleted by Unreserve",
        )
        c.advance(11)  # past the backoff: a new claim on another device

        def second():
            claims = claims_owned_by(k, get(k, "pod", "flaky"))
            return claims[0] if claims and (claims[0].get("status") or {}).get("allocation") else None

        claim = until(second, what="a new special claim")
        assert claim["metadata"]["name"] != first["metadata"]["name"]
        assert claim["status"]["allocation"]["devices"]["results"][0]["device"] != "fpga-0"
        c.advance(30)
        pod = running(k, "flaky")
        assert pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == claim["metadata"]["name"]
        text = k("get", "--raw", "/metrics").stdout
        assert metric(text, "scheduler_resourceclaim_creates_total", status="success") == 2
    finally:
        c.stop()
