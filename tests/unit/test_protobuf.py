"""Protobuf request bodies <-> JSON dicts (mockkube.apiserver.http.protobuf).

Fixtures under fixtures/protobuf/ are REAL bodies, recorded from kubectl v1.35.2 and helm
(/tmp/kbin/layer) against a throw-away aiohttp stub: `kubectl create configmap cm1
--from-literal=a=1 --from-literal=b=two`, `kubectl create secret generic s1
--from-literal=user=admin --from-file=blob=<bytes 00 01 02 ff fe "binary">`, `kubectl create
namespace ns1`, `kubectl create deployment web --image=nginx:1.27 --replicas=3 --port=80`,
`kubectl drain n1 --force --grace-period=7` (pod DELETE), `helm install rel1 ./chart` (release
Secret) and `helm uninstall rel1` (release Secret DELETE).
"""

from __future__ import annotations

import base64
import copy
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mockkube.apiserver.http import protobuf
from mockkube.apiserver.http.protobuf import (
    MEDIA_TYPE,
    decode,
    decode_message,
    encode,
    encode_message,
    format_duration,
    parse_duration,
)
from mockkube.apiserver.resources import dra_conversion
from mockkube.generated.proto_types import KINDS, MESSAGES
from mockkube.machinery.errors import APIError

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
REPO = Path(__file__).resolve().parents[2]


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# ----------------------------------------------------------------------------- real bytes

REAL = [
    (
        "kubectl_create_configmap.bin",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}, "data": {"a": "1", "b": "two"}},
    ),
    (
        "kubectl_create_secret_generic.bin",
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s1"},
            "data": {
                "blob": base64.b64encode(b"\x00\x01\x02\xff\xfebinary").decode(),
                "user": base64.b64encode(b"admin").decode(),
            },
            "type": "Opaque",
        },
    ),
    (
        "kubectl_create_namespace.bin",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}, "spec": {}, "status": {}},
    ),
    (
        "kubectl_create_deployment.bin",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}], "resources": {}}
                        ]
                    },
                },
                "strategy": {},
            },
            "status": {},
        },
    ),
    ("kubectl_drain_delete_pod.bin", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 7}),
    ("helm_uninstall_delete.bin", {"apiVersion": "v1", "kind": "DeleteOptions"}),
]


@pytest.mark.parametrize("name,expected", REAL, ids=[r[0] for r in REAL])
def test_real_client_bodies_decode_to_client_json(name: str, expected: dict) -> None:
    assert decode(fixture(name)) == expected


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.bin")))
def test_real_client_bodies_reencode_byte_for_byte(name: str) -> None:
    body = fixture(name)
    assert encode(decode(body)) == body


def test_helm_release_secret() -> None:
    obj = decode(fixture("helm_install_release_secret.bin"))
    assert obj["type"] == "helm.sh/release.v1"
    assert obj["metadata"]["name"] == "sh.helm.release.v1.rel1.v1"
    assert obj["metadata"]["labels"]["owner"] == "helm"
    assert obj["metadata"]["labels"]["status"] == "pending-install"
    assert set(obj["metadata"]) == {"name", "labels"}  # no namespace "", no creationTimestamp
    # helm stores base64(gzip(json)) in the secret; the JSON view is base64 of those bytes
    inner = base64.b64decode(base64.b64decode(obj["data"]["release"]))
    assert inner[:2] == b"\x1f\x8b"


def test_media_type() -> None:
    assert MEDIA_TYPE == "application/vnd.kubernetes.protobuf"


# ----------------------------------------------------------------------------- round trips

META = {
    "name": "obj",
    "namespace": "ns1",
    "uid": "6f1c2a52-2f42-4c8e-9d57-6cb1a2b3c4d5",
    "resourceVersion": "42",
    "generation": 3,
    "creationTimestamp": "2026-03-01T10:20:30Z",
    "labels": {"app": "demo", "tier": "gpu"},
    "annotations": {"note": "ünïcode ✓"},
    "finalizers": ["example.com/protect"],
    "ownerReferences": [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ],
    "managedFields": [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": "2026-03-01T10:20:30Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}},
        }
    ],
}


def meta(**over: object) -> dict:
    m = copy.deepcopy(META)
    m.update(over)
    return {k: v for k, v in m.items() if v is not None}


