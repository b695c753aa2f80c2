"""The cluster kinds around pods over HTTP: PriorityClass rules, LimitRanger admission,
the eviction subresource against a budget, validation of stored-only kinds, discovery."""

from __future__ import annotations

PC = "/apis/scheduling.k8s.io/v1/priorityclasses"
PODS = "/api/v1/namespaces/default/pods"


def _pod(name: str, **spec) -> dict:
    return {
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


async def test_priority_classes(api):
    st, body, _ = await api.get(f"{PC}/system-node-critical")
    assert st == 200 and body["value"] == 2000001000 and body["preemptionPolicy"] == "PreemptLowerPriority"
    st, body, _ = await api.delete(f"{PC}/system-cluster-critical")
    assert (st, body["message"]) == (
        403,
        'priorityclasses.scheduling.k8s.io "system-cluster-critical" is '
        "forbidden: this is a system priority class and cannot be deleted",
    )
    st, body, _ = await api.post(PC, {"metadata": {"name": "huge"}, "value": 1000000001})
    assert st == 422 and body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "field": "value",
            "message": "Forbidden: maximum allowed value of a user defined priority is 1000000000",
        }
    ]
    st, body, _ = await api.post(PC, {"metadata": {"name": "system-mine"}, "value": 1})
    assert st == 422 and "priority class names with 'system-' prefix are reserved" in body["message"]
    assert (await api.post(PC, {"metadata": {"name": "d1"}, "value": 5, "globalDefault": True}))[0] == 201
    st, body, _ = await api.post(PC, {"metadata": {"name": "d2"}, "value": 6, "globalDefault": True})
    assert (st, body["message"]) == (
        403,
        'priorityclasses.scheduling.k8s.io "d2" is forbidden: PriorityClass d1 '
        "is already marked as default. Only one default can exist",
    )
    st, pod, _ = await api.post(PODS, _pod("defaulted"))
    assert (pod["spec"]["priorityClassName"], pod["spec"]["priority"]) == ("d1", 5)
    st, body, _ = await api.patch(f"{PC}/d1", {"value": 7})
    assert st == 422 and "value: Forbidden: may not be changed in an update." in body["message"]
    st, body, _ = await api.get("/apis/scheduling.k8s.io/v1")
    assert [(r["name"], r.get("shortNames")) for r in body["resources"]] == [("priorityclasses", ["pc"])]


async def test_limit_range_defaults_and_limits(api):
    lr = {
        "metadata": {"name": "lr"},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "default": {"cpu": "500m"},
                    "defaultRequest": {"cpu": "100m"},
                    "max": {"memory": "1Gi"},
                }
            ]
        },
    }
    assert (await api.post("/api/v1/namespaces/default/limitranges", lr))[0] == 201
    st, body, _ = await api.post(PODS, _pod("nolimit"))
    assert (st, body["message"]) == (
        403,
        'pods "nolimit" is forbidden: maximum memory usage per Container is 1Gi.  No limit is specified',
    )
    p = _pod("p")
    p["spec"]["containers"][0]["resources"] = {"limits": {"memory": "512Mi"}}
    st, pod, _ = await api.post(PODS, p)
    assert st == 201
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"memory": "512Mi", "cpu": "500m"},
        "requests": {"cpu": "100m", "memory": "512Mi"},
    }
    assert (
        pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"]
        == "LimitRanger plugin set: cpu limit for container c; cpu request for container c"
    )
    big = _pod("big")
    big["spec"]["containers"][0]["resources"] = {"limits": {"memory": "2Gi"}}
    st, body, _ = await api.post(PODS, big)
    assert (st, body["message"]) == (
        403,
        'pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi',
    )


