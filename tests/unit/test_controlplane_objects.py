"""kind's kube-system objects as mockkube/kubelet/controlplane.py builds them (pure)."""

from __future__ import annotations

from mockkube.kubelet import controlplane


def test_mirror_pod_is_the_kubelets_mirror_of_a_static_pod():
    pod = controlplane.mirror_pod("kube-scheduler", "mockkube-control-plane", "uid-1", "172.18.0.6")
    meta = pod["metadata"]
    assert meta["name"] == "kube-scheduler-mockkube-control-plane" and meta["namespace"] == "kube-system"
    assert meta["annotations"]["kubernetes.io/config.source"] == "file"
    assert meta["annotations"]["kubernetes.io/config.mirror"] == meta["annotations"]["kubernetes.io/config.hash"]
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "mockkube-control-plane", "uid": "uid-1", "controller": True}
    ]
    assert meta["labels"] == {"component": "kube-scheduler", "tier": "control-plane"}
    spec = pod["spec"]
    assert spec["nodeName"] == "mockkube-control-plane" and spec["hostNetwork"] is True
    assert spec["priorityClassName"] == "system-node-critical" and spec["priority"] == 2000001000


def test_apiserver_advertises_the_node_address():
    pod = controlplane.mirror_pod("kube-apiserver", "mockkube-control-plane", "u", "172.18.0.6")
    assert "--advertise-address=172.18.0.6" in pod["spec"]["containers"][0]["command"]
    assert pod["metadata"]["annotations"]["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"] == (
        "172.18.0.6:6443"
    )


def test_addons_tolerate_as_kinds_do():
    coredns = controlplane._coredns()["spec"]["template"]["spec"]
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in coredns["tolerations"]
    assert {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"} in coredns["tolerations"]
    for ds in (controlplane._kube_proxy(), controlplane._kindnet()):
        assert ds["spec"]["template"]["spec"]["tolerations"] == [{"operator": "Exists"}]
    svc = controlplane._kube_dns()["spec"]
    assert svc["clusterIP"] == "10.96.0.10"
    assert [(p["name"], p["port"], p["protocol"]) for p in svc["ports"]] == [
        ("dns", 53, "UDP"),
        ("dns-tcp", 53, "TCP"),
        ("metrics", 9153, "TCP"),
    ]