RESOURCE_SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": meta(namespace=None, name="node-1-gpu.example.com-x7k2"),
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 2, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "sharedCounters": [
            {"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}, "multiprocessors": {"value": "132"}}}
        ],
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "H100"},
                    "index": {"int": 0},
                    "mig": {"bool": False},
                    "negative": {"int": -7},
                    "driverVersion": {"version": "550.54.15"},
                },
                "capacity": {
                    "memory": {"value": "80Gi"},
                    "bandwidth": {
                        "value": "100G",
                        "requestPolicy": {"default": "10G", "validRange": {"min": "1G", "max": "100G", "step": "1G"}},
                    },
                    "slots": {"value": "4", "requestPolicy": {"default": "1", "validValues": ["1", "2", "4"]}},
                },
                "consumesCounters": [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}],
                "taints": [
                    {
                        "key": "example.com/unhealthy",
                        "value": "ecc",
                        "effect": "NoSchedule",
                        "timeAdded": "2026-03-01T11:00:00Z",
                    }
                ],
                "bindsToNode": True,
                "bindingConditions": ["example.com/attached"],
                "bindingFailureConditions": ["example.com/attach-failed"],
                "allowMultipleAllocations": True,
                "nodeAllocatableResourceMappings": {
                    "cpu": {"capacityKey": "cores", "allocationMultiplier": "2"},
                    "example.com/gpu": {},
                },
            },
            {"name": "gpu-1", "allNodes": False},
        ],
    },
}

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": meta(name="trainer", deletionTimestamp="2026-03-02T00:00:00Z", deletionGracePeriodSeconds=30),
    "spec": {
        "containers": [
            {
                "name": "main",
                "image": "example.com/train:1",
                "command": ["python", "-m", "t"],
                "args": ["--epochs=3"],
                "env": [
                    {"name": "A", "value": "1"},
                    {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                ],
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "2", "memory": "4Gi", "example.com/gpu": "1"},
                    "requests": {"cpu": "500m", "memory": "1Gi"},
                    "claims": [{"name": "gpu", "request": "big"}, {"name": "nic"}],
                },
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                "livenessProbe": {"tcpSocket": {"port": 8080}},
                "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True}],
            }
        ],
        "initContainers": [{"name": "init", "image": "busybox", "resources": {}}],
        "volumes": [
            {"name": "cfg", "configMap": {"name": "cm1", "defaultMode": 420}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        ],
        "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
            {"name": "nic", "resourceClaimName": "shared-nic"},
        ],
        "nodeName": "node-1",
        "restartPolicy": "Never",
        "priority": -5,
        "terminationGracePeriodSeconds": 30,
        "serviceAccountName": "default",
        "securityContext": {"runAsUser": 1000, "supplementalGroups": [5, 6], "runAsNonRoot": True},
        "tolerations": [
            {"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 300}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100", "a100"]}]}
                    ]
                }
            }
        },
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.5",
        "startTime": "2026-03-01T10:21:00Z",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-03-01T10:22:00Z"}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}],
        "containerStatuses": [
            {
                "name": "main",
                "ready": True,
                "restartCount": 0,
                "image": "example.com/train:1",
                "imageID": "",
                "state": {"running": {"startedAt": "2026-03-01T10:21:30Z"}},
            }
        ],
    },
}

RESOURCE_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": meta(),
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "big",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "allocationMode": "ExactCount",
                        "count": 2,
                        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}],
                        "tolerations": [
                            {
                                "key": "k",
                                "operator": "Equal",
                                "value": "v",
                                "effect": "NoExecute",
                                "tolerationSeconds": 0,
                            }
                        ],
                        "capacity": {"requests": {"bandwidth": "10G"}},
                        "adminAccess": False,
                    },
                },
                {
                    "name": "any",
                    "firstAvailable": [
                        {"name": "a", "deviceClassName": "fpga.example.com"},
                        {"name": "b", "deviceClassName": "cpu.example.com", "allocationMode": "All"},
                    ],
                },
            ],
            "constraints": [{"requests": ["big"], "matchAttribute": "gpu.example.com/numa"}],
            "config": [
                {
                    "requests": ["big"],
                    "opaque": {
                        "driver": "gpu.example.com",
                        "parameters": {
                            "apiVersion": "gpu.example.com/v1",
                            "kind": "Cfg",
                            "sharing": {"strategy": "TimeSlicing", "slices": [1, 2.5, None]},
                        },
                    },
                }
            ],
        }
    },
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "big",
                        "driver": "gpu.example.com",
                        "pool": "node-1",
                        "device": "gpu-0",
                        "bindingConditions": ["example.com/attached"],
                        "shareID": "a1b2",
                        "consumedCapacity": {"bandwidth": "10G"},
                    }
                ],
                "config": [
                    {
                        "source": "FromClaim",
                        "requests": ["big"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"x": 1}},
                    }
                ],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
            "allocationTimestamp": "2026-03-01T10:21:00Z",
        },
        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "pod-uid"}],
        "devices": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-0",
                "conditions": [
                    {
                        "type": "example.com/attached",
                        "status": "True",
                        "lastTransitionTime": "2026-03-01T10:21:10Z",
                        "reason": "Attached",
                        "message": "",
                        "observedGeneration": 1,
                    }
                ],
                "data": {"pciAddress": "0000:3b:00.0"},
                "networkData": {"interfaceName": "eth1", "ips": ["10.1.0.2/24"]},
            }
        ],
    },
}

