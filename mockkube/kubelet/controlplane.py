"""kind's control plane and kube-system add-ons, for a profile with ``controlPlane: true``
(docs/profiles.md, docs/cluster-objects.md).

What a kind v1.36 cluster shows in ``kube-system`` once it is up: the control-plane node's
static pods (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) as the
kubelet's mirror pods; what kubeadm's add-on phase and kind install: the CoreDNS
Deployment and the ``kube-dns`` Service, the kube-proxy and kindnet DaemonSets, their
ServiceAccounts and ConfigMaps; kubeadm's ConfigMaps (``kubeadm-config``,
``kubelet-config``, ``cluster-info`` in ``kube-public``) and the API server's
``extension-apiserver-authentication``.

Objects, not work: the mirror pods are bound to the control-plane node and its simulated
kubelet runs them as any pod; the cluster's own Deployment, ReplicaSet and DaemonSet
controllers, the scheduler and the kubelets make the add-ons' pods. Everything is created
only when missing, so a reset (which restores the settled cluster, then starts fresh
components) leaves it as it was.
"""

from __future__ import annotations

import hashlib
import logging

from mockkube.client.client import Client
from mockkube.config.profile import CONTROL_PLANE_LABEL, CONTROL_PLANE_NODE
from mockkube.kubelet import node as nodes
from mockkube.machinery import errors
from mockkube.machinery.requestcontext import acting_as
from mockkube.rules.identities import node_user

log = logging.getLogger("mockkube.controlplane")

KUBERNETES_VERSION = "v1.36.0"
ETCD_IMAGE = "registry.k8s.io/etcd:3.6.6-0"
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.13.1"
KINDNET_IMAGE = "docker.io/kindest/kindnetd:v20251212-v0.29.0-alpha-105-g20ccfc88"
DNS_CLUSTER_IP = "10.96.0.10"
POD_SUBNET = "10.244.0.0/16"
SERVICE_SUBNET = "10.96.0.0/16"
CLUSTER_NAME = "mockkube"

COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
"""

# (component, image, command, cpu request, liveness port, scheme)
STATIC_PODS = [
    (
        "etcd",
        ETCD_IMAGE,
        [
            "etcd",
            "--advertise-client-urls=https://{ip}:2379",
            "--cert-file=/etc/kubernetes/pki/etcd/server.crt",
            "--client-cert-auth=true",
            "--data-dir=/var/lib/etcd",
            "--listen-client-urls=https://127.0.0.1:2379,https://{ip}:2379",
            "--name={node}",
        ],
        "100m",
        2381,
        "HTTP",
    ),
    (
        "kube-apiserver",
        f"registry.k8s.io/kube-apiserver:{KUBERNETES_VERSION}",
        [
            "kube-apiserver",
            "--advertise-address={ip}",
            "--allow-privileged=true",
            "--authorization-mode=Node,RBAC",
            "--client-ca-file=/etc/kubernetes/pki/ca.crt",
            "--enable-admission-plugins=NodeRestriction",
            "--etcd-servers=https://127.0.0.1:2379",
            "--runtime-config=",
            "--secure-port=6443",
            f"--service-cluster-ip-range={SERVICE_SUBNET}",
        ],
        "250m",
        6443,
        "HTTPS",
    ),
    (
        "kube-controller-manager",
        f"registry.k8s.io/kube-controller-manager:{KUBERNETES_VERSION}",
        [
            "kube-controller-manager",
            "--allocate-node-cidrs=true",
            f"--cluster-cidr={POD_SUBNET}",
            f"--cluster-name={CLUSTER_NAME}",
            "--controllers=*,bootstrapsigner,tokencleaner",
            "--leader-elect=true",
            f"--service-cluster-ip-range={SERVICE_SUBNET}",
        ],
        "200m",
        10257,
        "HTTPS",
    ),
    (
        "kube-scheduler",
        f"registry.k8s.io/kube-scheduler:{KUBERNETES_VERSION}",
        [
            "kube-scheduler",
            "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
            "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
            "--bind-address=127.0.0.1",
            "--kubeconfig=/etc/kubernetes/scheduler.conf",
            "--leader-elect=true",
        ],
        "100m",
        10259,
        "HTTPS",
    ),
]


def _hash(seed: str) -> str:
    return hashlib.md5(seed.encode()).hexdigest()


def mirror_pod(component: str, node: str, node_uid: str, ip: str) -> dict:
    """The kubelet's mirror pod of a kubeadm static pod manifest."""
    _, image, command, cpu, port, scheme = next(s for s in STATIC_PODS if s[0] == component)
    h = _hash(f"{component}/{node}")
    cmd = [c.format(ip=ip, node=node) for c in command]
    host = "127.0.0.1" if component in ("kube-controller-manager", "kube-scheduler", "etcd") else ip
    probe_path = {"etcd": "/livez", "kube-apiserver": "/livez"}.get(component, "/healthz")
    annotations = {
        "kubernetes.io/config.hash": h,
        "kubernetes.io/config.mirror": h,
        "kubernetes.io/config.seen": "2026-01-01T00:00:00.000000000Z",
        "kubernetes.io/config.source": "file",
    }
    if component == "kube-apiserver":
        annotations["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"] = f"{ip}:6443"
    if component == "etcd":
        annotations["kubeadm.kubernetes.io/etcd.advertise-client-urls"] = f"https://{ip}:2379"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{component}-{node}",
            "namespace": "kube-system",
            "labels": {"component": component, "tier": "control-plane"},
            "annotations": annotations,
            "ownerReferences": [{**nodes.owner_ref(node, node_uid), "controller": True}],
        },
        "spec": {
            "containers": [
                {
                    "name": component,
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": cmd,
                    "resources": {"requests": {"cpu": cpu, **({"memory": "100Mi"} if component == "etcd" else {})}},
                    "livenessProbe": {
                        "httpGet": {"host": host, "path": probe_path, "port": port, "scheme": scheme},
                        "initialDelaySeconds": 10,
                        "periodSeconds": 10,
                        "timeoutSeconds": 15,
                        "failureThreshold": 8,
                    },
                }
            ],
            "nodeName": node,
            "hostNetwork": True,
            "priority": 2000001000,
            "priorityClassName": "system-node-critical",
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
        },
    }


