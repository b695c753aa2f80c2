"""One valid object per served kind (the starting point of the bad-input tests and the fuzzer)."""

from __future__ import annotations

import copy


def _csr_request() -> str:
    """A PKCS#10 request (base64 of its PEM), made once."""
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    req = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "seed")]))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(req.public_bytes(serialization.Encoding.PEM)).decode()


_TEMPLATE = {
    "metadata": {"labels": {"app": "seed"}},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "ports": [{"containerPort": 80}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ]
    },
}
_DEVICES = {
    "requests": [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.example.com",
                "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                "count": 1,
            },
        }
    ]
}

_SEED_WEBHOOK = {
    "name": "seed.webhooks.example.com",
    "sideEffects": "None",
    "admissionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://127.0.0.1:9/validate"},
    "failurePolicy": "Ignore",
    "timeoutSeconds": 1,
    "rules": [
        {"apiGroups": ["seed.example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}
    ],
}
SEEDS: dict[tuple[str, str], dict] = {
    ("", "Namespace"): {"metadata": {"name": "seed", "labels": {"a": "b"}}},
    ("", "Node"): {
        "metadata": {"name": "seed", "labels": {"kubernetes.io/hostname": "seed"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    },
    ("", "Pod"): {"metadata": {"name": "seed", "labels": {"app": "seed"}}, "spec": copy.deepcopy(_TEMPLATE["spec"])},
    ("", "Event"): {
        "metadata": {"name": "seed"},
        "involvedObject": {"kind": "Pod", "name": "seed", "namespace": "fuzz"},
        "reason": "Started",
        "message": "hello",
        "type": "Normal",
        "source": {"component": "test"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:00:00Z",
        "count": 1,
    },
    ("", "ConfigMap"): {"metadata": {"name": "seed", "annotations": {"x": "y"}}, "data": {"a": "b"}},
    ("", "Secret"): {"metadata": {"name": "seed"}, "type": "Opaque", "data": {"a": "Yg=="}},
    ("", "ServiceAccount"): {"metadata": {"name": "seed"}},
    ("", "Service"): {
        "metadata": {"name": "seed"},
        "spec": {"selector": {"app": "seed"}, "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
    },
    ("apps", "Deployment"): {
        "metadata": {"name": "seed"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "seed"}}, "template": copy.deepcopy(_TEMPLATE)},
    },
    ("apps", "ReplicaSet"): {
        "metadata": {"name": "seed"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "seed"}}, "template": copy.deepcopy(_TEMPLATE)},
    },
    ("apps", "DaemonSet"): {
        "metadata": {"name": "seed"},
        "spec": {"selector": {"matchLabels": {"app": "seed"}}, "template": copy.deepcopy(_TEMPLATE)},
    },
    ("apps", "StatefulSet"): {
        "metadata": {"name": "seed"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "seed"}}, "template": copy.deepcopy(_TEMPLATE)},
    },
    ("apps", "ControllerRevision"): {"metadata": {"name": "seed"}, "revision": 1, "data": {"spec": {}}},
    ("", "ReplicationController"): {
        "metadata": {"name": "seed"},
        "spec": {"replicas": 1, "selector": {"app": "seed"}, "template": copy.deepcopy(_TEMPLATE)},
    },
    ("batch", "Job"): {
        "metadata": {"name": "seed"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    },
    ("batch", "CronJob"): {
        "metadata": {"name": "seed"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
                }
            },
        },
    },
    ("coordination.k8s.io", "Lease"): {
        "metadata": {"name": "seed"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 40},
    },
    ("resource.k8s.io", "DeviceClass"): {
        "metadata": {"name": "seed"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    },
    ("resource.k8s.io", "ResourceClaim"): {"metadata": {"name": "seed"}, "spec": {"devices": copy.deepcopy(_DEVICES)}},
    ("resource.k8s.io", "ResourceClaimTemplate"): {
        "metadata": {"name": "seed"},
        "spec": {"spec": {"devices": copy.deepcopy(_DEVICES)}},
    },
    ("resource.k8s.io", "ResourceSlice"): {
        "metadata": {"name": "seed"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {"model": {"string": "a100"}},
                    "capacity": {"memory": {"value": "40Gi"}},
                }
            ],
        },
    },
    ("resource.k8s.io", "DeviceTaintRule"): {
        "metadata": {"name": "seed"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "k", "value": "v", "effect": "NoSchedule"},
        },
    },
    ("events.k8s.io", "Event"): {
        "metadata": {"name": "seed2"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "example.com/test",
        "reportingInstance": "i-1",
        "action": "Start",
        "reason": "Started",
        "type": "Normal",
        "note": "hello",
        "regarding": {"kind": "Pod", "name": "seed", "namespace": "fuzz"},
    },
    ("scheduling.k8s.io", "PriorityClass"): {"metadata": {"name": "seed"}, "value": 1000, "description": "seed"},
    ("scheduling.k8s.io", "Workload"): {
        "metadata": {"name": "seed"},
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "seed"},
            "podGroupTemplates": [
                {"name": "basic", "schedulingPolicy": {"basic": {}}},
                {"name": "gang", "schedulingPolicy": {"gang": {"minCount": 2}}},
            ],
        },
    },
    ("scheduling.k8s.io", "PodGroup"): {
        "metadata": {"name": "seed"},
        "spec": {
            "podGroupTemplateRef": {"workload": {"workloadName": "seed", "podGroupTemplateName": "gang"}},
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "seed"}],
        },
    },
    ("policy", "PodDisruptionBudget"): {
        "metadata": {"name": "seed"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "seed"}}},
    },
    ("", "PersistentVolumeClaim"): {
        "metadata": {"name": "seed"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    ("", "PersistentVolume"): {
        "metadata": {"name": "seed"},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/tmp/seed"}},
    },
    ("", "Endpoints"): {
        "metadata": {"name": "seed"},
        "subsets": [{"addresses": [{"ip": "10.244.0.5"}], "ports": [{"port": 80}]}],
    },
    ("", "LimitRange"): {
        "metadata": {"name": "seed"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "64"}}]},
    },
    ("", "PodTemplate"): {"metadata": {"name": "seed"}, "template": copy.deepcopy(_TEMPLATE)},
    ("storage.k8s.io", "StorageClass"): {"metadata": {"name": "seed"}, "provisioner": "example.com/seed"},
    ("storage.k8s.io", "CSIDriver"): {"metadata": {"name": "seed.example.com"}, "spec": {}},
    ("storage.k8s.io", "CSINode"): {"metadata": {"name": "seed"}, "spec": {"drivers": []}},
    ("storage.k8s.io", "VolumeAttachment"): {
        "metadata": {"name": "seed"},
        "spec": {"attacher": "seed.example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "seed"}},
    },
    ("discovery.k8s.io", "EndpointSlice"): {
        "metadata": {"name": "seed"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.0.5"]}],
        "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
    },
    ("networking.k8s.io", "Ingress"): {
        "metadata": {"name": "seed"},
        "spec": {"defaultBackend": {"service": {"name": "seed", "port": {"number": 80}}}},
    },
    ("networking.k8s.io", "IngressClass"): {"metadata": {"name": "seed"}, "spec": {"controller": "example.com/seed"}},
    ("networking.k8s.io", "NetworkPolicy"): {"metadata": {"name": "seed"}, "spec": {"podSelector": {}}},
    ("node.k8s.io", "RuntimeClass"): {"metadata": {"name": "seed"}, "handler": "runc"},
    ("apiregistration.k8s.io", "APIService"): {
        "metadata": {"name": "v1.seed.example.com"},
        "spec": {
            "group": "seed.example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
            "insecureSkipTLSVerify": True,
            "service": {"name": "seed", "namespace": "fuzz"},
        },
    },
    ("rbac.authorization.k8s.io", "Role"): {
        "metadata": {"name": "seed"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    },
    ("rbac.authorization.k8s.io", "ClusterRole"): {
        "metadata": {"name": "seed"},
        "rules": [
            {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["*"]},
            {"nonResourceURLs": ["/healthz"], "verbs": ["get"]},
        ],
    },
    ("rbac.authorization.k8s.io", "RoleBinding"): {
        "metadata": {"name": "seed"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "seed"},
        "subjects": [{"kind": "ServiceAccount", "name": "default"}, {"kind": "User", "name": "alice"}],
    },
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): {
        "metadata": {"name": "seed"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "seed"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "fuzz"}],
    },
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {
        "metadata": {"name": "seeds.crd.example.com"},
        "spec": {
            "group": "crd.example.com",
            "scope": "Namespaced",
            "names": {"plural": "seeds", "kind": "Seed"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                        }
                    },
                }
            ],
        },
    },
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): {
        "metadata": {"name": "seed"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["seed.example.com"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["widgets"],
                    }
                ]
            },
            "validations": [{"expression": "object.metadata.name != 'x'", "message": "no x"}],
        },
    },
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): {
        "metadata": {"name": "seed"},
        "spec": {"policyName": "seed", "validationActions": ["Deny"]},
    },
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): {
        "metadata": {"name": "seed"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["seed.example.com"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["widgets"],
                    }
                ]
            },
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {
                        "expression": "Object{metadata: Object.metadata{labels: {'seeded': 'yes'}}}"
                    },
                }
            ],
        },
    },
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): {
        "metadata": {"name": "seed"},
        "spec": {"policyName": "seed"},
    },
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): {
        "metadata": {"name": "seed"},
        "webhooks": [_SEED_WEBHOOK],
    },
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): {
        "metadata": {"name": "seed"},
        "webhooks": [_SEED_WEBHOOK],
    },
    ("autoscaling", "HorizontalPodAutoscaler"): {
        "metadata": {"name": "seed"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "seed"},
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    },
    ("certificates.k8s.io", "CertificateSigningRequest"): {
        "metadata": {"name": "seed"},
        "spec": {"request": _csr_request(), "signerName": "example.com/seed", "usages": ["client auth"]},
    },
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): {
        "metadata": {"name": "seed"},
        "spec": {
            "priorityLevelConfiguration": {"name": "seed"},
            "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": "alice"}}],
                    "resourceRules": [
                        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}
                    ],
                }
            ],
        },
    },
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): {
        "metadata": {"name": "seed"},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 10,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 50}},
            },
        },
    },
    ("storage.k8s.io", "CSIStorageCapacity"): {
        "metadata": {"name": "seed"},
        "storageClassName": "seed",
        "capacity": "10Gi",
        "nodeTopology": {"matchLabels": {"zone": "a"}},
    },
    ("storage.k8s.io", "VolumeAttributesClass"): {
        "metadata": {"name": "seed"},
        "driverName": "seed.example.com",
        "parameters": {"iops": "3000"},
    },
    ("networking.k8s.io", "ServiceCIDR"): {"metadata": {"name": "seed"}, "spec": {"cidrs": ["10.250.0.0/24"]}},
    ("networking.k8s.io", "IPAddress"): {
        "metadata": {"name": "10.250.0.200"},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "fuzz", "name": "seed"}},
    },
    ("resource.k8s.io", "ResourcePoolStatusRequest"): {
        "metadata": {"name": "seed"},
        "spec": {"driver": "gpu.example.com"},
    },
}
# autoscaling/v1 serves the same objects as v2 (one stored version): its own seed and name
_V1_SEEDS = {
    ("autoscaling", "v1", "HorizontalPodAutoscaler"): {
        "metadata": {"name": "seed-v1"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "seed"},
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50,
        },
    }
}