OBJECTS = [
    {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(namespace=None),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(namespace=None, name="node-1"),
        "spec": {
            "podCIDR": "10.0.0.0/24",
            "taints": [
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-03-01T10:00:00Z"}
            ],
            "unschedulable": True,
        },
        "status": {
            "capacity": {"cpu": "64", "memory": "512Gi", "pods": "110"},
            "allocatable": {"cpu": "63500m", "memory": "500Gi", "pods": "110"},
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2026-03-01T10:00:00Z",
                    "lastTransitionTime": "2026-03-01T09:00:00Z",
                    "reason": "KubeletReady",
                    "message": "ok",
                }
            ],
            "nodeInfo": {"kubeletVersion": "v1.36.0", "architecture": "amd64"},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        },
    },
    POD,
    {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta(name="trainer"),
        "target": {"kind": "Node", "name": "node-1", "apiVersion": "v1"},
    },
    {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(name="trainer.1"),
        "involvedObject": {
            "kind": "Pod",
            "namespace": "ns1",
            "name": "trainer",
            "uid": "u",
            "fieldPath": "spec.containers{main}",
        },
        "reason": "Scheduled",
        "message": "assigned",
        "source": {"component": "scheduler"},
        "firstTimestamp": "2026-03-01T10:20:30Z",
        "lastTimestamp": "2026-03-01T10:20:31Z",
        "count": 2,
        "type": "Normal",
        "eventTime": "2026-03-01T10:20:30.123456Z",
        "series": {"count": 3, "lastObservedTime": "2026-03-01T10:20:35.000001Z"},
        "reportingComponent": "scheduler",
        "reportingInstance": "sched-1",
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(),
        "immutable": True,
        "data": {"config.yaml": "a: 1\n", "empty": ""},
        "binaryData": {"blob": base64.b64encode(bytes(range(256))).decode()},
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta(),
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": base64.b64encode(b"\x00\xff" * 100).decode(), "empty": ""},
        "stringData": {"plain": "text"},
    },
    {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": meta(),
        "secrets": [{"name": "tok"}],
        "imagePullSecrets": [{"name": "reg"}],
        "automountServiceAccountToken": False,
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(),
        "spec": {
            "type": "ClusterIP",
            "selector": {"app": "demo"},
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "ipFamilies": ["IPv4"],
            "ports": [
                {"name": "http", "protocol": "TCP", "port": 80, "targetPort": "http"},
                {"name": "m", "protocol": "TCP", "port": 9090, "targetPort": 9091},
            ],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": meta(name="trainer"),
        "deleteOptions": {
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "u"},
            "propagationPolicy": "Foreground",
            "dryRun": ["All"],
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta(namespace=None),
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": [1]}}}],
            "extendedResourceName": "example.com/gpu",
        },
    },
    RESOURCE_CLAIM,
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": meta(),
        "spec": {"metadata": {"labels": {"x": "y"}}, "spec": copy.deepcopy(RESOURCE_CLAIM["spec"])},
    },
    RESOURCE_SLICE,
    {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": meta(namespace=None),
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {
                "key": "example.com/maint",
                "value": "now",
                "effect": "NoExecute",
                "timeAdded": "2026-03-01T12:00:00Z",
            },
        },
        "status": {
            "conditions": [
                {
                    "type": "EvictionInProgress",
                    "status": "False",
                    "lastTransitionTime": "2026-03-01T12:00:01Z",
                    "reason": "Completed",
                    "message": "done",
                }
            ]
        },
    },
    {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": meta(namespace="kube-node-lease", name="node-1"),
        "spec": {
            "holderIdentity": "node-1",
            "leaseDurationSeconds": 40,
            "renewTime": "2026-03-01T10:20:30.654321Z",
            "acquireTime": "2026-03-01T10:00:00.000000Z",
            "leaseTransitions": 0,
        },
    },
    {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": meta(name="trainer.2"),
        "eventTime": "2026-03-01T10:20:30.500000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-1",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "ns1", "name": "trainer", "uid": "u"},
        "note": "Successfully assigned",
        "type": "Normal",
        "series": {"count": 2, "lastObservedTime": "2026-03-01T10:20:31.000000Z"},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(),
        "spec": {
            "replicas": 0,
            "selector": {
                "matchLabels": {"app": "demo"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
            },
            "template": copy.deepcopy({"metadata": {"labels": {"app": "demo"}}, "spec": POD["spec"]}),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "paused": True,
        },
        "status": {
            "observedGeneration": 3,
            "replicas": 2,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": "2026-03-01T10:20:30Z",
                    "lastTransitionTime": "2026-03-01T10:20:30Z",
                    "reason": "MinimumReplicasAvailable",
                    "message": "ok",
                }
            ],
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(),
        "spec": {
            "replicas": 2,
            "minReadySeconds": 5,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
        "status": {"replicas": 2, "readyReplicas": 1, "fullyLabeledReplicas": 2},
    },
    {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": meta(name="web"),
        "spec": {"replicas": 5},
        "status": {"replicas": 3, "selector": "app=web"},
    },
    {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 30,
        "propagationPolicy": "Background",
        "orphanDependents": False,
        "preconditions": {"uid": "u", "resourceVersion": "7"},
        "dryRun": ["All"],
        "ignoreStoreReadErrorWithClusterBreakingPotential": True,
    },
    {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Orphan"},
]