def _configmaps(ca_pem: str, server_url: str) -> list[tuple[str, dict]]:
    kubeadm_config = (
        "apiServer: {}\n"
        "apiVersion: kubeadm.k8s.io/v1beta4\n"
        "caCertificateValidityPeriod: 87600h0m0s\n"
        "certificateValidityPeriod: 8760h0m0s\n"
        "certificatesDir: /etc/kubernetes/pki\n"
        f"clusterName: {CLUSTER_NAME}\n"
        f"controlPlaneEndpoint: {CLUSTER_NAME}-control-plane:6443\n"
        "controllerManager: {}\n"
        "dns: {}\n"
        "encryptionAlgorithm: RSA-2048\n"
        "etcd:\n  local:\n    dataDir: /var/lib/etcd\n"
        "imageRepository: registry.k8s.io\n"
        "kind: ClusterConfiguration\n"
        f"kubernetesVersion: {KUBERNETES_VERSION}\n"
        "networking:\n  dnsDomain: cluster.local\n"
        f"  podSubnet: {POD_SUBNET}\n  serviceSubnet: {SERVICE_SUBNET}\n"
        "proxy: {}\n"
        "scheduler: {}\n"
    )
    kubelet_config = (
        "apiVersion: kubelet.config.k8s.io/v1beta1\n"
        "authentication:\n  anonymous:\n    enabled: false\n  webhook:\n    enabled: true\n"
        "  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\n"
        "authorization:\n  mode: Webhook\n"
        "cgroupDriver: systemd\n"
        f"clusterDNS:\n- {DNS_CLUSTER_IP}\n"
        "clusterDomain: cluster.local\n"
        "kind: KubeletConfiguration\n"
        "staticPodPath: /etc/kubernetes/manifests\n"
    )
    proxy_config = (
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
        "bindAddress: 0.0.0.0\n"
        f"clusterCIDR: {POD_SUBNET}\n"
        "clientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n"
        "conntrack:\n  maxPerCore: 0\n"
        "kind: KubeProxyConfiguration\n"
        "mode: iptables\n"
    )
    proxy_kubeconfig = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        "    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n"
        f"    server: https://{CLUSTER_NAME}-control-plane:6443\n  name: default\n"
        "contexts:\n- context:\n    cluster: default\n    namespace: default\n    user: default\n  name: default\n"
        "current-context: default\nusers:\n- name: default\n  user:\n"
        "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n"
    )
    import base64

    cluster_info = (
        "apiVersion: v1\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {base64.b64encode(ca_pem.encode()).decode()}\n"
        f'    server: {server_url}\n  name: ""\n'
        'contexts: null\ncurrent-context: ""\nkind: Config\npreferences: {}\nusers: null\n'
    )

    def cm(ns: str, name: str, data: dict, labels: dict | None = None) -> tuple[str, dict]:
        meta: dict = {"name": name, "namespace": ns}
        if labels:
            meta["labels"] = labels
        return ns, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}

    return [
        cm("kube-system", "coredns", {"Corefile": COREFILE}),
        cm(
            "kube-system",
            "kube-proxy",
            {"config.conf": proxy_config, "kubeconfig.conf": proxy_kubeconfig},
            {"app": "kube-proxy"},
        ),
        cm("kube-system", "kubeadm-config", {"ClusterConfiguration": kubeadm_config}),
        cm("kube-system", "kubelet-config", {"kubelet": kubelet_config}),
        cm(
            "kube-system",
            "extension-apiserver-authentication",
            {
                "client-ca-file": ca_pem,
                "requestheader-allowed-names": '["front-proxy-client"]',
                "requestheader-client-ca-file": ca_pem,
                "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
                "requestheader-group-headers": '["X-Remote-Group"]',
                "requestheader-uid-headers": '["X-Remote-Uid"]',
                "requestheader-username-headers": '["X-Remote-User"]',
            },
        ),
        cm("kube-public", "cluster-info", {"kubeconfig": cluster_info}),
    ]


def _coredns() -> dict:
    labels = {"k8s-app": "kube-dns"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "coredns", "namespace": "kube-system", "labels": dict(labels)},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "coredns",
                    "affinity": {
                        "podAntiAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 100,
                                    "podAffinityTerm": {
                                        "labelSelector": {
                                            "matchExpressions": [
                                                {"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}
                                            ]
                                        },
                                        "topologyKey": "kubernetes.io/hostname",
                                    },
                                }
                            ]
                        }
                    },
                    "tolerations": [
                        {"key": "CriticalAddonsOnly", "operator": "Exists"},
                        {"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"},
                    ],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "containers": [
                        {
                            "name": "coredns",
                            "image": COREDNS_IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["-conf", "/etc/coredns/Corefile"],
                            "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                            "ports": [
                                {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
                                {"name": "liveness-probe", "containerPort": 8080, "protocol": "TCP"},
                                {"name": "readiness-probe", "containerPort": 8181, "protocol": "TCP"},
                            ],
                            "livenessProbe": {
                                "httpGet": {"path": "/health", "port": "liveness-probe", "scheme": "HTTP"},
                                "initialDelaySeconds": 60,
                                "timeoutSeconds": 5,
                                "successThreshold": 1,
                                "failureThreshold": 5,
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/ready", "port": "readiness-probe", "scheme": "HTTP"},
                            },
                            "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                                "readOnlyRootFilesystem": True,
                            },
                        }
                    ],
                    "dnsPolicy": "Default",
                    "volumes": [
                        {
                            "name": "config-volume",
                            "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]},
                        }
                    ],
                },
            },
        },
    }