def _older_dra_seed(rt) -> dict | None:
    """resource.k8s.io v1beta1/v1beta2 serve the v1 objects (one stored version): the v1 seed
    converted, under its own name."""
    if rt.group != "resource.k8s.io" or rt.version not in ("v1beta1", "v1beta2") or (rt.group, rt.kind) not in SEEDS:
        return None
    from mockkube.apiserver.resources import dra_conversion

    v1 = {**copy.deepcopy(SEEDS[(rt.group, rt.kind)]), "apiVersion": "resource.k8s.io/v1", "kind": rt.kind}
    out = dra_conversion.convert(v1, rt.api_version)
    out["metadata"]["name"] = f"seed-{rt.version}"
    return out


def resource_gates() -> dict[str, bool]:
    """The feature gates every registered resource needs: a server that serves them all."""
    from mockkube.apiserver.resources import registry

    return {rt.feature_gate: True for rt in registry().all() if rt.feature_gate}


def seed(rt, name: str | None = None, namespace: str = "fuzz") -> dict:
    """A valid body for ``rt`` (a minimal one for kinds without a seed)."""
    own = _V1_SEEDS.get((rt.group, rt.version, rt.kind)) or _older_dra_seed(rt)
    obj = copy.deepcopy(own or SEEDS.get((rt.group, rt.kind), {"metadata": {"name": "seed"}}))
    obj["apiVersion"] = rt.api_version
    obj["kind"] = rt.kind
    if name:
        obj["metadata"]["name"] = name
    if rt.namespaced:
        obj["metadata"]["namespace"] = namespace
    return obj


def path(rt, namespace: str = "fuzz", name: str = "") -> str:
    base = "/api/v1" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    if rt.namespaced:
        base += f"/namespaces/{namespace}"
    base += f"/{rt.plural}"
    return base + (f"/{name}" if name else "")