# the cluster kinds around pods (priority, budgets, storage, endpoints, networking)
OBJECTS += [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": meta(namespace=None),
        "value": 1000,
        "description": "d",
        "preemptionPolicy": "Never",
    },
    {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "Workload",
        "metadata": meta(),
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
            "podGroupTemplates": [
                {
                    "name": "workers",
                    "schedulingPolicy": {"gang": {"minCount": 4}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                    "priorityClassName": "high",
                    "priority": 1000,
                    "disruptionMode": "PodGroup",
                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
                },
                {"name": "driver", "schedulingPolicy": {"basic": {}}},
            ],
        },
    },
    {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": meta(),
        "spec": {
            "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "workers"}},
            "schedulingPolicy": {"gang": {"minCount": 4}},
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}],
        },
        "status": {
            "conditions": [
                {
                    "type": "PodGroupScheduled",
                    "status": "False",
                    "observedGeneration": 1,
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "reason": "Unschedulable",
                    "message": "pod group is unschedulable",
                }
            ],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "shared"}],
        },
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(),
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "a"}}},
        "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2},
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta(),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "standard",
        },
        "status": {"phase": "Pending"},
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta(namespace=None),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/x"},
            "persistentVolumeReclaimPolicy": "Delete",
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(),
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}]}],
    },
    {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": meta(),
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]},
    },
    {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": meta(),
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta(namespace=None),
        "provisioner": "example.com/p",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": meta(namespace=None),
        "spec": {"attachRequired": True},
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": meta(namespace=None),
        "spec": {"drivers": [{"name": "d", "nodeID": "n", "topologyKeys": ["zone"]}]},
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": meta(namespace=None),
        "spec": {"attacher": "d", "nodeName": "n", "source": {"persistentVolumeName": "pv"}},
    },
    {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta(),
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}],
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta(),
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": meta(namespace=None),
        "spec": {"controller": "example.com/c"},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta(),
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    },
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": meta(namespace=None), "handler": "runc"},
]

# the APIs every kind cluster serves beyond workloads
OBJECTS += [
    {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta(),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60, "tolerance": "50m"}},
        },
    },
    {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta(),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50,
        },
    },
    {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": meta(namespace=None),
        "spec": {
            "request": "LS0tLS1CRUdJTg==",
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
            "expirationSeconds": 3600,
            "username": "alice",
            "groups": ["system:authenticated"],
            "extra": {"scopes": ["a", "b"]},
        },
    },
    {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": meta(namespace=None),
        "spec": {
            "priorityLevelConfiguration": {"name": "workload-low"},
            "matchingPrecedence": 1000,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                    "resourceRules": [
                        {
                            "verbs": ["*"],
                            "apiGroups": ["*"],
                            "resources": ["*"],
                            "clusterScope": True,
                            "namespaces": ["*"],
                        }
                    ],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                }
            ],
        },
    },
    {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": meta(namespace=None),
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 30,
                "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 6, "queueLengthLimit": 50}},
            },
        },
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": meta(),
        "storageClassName": "standard",
        "capacity": "10Gi",
        "maximumVolumeSize": "1Gi",
        "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttributesClass",
        "metadata": meta(namespace=None),
        "driverName": "csi.example.com",
        "parameters": {"iops": "3000"},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": meta(namespace=None),
        "spec": {"cidrs": ["10.96.0.0/16"]},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": meta(namespace=None),
        "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "web"}},
    },
]


def is_zero(value: object) -> bool:
    if isinstance(value, dict):
        return all(is_zero(v) for v in value.values())
    return value in (None, "", 0, False) or value == []


