"""pods/resize over HTTP: an in-place resize changes only container cpu/memory, and
KEP-5517 alpha refuses to resize a pod whose DRA claims take node-allocatable resources
(``status.nodeAllocatableResourceClaimStatuses``)."""

from __future__ import annotations

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "app", "image": "busybox", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}
            ]
        },
    }


RESIZE = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1500m"}}}]}}
SMP = "application/strategic-merge-patch+json"


async def test_resize_changes_container_cpu_and_nothing_else(api):
    st, _, _ = await api.post(PODS, pod("r"))
    assert st == 201
    st, got, _ = await api.get(f"{PODS}/r/resize")
    assert st == 200 and got["kind"] == "Pod"
    body = {"metadata": {"labels": {"ignored": "yes"}}, **RESIZE}
    st, out, _ = await api.patch(f"{PODS}/r/resize", body, ct=SMP)
    assert st == 200, out
    c = out["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "1500m"}, "limits": {"cpu": "2"}}
    assert "labels" not in out["metadata"]  # only resize fields go through this endpoint
    st, out, _ = await api.patch(
        f"{PODS}/r/resize",
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}]}},
        ct=SMP,
    )
    assert st == 422
    assert out["message"] == 'Pod "r" is invalid: spec: Forbidden: only cpu and memory resources are mutable'


async def test_resize_of_a_pod_with_node_allocatable_claim_statuses_is_forbidden(api):
    await api.post(PODS, pod("dra"))
    st, _, _ = await api.patch(
        f"{PODS}/dra/status",
        {
            "status": {
                "nodeAllocatableResourceClaimStatuses": [
                    {"resourceClaimName": "cpus", "containers": ["app"], "resources": {"cpu": "4"}}
                ]
            }
        },
    )
    assert st == 200
    st, out, _ = await api.patch(f"{PODS}/dra/resize", RESIZE, ct=SMP)
    assert st == 422
    assert out["reason"] == "Invalid"
    assert out["message"] == (
        'Pod "dra" is invalid: spec: Forbidden: pods with node allocatable resource claims cannot be resized'
    )
    assert out["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "field": "spec",
            "message": "Forbidden: pods with node allocatable resource claims cannot be resized",
        }
    ]
    st, cur, _ = await api.get(f"{PODS}/dra")
    assert cur["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