def _kube_dns() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kube-dns",
            "namespace": "kube-system",
            "labels": {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
            "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
        },
        "spec": {
            "selector": {"k8s-app": "kube-dns"},
            "clusterIP": DNS_CLUSTER_IP,
            "clusterIPs": [DNS_CLUSTER_IP],
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
            ],
        },
    }


def _daemonset(name: str, labels: dict, container: dict, sa: str, volumes: list[dict], tolerations: list[dict]) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system", "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "hostNetwork": True,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": sa,
                    "tolerations": tolerations,
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def _kube_proxy() -> dict:
    return _daemonset(
        "kube-proxy",
        {"k8s-app": "kube-proxy"},
        {
            "name": "kube-proxy",
            "image": f"registry.k8s.io/kube-proxy:{KUBERNETES_VERSION}",
            "imagePullPolicy": "IfNotPresent",
            "command": [
                "/usr/local/bin/kube-proxy",
                "--config=/var/lib/kube-proxy/config.conf",
                "--hostname-override=$(NODE_NAME)",
            ],
            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            "securityContext": {"privileged": True},
            "volumeMounts": [{"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"}],
        },
        "kube-proxy",
        [{"name": "kube-proxy", "configMap": {"name": "kube-proxy"}}],
        [{"operator": "Exists"}],  # kubeadm's: every taint
    )


def _kindnet() -> dict:
    return _daemonset(
        "kindnet",
        {"app": "kindnet", "k8s-app": "kindnet", "tier": "node"},
        {
            "name": "kindnet-cni",
            "image": KINDNET_IMAGE,
            "env": [
                {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "POD_SUBNET", "value": POD_SUBNET},
            ],
            "resources": {"limits": {"cpu": "100m", "memory": "50Mi"}, "requests": {"cpu": "100m", "memory": "50Mi"}},
            "securityContext": {"capabilities": {"add": ["NET_RAW", "NET_ADMIN"]}, "privileged": False},
            "volumeMounts": [{"name": "cni-cfg", "mountPath": "/etc/cni/net.d"}],
        },
        "kindnet",
        [{"name": "cni-cfg", "hostPath": {"path": "/etc/cni/net.d", "type": "DirectoryOrCreate"}}],
        [{"operator": "Exists"}],  # kind's: every taint
    )


def install(client: Client, kubelet: Client, node_uid: str, ip: str, ca_pem: str, server_url: str) -> int:
    """Create what is missing (``kubelet``: the control-plane node's kubelet, which creates
    the mirror pods; ``client``: kubeadm, the rest); returns how many objects were created."""
    created = 0

    def ensure(plural: str, group: str, ns: str, obj: dict, by: Client = client) -> None:
        nonlocal created
        rt = by.rt(plural, group)
        if by.get(rt, ns, obj["metadata"]["name"]) is not None:
            return
        try:
            by.create(rt, obj)
            created += 1
        except errors.APIError as e:
            if e.code != 409:
                log.warning("kube-system: %s %s/%s not created: %s", plural, ns, obj["metadata"]["name"], e.message)

    with acting_as(node_user(CONTROL_PLANE_NODE)):  # the kubelet creates its mirror pods
        for component, *_ in STATIC_PODS:
            ensure("pods", "", "kube-system", mirror_pod(component, CONTROL_PLANE_NODE, node_uid, ip), kubelet)
    for name in ("coredns", "kube-proxy", "kindnet"):
        ensure("serviceaccounts", "", "kube-system", {"metadata": {"name": name, "namespace": "kube-system"}})
    for ns, obj in _configmaps(ca_pem, server_url):
        ensure("configmaps", "", ns, obj)
    ensure("services", "", "kube-system", _kube_dns())
    ensure("deployments", "apps", "kube-system", _coredns())
    ensure("daemonsets", "apps", "kube-system", _kube_proxy())
    ensure("daemonsets", "apps", "kube-system", _kindnet())
    return created