def assert_contains(expected: object, actual: object, path: str = "") -> None:
    """Every value of ``expected`` is in ``actual``; what ``actual`` adds is a Go zero value."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        for k, v in expected.items():
            assert k in actual, f"{path}.{k} lost"
            assert_contains(v, actual[k], f"{path}.{k}")
        for k in set(actual) - set(expected):
            assert is_zero(actual[k]), f"{path}.{k} = {actual[k]!r} appeared"
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_contains(e, a, f"{path}[{i}]")
    else:
        assert actual == expected and type(actual) is type(expected), f"{path}: {actual!r}"


# workloads and RBAC (kubectl create job|cronjob|clusterrole|rolebinding send protobuf)
_TPL = {
    "metadata": {"labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"},
}
OBJECTS += [
    {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta(),
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": copy.deepcopy(_TPL),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        },
        "status": {"currentNumberScheduled": 1, "numberMisscheduled": 0, "desiredNumberScheduled": 1, "numberReady": 1},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta(),
        "spec": {
            "replicas": 2,
            "serviceName": "s",
            "selector": {"matchLabels": {"a": "b"}},
            "template": copy.deepcopy(_TPL),
            "podManagementPolicy": "Parallel",
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": meta(),
        "revision": 2,
        "data": {"spec": {"template": {"$patch": "replace"}}},
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(),
        "spec": {
            "completions": 3,
            "parallelism": 2,
            "backoffLimit": 4,
            "completionMode": "Indexed",
            "template": copy.deepcopy(_TPL),
        },
        "status": {"succeeded": 1, "completedIndexes": "0", "uncountedTerminatedPods": {}},
    },
    {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": meta(),
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"template": copy.deepcopy(_TPL)}},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": meta(),
        "spec": {"replicas": 2, "selector": {"a": "b"}, "template": copy.deepcopy(_TPL)},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta(),
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta(namespace=None),
        "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta(),
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(namespace=None),
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns1"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
    },
    {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": meta(namespace=None),
        "spec": {"resourceAttributes": {"namespace": "ns1", "verb": "create", "resource": "pods"}},
    },
    {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": meta(namespace=None),
        "spec": {
            "user": "alice",
            "groups": ["devs"],
            "extra": {"k": ["a", "b"]},
            "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
        },
    },
    {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview",
        "metadata": meta(),
        "spec": {"user": "bob", "resourceAttributes": {"namespace": "ns1", "verb": "get", "resource": "pods"}},
    },
    {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "metadata": meta(namespace=None),
        "spec": {"namespace": "ns1"},
    },
    {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
        "metadata": meta(namespace=None),
        "status": {"userInfo": {"username": "alice", "groups": ["devs"], "extra": {"node": ["n1"]}}},
    },
    {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": meta(),
        "spec": {
            "audiences": ["a"],
            "expirationSeconds": 3600,
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "u"},
        },
        "status": {"token": "t.o.k", "expirationTimestamp": "2026-01-01T00:00:00Z"},
    },
    {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "metadata": meta(namespace=None),
        "spec": {"token": "t.o.k", "audiences": ["a"]},
        "status": {
            "authenticated": True,
            "user": {
                "username": "system:serviceaccount:ns1:sa",
                "uid": "u",
                "groups": ["system:serviceaccounts"],
                "extra": {"authentication.kubernetes.io/pod-name": ["p"]},
            },
            "audiences": ["a"],
        },
    },
]

OBJECTS.append(
    {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": meta(namespace=None),
        "spec": {"driver": "gpu.example.com", "poolName": "node-1", "limit": 10},
        "status": {
            "poolCount": 2,
            "pools": [
                {
                    "driver": "gpu.example.com",
                    "poolName": "node-1",
                    "nodeName": "node-1",
                    "generation": 3,
                    "resourceSliceCount": 1,
                    "totalDevices": 8,
                    "allocatedDevices": 2,
                    "availableDevices": 6,
                    "unavailableDevices": 0,
                },
                {"driver": "gpu.example.com", "poolName": "node-2", "generation": 1, "validationError": "incomplete"},
            ],
            "conditions": [
                {
                    "type": "Complete",
                    "status": "True",
                    "lastTransitionTime": "2026-03-01T12:00:00Z",
                    "reason": "CalculationComplete",
                    "message": "Calculated status for 2 pools (1 incomplete)",
                }
            ],
        },
    }
)
# the same resource.k8s.io objects at the older versions mockkube serves (v1beta1's basic wrapper)
OBJECTS += [
    dra_conversion.convert(o, f"resource.k8s.io/{version}")
    for version in ("v1beta2", "v1beta1")
    for o in list(OBJECTS)
    if o.get("apiVersion") == "resource.k8s.io/v1"
]


@pytest.mark.parametrize("obj", OBJECTS, ids=[f"{o['apiVersion']}/{o['kind']}" for o in OBJECTS])
def test_round_trip(obj: dict) -> None:
    body = encode(obj)
    assert body.startswith(b"k8s\x00")
    got = decode(body)
    assert_contains(obj, got)
    assert list(got)[:2] == ["apiVersion", "kind"]
    # the decoded form is canonical: a fixed point of encode/decode, with identical bytes
    assert encode(got) == body
    assert decode(encode(got)) == got


def test_every_kind_is_exercised() -> None:
    covered = {(o["apiVersion"], o["kind"]) for o in OBJECTS}
    assert covered == set(KINDS)


def test_resource_slice_details() -> None:
    spec = decode(encode(RESOURCE_SLICE))["spec"]
    dev = spec["devices"][0]
    assert dev["attributes"] == {
        "model": {"string": "H100"},
        "index": {"int": 0},
        "mig": {"bool": False},
        "negative": {"int": -7},
        "driverVersion": {"version": "550.54.15"},
    }
    assert dev["capacity"]["bandwidth"]["requestPolicy"]["validRange"] == {"min": "1G", "max": "100G", "step": "1G"}
    assert dev["capacity"]["memory"] == {"value": "80Gi"}
    assert dev["nodeAllocatableResourceMappings"] == {
        "cpu": {"capacityKey": "cores", "allocationMultiplier": "2"},
        "example.com/gpu": {},
    }
    assert dev["taints"][0]["timeAdded"] == "2026-03-01T11:00:00Z"
    # pointer bool false survives; omitempty zero fields of a plain struct do not appear
    assert spec["devices"][1] == {"name": "gpu-1", "allNodes": False}
    assert spec["pool"] == {"name": "node-1", "generation": 2, "resourceSliceCount": 1}


def test_v1beta1_resource_slice_basic_device() -> None:
    b1 = dra_conversion.convert(RESOURCE_SLICE, "resource.k8s.io/v1beta1")
    spec = decode(encode(b1))["spec"]
    assert spec["devices"][0]["basic"]["attributes"]["model"] == {"string": "H100"}
    assert spec["devices"][1] == {"name": "gpu-1", "basic": {"allNodes": False}}


def test_pod_details() -> None:
    pod = decode(encode(POD))
    c = pod["spec"]["containers"][0]
    assert c["resources"]["limits"] == {"cpu": "2", "example.com/gpu": "1", "memory": "4Gi"}
    assert c["resources"]["claims"] == [{"name": "gpu", "request": "big"}, {"name": "nic"}]
    assert c["readinessProbe"]["httpGet"]["port"] == "http"  # inlined ProbeHandler
    assert c["livenessProbe"]["tcpSocket"]["port"] == 8080
    assert pod["spec"]["volumes"][0]["configMap"] == {"name": "cm1", "defaultMode": 420}
    assert pod["spec"]["priority"] == -5
    assert pod["spec"]["resourceClaims"][1] == {"name": "nic", "resourceClaimName": "shared-nic"}
    # non-omitempty Go fields carry their zero value, as client-go's JSON does
    init = pod["spec"]["initContainers"][0]
    assert init == {"name": "init", "image": "busybox", "resources": {}}
    assert pod["status"]["containerStatuses"][0]["imageID"] == ""
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert pod["metadata"]["deletionTimestamp"] == "2026-03-02T00:00:00Z"


def test_claim_raw_extension_and_inline_config() -> None:
    claim = decode(encode(RESOURCE_CLAIM))
    cfg = claim["spec"]["devices"]["config"][0]
    assert cfg == RESOURCE_CLAIM["spec"]["devices"]["config"][0]
    assert claim["status"]["devices"][0]["data"] == {"pciAddress": "0000:3b:00.0"}
    assert claim["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": "10G"}


def test_managed_fields_raw_json() -> None:
    obj = decode(encode(OBJECTS[0]))
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:app": {}}}}
    assert obj["metadata"]["annotations"]["note"] == "ünïcode ✓"


# ----------------------------------------------------------------------------- Go JSON shape

OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def test_zero_creation_timestamp_is_omitted_and_empty_strings_dropped() -> None:
    # Go marshals name, generateName, namespace ... as "" and creationTimestamp as an empty
    # message; v1.36 JSON tags are omitempty/omitzero, so none of it appears.
    raw = bytes.fromhex("0a016112001a0022002a00320038004200")
    assert decode_message(OBJECT_META, raw) == {"name": "a"}


def test_times() -> None:
    def ts(seconds: int, nanos: int) -> bytes:
        return protobuf._tag_varint(1, seconds) + protobuf._tag_varint(2, nanos)

    lease_spec = "k8s.io.api.coordination.v1.LeaseSpec"
    body = protobuf._tag_bytes(3, ts(1772360430, 123456789)) + protobuf._tag_bytes(4, ts(0, 0))
    assert decode_message(lease_spec, body) == {
        "acquireTime": "2026-03-01T10:20:30.123456Z",
        "renewTime": "1970-01-01T00:00:00.000000Z",
    }
    meta_body = protobuf._tag_bytes(9, ts(1772360430, 999))
    assert decode_message(OBJECT_META, meta_body) == {"deletionTimestamp": "2026-03-01T10:20:30Z"}
    # offsets are normalised to UTC; Time drops sub-seconds (as upstream), MicroTime keeps µs
    obj = {"holderIdentity": "x", "renewTime": "2026-03-01T12:20:30.1234567+02:00"}
    assert decode_message(lease_spec, encode_message(lease_spec, obj))["renewTime"] == "2026-03-01T10:20:30.123456Z"
    assert decode_message(
        OBJECT_META, encode_message(OBJECT_META, {"creationTimestamp": "2026-03-01T10:20:30.9Z"})
    ) == {"creationTimestamp": "2026-03-01T10:20:30Z"}


def test_go_zero_time_is_an_empty_message() -> None:
    zero = encode_message(OBJECT_META, {"deletionTimestamp": "0001-01-01T00:00:00Z"})
    assert zero == bytes.fromhex("0a0012001a0022002a003200380042004a00")
    assert decode_message(OBJECT_META, zero) == {"deletionTimestamp": None}


def test_decode_message_raises_bad_request() -> None:
    with pytest.raises(APIError) as e:
        decode_message(OBJECT_META, b"\x0a\x05ab")
    assert e.value.code == 400


def test_non_pointer_time_zero_is_null_like_go() -> None:
    event = decode(encode({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}))
    assert event["eventTime"] is None
    assert event["deprecatedFirstTimestamp"] is None
    assert "series" not in event


def test_int_or_string_and_quantity() -> None:
    svc = decode(encode(OBJECTS[8]))
    assert [p["targetPort"] for p in svc["spec"]["ports"]] == ["http", 9091]
    dep = decode(encode(OBJECTS[17]))
    assert dep["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": 1}
    assert dep["spec"]["replicas"] == 0  # *int32 zero is kept


def test_secret_binary_data() -> None:
    data = bytes(range(256)) * 3
    obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"bin": base64.b64encode(data).decode(), "e": ""},
    }
    body = encode(obj)
    assert data in body  # raw bytes on the wire, not base64
    got = decode(body)
    assert base64.b64decode(got["data"]["bin"]) == data
    assert got["data"]["e"] == ""


def test_unknown_fields_are_skipped() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    body = bytearray(encode(cm))
    extra = (
        protobuf._tag_varint(900, 5)
        + protobuf._tag_bytes(901, b"xyz")
        + protobuf._enc_varint(909 << 3 | 1)
        + b"\x00" * 8  # fixed64
        + protobuf._enc_varint(910 << 3 | 5)
        + b"\x00" * 4  # fixed32
        + protobuf._enc_varint(911 << 3 | 3)
        + protobuf._tag_varint(1, 1)  # a group
        + protobuf._enc_varint(911 << 3 | 4)
    )
    raw = encode_message("k8s.io.api.core.v1.ConfigMap", cm) + extra
    env = (
        b"k8s\x00"
        + protobuf._tag_bytes(1, protobuf._tag_bytes(1, b"v1") + protobuf._tag_bytes(2, b"ConfigMap"))
        + protobuf._tag_bytes(2, raw)
        + protobuf._tag_varint(77, 1)
    )
    assert decode(env) == cm
    assert decode(bytes(body)) == cm


def test_packed_repeated_scalars() -> None:
    # supplementalGroups (field 4 of PodSecurityContext) as one packed run
    packed = protobuf._tag_bytes(4, protobuf._enc_varint(5) + protobuf._enc_varint(2**40))
    got = decode_message("k8s.io.api.core.v1.PodSecurityContext", packed)
    assert got["supplementalGroups"] == [5, 2**40]


def test_negative_int32_uses_ten_byte_varint_like_go() -> None:
    raw = encode_message("k8s.io.api.core.v1.PodSpec", {"priority": -1})
    assert protobuf._tag_varint(25, -1) in raw
    assert len(protobuf._enc_varint(-1)) == 10
    assert decode_message("k8s.io.api.core.v1.PodSpec", raw)["priority"] == -1


@pytest.mark.parametrize("api_version", ["meta.k8s.io/v1", "v1", "apps/v1", "resource.k8s.io/v1"])
def test_delete_options_any_group(api_version: str) -> None:
    opts = {"apiVersion": api_version, "kind": "DeleteOptions", "propagationPolicy": "Foreground"}
    assert decode(encode(opts)) == opts


# ----------------------------------------------------------------------------- malformed input


def envelope(raw: bytes, api_version: bytes = b"v1", kind: bytes = b"ConfigMap") -> bytes:
    tm = protobuf._tag_bytes(1, api_version) + protobuf._tag_bytes(2, kind)
    return b"k8s\x00" + protobuf._tag_bytes(1, tm) + protobuf._tag_bytes(2, raw)


BAD = {
    "no magic": b'{"kind":"ConfigMap"}',
    "empty": b"",
    "truncated envelope": encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})[:-9],
    "unknown kind": envelope(b"", kind=b"Widget"),
    "no kind": envelope(b"", kind=b""),
    "wrong wire type for string": envelope(protobuf._tag_bytes(1, protobuf._tag_varint(1, 3))),
    "varint overflow": envelope(b"\x38" + b"\xff" * 11),
    "bad utf-8": envelope(protobuf._tag_bytes(1, protobuf._tag_bytes(1, b"\xff\xfe"))),
    "length past end": envelope(b"\x0a\x7f\x01"),
    "illegal wire type": envelope(b"\x0f"),
    "field zero": envelope(b"\x00\x01"),
    "raw extension not json": envelope(
        # spec(2) > config(2) > inlined DeviceConfiguration(1) > opaque(1) > parameters(2) > raw
        protobuf._tag_bytes(
            2,
            protobuf._tag_bytes(
                2,
                protobuf._tag_bytes(
                    1, protobuf._tag_bytes(1, protobuf._tag_bytes(2, protobuf._tag_bytes(1, b"{nope")))
                ),
            ),
        ),
        api_version=b"resource.k8s.io/v1",
        kind=b"DeviceClass",
    ),
    "content encoding": b"k8s\x00"
    + protobuf._tag_bytes(1, protobuf._tag_bytes(1, b"v1") + protobuf._tag_bytes(2, b"ConfigMap"))
    + protobuf._tag_bytes(3, b"gzip"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_is_bad_request(name: str) -> None:
    with pytest.raises(APIError) as e:
        decode(BAD[name])
    assert e.value.code == 400 and e.value.reason == "BadRequest"


def test_fuzz_only_bad_request() -> None:
    rng = random.Random(1234)
    seeds = [fixture(p.name) for p in sorted(FIXTURES.glob("*.bin"))]
    seeds += [encode(o) for o in OBJECTS]
    for _ in range(3000):
        body = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            op = rng.randrange(3)
            i = rng.randrange(4, len(body)) if len(body) > 4 else 4
            if op == 0 and i < len(body):
                body[i] = rng.randrange(256)
            elif op == 1:
                del body[i : i + rng.randint(1, 8)]
            else:
                body[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        try:
            decode(bytes(body))
        except APIError as e:
            assert e.code == 400


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": 5}},
        {"apiVersion": "v1", "kind": "Secret", "data": {"k": "not base64!"}},
        {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": "nope"}},
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "spec": {"renewTime": "yesterday"}},
        {"apiVersion": "x/v1", "kind": "Nope"},
    ],
)
def test_encode_rejects_bad_objects(obj: dict) -> None:
    with pytest.raises(APIError):
        encode(obj)


# ----------------------------------------------------------------------------- durations, table


@pytest.mark.parametrize(
    "ns,text",
    [
        (0, "0s"),
        (1, "1ns"),
        (1500, "1.5µs"),
        (1_500_000, "1.5ms"),
        (1_000_000_000, "1s"),
        (90 * 10**9, "1m30s"),
        (3600 * 10**9, "1h0m0s"),
        (3723_500_000_000, "1h2m3.5s"),
        (-2 * 10**9, "-2s"),
    ],
)
def test_go_durations(ns: int, text: str) -> None:
    assert format_duration(ns) == text
    assert parse_duration(text) == ns


def test_table_shape() -> None:
    for name, fields in MESSAGES.items():
        for number, (json_name, label, typ, flags) in fields.items():
            assert number > 0 and label in ("", "r", "m") and set(flags) <= set("opiz")
            assert json_name or "i" in flags, (name, number)
    device = MESSAGES["k8s.io.api.resource.v1.Device"]
    assert device[13][:3] == (
        "nodeAllocatableResourceMappings",
        "m",
        "k8s.io.api.resource.v1.NodeAllocatableResourceMapping",
    )


MIRRORS = ("/work/.mirror/kubernetes+api/repo", "/work/.mirror/kubernetes+apimachinery/repo")


@pytest.mark.skipif(not all(os.path.isdir(p) for p in MIRRORS), reason="no upstream mirrors")
def test_generated_table_is_current() -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_proto_types.py"), *MIRRORS, "--ref", "v0.36.3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == (REPO / "mockkube" / "generated" / "proto_types.py").read_text()