async def test_eviction_respects_the_budget(api):
    pdb = {"metadata": {"name": "b"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}}
    st, pdb, _ = await api.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)
    assert st == 201 and pdb["status"]["disruptionsAllowed"] == 0
    st, pod, _ = await api.post(PODS, _pod("v", nodeName="n1"))
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert (await api.put(f"{PODS}/v/status", pod))[0] == 200
    ev = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "v"}}
    # the budget has not been processed yet (no controller in this server): retry later
    st, body, headers = await api.post(f"{PODS}/v/eviction", ev)
    assert (st, body["reason"], body["message"]) == (
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert body["details"] == {
        "causes": [
            {"reason": "DisruptionBudget", "message": "The disruption budget b is still being processed by the server."}
        ],
        "retryAfterSeconds": 10,
    }
    assert headers["Retry-After"] == "10"
    pdb_path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b"
    _, cur, _ = await api.get(pdb_path)
    cur["status"] = {
        "observedGeneration": 1,
        "disruptionsAllowed": 0,
        "currentHealthy": 1,
        "desiredHealthy": 1,
        "expectedPods": 1,
    }
    assert (await api.put(f"{pdb_path}/status", cur))[0] == 200
    st, body, _ = await api.post(f"{PODS}/v/eviction", ev)
    assert (
        st == 429
        and body["details"]["causes"][0]["message"]
        == "The disruption budget b needs 1 healthy pods and has 1 currently"
    )
    _, cur, _ = await api.get(pdb_path)
    cur["status"]["disruptionsAllowed"] = 1
    await api.put(f"{pdb_path}/status", cur)
    st, body, _ = await api.post(f"{PODS}/v/eviction", ev)
    assert (st, body["status"]) == (201, "Success")
    _, pod, _ = await api.get(f"{PODS}/v")
    assert pod["metadata"]["deletionTimestamp"]
    cond = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"][0]
    assert (cond["reason"], cond["message"]) == ("EvictionByEvictionAPI", "Eviction API: evicting")
    _, cur, _ = await api.get(pdb_path)
    assert cur["status"]["disruptionsAllowed"] == 0 and "v" in cur["status"]["disruptedPods"]


async def test_stored_kinds_validate(api):
    st, body, _ = await api.post(
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses", {"metadata": {"name": "i"}, "spec": {}}
    )
    assert st == 422 and "spec: Invalid value" in body["message"]
    st, body, _ = await api.post(
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {"metadata": {"name": "both"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}},
    )
    assert st == 422 and "minAvailable and maxUnavailable cannot be both set" in body["message"]
    st, body, _ = await api.post(
        "/api/v1/namespaces/default/persistentvolumeclaims", {"metadata": {"name": "c"}, "spec": {}}
    )
    assert st == 422 and [c["field"] for c in body["details"]["causes"]] == [
        "spec.accessModes",
        "spec.resources[storage]",
    ]
    st, claim, _ = await api.post(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {
            "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    )
    assert st == 201 and claim["spec"]["storageClassName"] == "standard"
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    st, body, _ = await api.post(
        "/apis/node.k8s.io/v1/runtimeclasses", {"metadata": {"name": "r"}, "handler": "Bad_Handler"}
    )
    assert st == 422 and body["details"]["causes"][0]["field"] == "handler"
    st, body, _ = await api.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")
    assert st == 200 and body["spec"]["group"] == "apps" and body["status"]["conditions"][0]["reason"] == "Local"


async def test_conflict_status_of_a_core_resource_omits_the_empty_group(api):
    """StatusDetails.group is omitempty upstream; the Python client's e2e suite compares it."""
    st, cm, _ = await api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})
    cm["metadata"]["resourceVersion"] = "1"
    st, body, _ = await api.put("/api/v1/namespaces/default/configmaps/x", cm)
    assert st == 409 and body["details"] == {"name": "x", "kind": "configmaps"}  # group omitempty


async def test_admission_names_a_generated_pod_by_its_generate_name(api):
    pod = _pod("")
    pod["metadata"] = {"generateName": "web-"}
    pod["spec"]["priorityClassName"] = "nope"
    st, body, _ = await api.post(PODS, pod)
    assert (st, body["message"]) == (403, 'pods "web-" is forbidden: no PriorityClass with name nope was found')
