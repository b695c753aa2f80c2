"""More admission webhook cases over HTTP against a real HTTPS webhook server
(mockkube.testing.webhookserver): upstream defaults and validation, the review sent,
reinvocation, failure wording, dryRun, custom resources and their status subresource."""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest

from mockkube.testing.webhookserver import WebhookServer, review_response

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
CM = "/api/v1/namespaces/default/configmaps"


def _hook(name: str, url: str, ca: str, **extra) -> dict:
    h = {
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "rules": [
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}
        ],
    }
    h.update(extra)
    return h


def _config(kind: str, *hooks: dict, name: str = "hooks") -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(hooks),
    }


def _cm(name: str, **data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def deny_bad(path: str, review: dict) -> dict:
    obj = review["request"]["object"] or {}
    if (obj.get("data") or {}).get("bad"):
        return review_response(
            review, False, status={"code": 403, "message": "bad data is not allowed"}, warnings=["looked at it"]
        )
    return review_response(review, True, warnings=["looked at it"])


async def test_configuration_defaults_and_validation(api):
    with WebhookServer(deny_bad) as srv:
        st, obj, _ = await api.post(
            VWC, _config("ValidatingWebhookConfiguration", _hook("deny.example.com", srv.url(), srv.ca_bundle))
        )
        assert st == 201, obj
        wh = obj["webhooks"][0]
        assert (
            wh["failurePolicy"],
            wh["matchPolicy"],
            wh["timeoutSeconds"],
            wh["namespaceSelector"],
            wh["objectSelector"],
            wh["rules"][0]["scope"],
        ) == ("Fail", "Equivalent", 10, {}, {}, "*")
        assert obj["metadata"]["generation"] == 1
        st, upd, _ = await api.patch(VWC + "/hooks", {"metadata": {"labels": {"a": "b"}}})
        assert upd["metadata"]["generation"] == 1
        obj = upd
        obj["webhooks"][0]["timeoutSeconds"] = 5
        st, upd, _ = await api.put(VWC + "/hooks", obj)
        assert st == 200 and upd["metadata"]["generation"] == 2
        bad = _hook("nodots", "http://x", srv.ca_bundle, sideEffects="Some", timeoutSeconds=31)
        del bad["admissionReviewVersions"]
        st, err, _ = await api.post(VWC, _config("ValidatingWebhookConfiguration", bad, name="bad"))
        assert st == 422, err
        fields = {c["field"] for c in err["details"]["causes"]}
        assert {
            "webhooks[0].name",
            "webhooks[0].sideEffects",
            "webhooks[0].admissionReviewVersions",
            "webhooks[0].timeoutSeconds",
            "webhooks[0].clientConfig.url",
        } <= fields
        st, obj, _ = await api.post(
            MWC, _config("MutatingWebhookConfiguration", _hook("m.example.com", srv.url(), srv.ca_bundle))
        )
        assert st == 201 and obj["webhooks"][0]["reinvocationPolicy"] == "Never"


async def test_validating_webhook_denies_and_allows(api):
    with WebhookServer(deny_bad) as srv:
        st, _, _ = await api.post(
            VWC,
            _config("ValidatingWebhookConfiguration", _hook("deny.example.com", srv.url("/validate"), srv.ca_bundle)),
        )
        assert st == 201
        st, err, _ = await api.post(CM, _cm("x", bad="1"))
        assert st == 403, err
        assert err["message"] == 'admission webhook "deny.example.com" denied the request: bad data is not allowed'
        st, obj, hdrs = await api.post(CM, _cm("y", good="1"))
        assert st == 201, obj
        assert hdrs.getall("Warning") == ['299 - "looked at it"']
        path, review = srv.requests[-1]
        assert path == "/validate?timeout=10s"
        req = review["request"]
        assert review["apiVersion"] == "admission.k8s.io/v1" and req["operation"] == "CREATE"
        assert req["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
        assert req["namespace"] == "default" and req["object"]["data"] == {"good": "1"}
        assert req["userInfo"]["username"] and req["dryRun"] is False
        # an update is checked on the new object, with the current one as oldObject
        st, err, _ = await api.patch(CM + "/y", {"data": {"bad": "1"}})
        assert st == 403 and "bad data is not allowed" in err["message"]
        assert srv.requests[-1][1]["request"]["oldObject"]["data"] == {"good": "1"}
        st, obj, _ = await api.get(CM + "/y")
        assert obj["data"] == {"good": "1"}
        # not matched: DELETE is not in the rules
        n = len(srv.requests)
        st, _, _ = await api.delete(CM + "/y")
        assert st == 200 and len(srv.requests) == n


async def test_mutating_webhook_patches_and_reinvocation(api):
    def mutate(path: str, review: dict) -> dict:
        obj = review["request"]["object"]
        data = obj.get("data") or {}
        if path == "/first":
            ops = (
                [{"op": "add", "path": "/metadata/labels", "value": {"injected": "yes"}}]
                if not obj["metadata"].get("labels")
                else []
            )
            if "seen" in data:
                ops.append({"op": "replace", "path": "/data/seen", "value": str(int(data["seen"]) + 1)})
            else:
                ops.append({"op": "add", "path": "/data/seen", "value": "1"})
            return review_response(review, patch=ops)
        return review_response(
            review, patch=[] if "second" in data else [{"op": "add", "path": "/data/second", "value": "x"}]
        )

    with WebhookServer(mutate) as srv:
        st, obj, _ = await api.post(
            MWC,
            _config(
                "MutatingWebhookConfiguration",
                _hook("first.example.com", srv.url("/first"), srv.ca_bundle, reinvocationPolicy="IfNeeded"),
                _hook("second.example.com", srv.url("/second"), srv.ca_bundle),
            ),
        )
        assert st == 201, obj
        st, obj, _ = await api.post(CM, _cm("m", a="b"))
        assert st == 201, obj
        # first ran, second changed the object, so first (IfNeeded) ran again
        assert obj["metadata"]["labels"] == {"injected": "yes"}
        assert obj["data"] == {"a": "b", "seen": "2", "second": "x"}
        st, obj, _ = await api.get(CM + "/m")
        assert obj["data"]["seen"] == "2"
        st, obj, _ = await api.put(CM + "/m", {**obj, "data": {"a": "c"}})
        assert st == 200 and obj["data"] == {"a": "c", "seen": "2", "second": "x"}


async def test_failure_policy_on_unreachable_and_slow_webhooks(api):
    url = "https://127.0.0.1:1/hook"
    st, _, _ = await api.post(
        VWC, _config("ValidatingWebhookConfiguration", _hook("closed.example.com", url, ""), name="closed")
    )
    assert st == 201
    st, err, _ = await api.post(CM, _cm("u"))
    assert st == 500 and err["reason"] == "InternalError"
    assert err["message"] == (
        'Internal error occurred: failed calling webhook "closed.example.com": failed to call '
        'webhook: Post "https://127.0.0.1:1/hook?timeout=10s": dial tcp 127.0.0.1:1: connect: '
        "connection refused"
    )
    st, _, _ = await api.delete(VWC + "/closed")
    st, _, _ = await api.post(
        VWC,
        _config(
            "ValidatingWebhookConfiguration", _hook("open.example.com", url, "", failurePolicy="Ignore"), name="open"
        ),
    )
    st, obj, _ = await api.post(CM, _cm("u"))
    assert st == 201, obj
    await api.delete(VWC + "/open")
    with WebhookServer(deny_bad, delay=2.5) as srv:
        st, _, _ = await api.post(
            VWC,
            _config(
                "ValidatingWebhookConfiguration", _hook("slow.example.com", srv.url(), srv.ca_bundle, timeoutSeconds=1)
            ),
        )
        t0 = time.monotonic()
        st, err, _ = await api.post(CM, _cm("slow"))
        assert st == 500 and err["message"].endswith('?timeout=1s": context deadline exceeded'), err
        assert time.monotonic() - t0 < 2.4


async def test_api_answers_while_a_webhook_is_slow(api):
    with WebhookServer(deny_bad, delay=2.0) as srv:
        st, _, _ = await api.post(
            VWC, _config("ValidatingWebhookConfiguration", _hook("slow.example.com", srv.url(), srv.ca_bundle))
        )
        write = asyncio.ensure_future(api.post(CM, _cm("slow")))
        while not srv.requests:
            await asyncio.sleep(0.01)
        t0 = time.monotonic()
        st, _, _ = await api.get(CM)
        get_took = time.monotonic() - t0
        st2, obj, _ = await write
        assert st == 200 and st2 == 201, obj
        assert get_took < 0.5, get_took


async def test_selectors_and_match_conditions(api):
    with WebhookServer(lambda p, r: review_response(r, False, status={"message": "no"})) as srv:
        hook = _hook(
            "sel.example.com",
            srv.url(),
            srv.ca_bundle,
            objectSelector={"matchLabels": {"guard": "on"}},
            namespaceSelector={
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["default"]}]
            },
            matchConditions=[{"name": "not-exempt", "expression": "!has(object.data) || !('exempt' in object.data)"}],
        )
        st, obj, _ = await api.post(VWC, _config("ValidatingWebhookConfiguration", hook))
        assert st == 201, obj
        st, _, _ = await api.post(CM, _cm("nolabel"))
        assert st == 201
        guarded = _cm("guarded")
        guarded["metadata"]["labels"] = {"guard": "on"}
        st, err, _ = await api.post(CM, guarded)
        assert st == 400 and err["message"] == 'admission webhook "sel.example.com" denied the request: no'
        exempt = _cm("exempt", exempt="1")
        exempt["metadata"]["labels"] = {"guard": "on"}
        st, _, _ = await api.post(CM, exempt)
        assert st == 201
        st, _, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": "other"}})
        other = dict(guarded, metadata={"name": "guarded", "labels": {"guard": "on"}})
        st, _, _ = await api.post("/api/v1/namespaces/other/configmaps", other)
        assert st == 201


async def test_dry_run_and_side_effects(api):
    with WebhookServer(deny_bad) as srv:
        st, _, _ = await api.post(
            VWC, _config("ValidatingWebhookConfiguration", _hook("safe.example.com", srv.url(), srv.ca_bundle))
        )
        st, obj, _ = await api.post(CM, _cm("d"), params={"dryRun": "All"})
        assert st == 201 and srv.requests[-1][1]["request"]["dryRun"] is True
        st, obj, _ = await api.get(CM + "/d")
        assert st == 404
        st, obj, _ = await api.get(VWC + "/hooks")
        obj["webhooks"][0]["sideEffects"] = "NoneOnDryRun"
        obj["webhooks"].append(_hook("unsafe.example.com", srv.url(), srv.ca_bundle, sideEffects="Some"))
        # v1 only accepts None/NoneOnDryRun: an "Unknown"/"Some" webhook can not be registered
        st, err, _ = await api.put(VWC + "/hooks", obj)
        assert st == 422 and "sideEffects" in err["message"]


async def test_wrong_ca_bundle_fails_closed(api):
    with WebhookServer(deny_bad) as srv, WebhookServer(deny_bad) as other:
        st, _, _ = await api.post(
            VWC, _config("ValidatingWebhookConfiguration", _hook("ca.example.com", srv.url(), other.ca_bundle))
        )
        st, err, _ = await api.post(CM, _cm("c"))
        assert st == 500 and err["message"].endswith(
            '?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority'
        ), err


def _crd() -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


async def test_custom_resources_and_status_subresource(api):
    st, obj, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd())
    assert st == 201, obj
    w = "/apis/example.com/v1/namespaces/default/widgets"

    def answer(path: str, review: dict) -> dict:
        req = review["request"]
        if req.get("subResource") == "status" and (req["object"].get("status") or {}).get("phase") == "Bad":
            return review_response(review, False, status={"message": "bad phase", "reason": "Invalid", "code": 422})
        return review_response(review)

    with WebhookServer(answer) as srv:
        hook = _hook(
            "widgets.example.com",
            srv.url(),
            srv.ca_bundle,
            rules=[
                {
                    "apiGroups": ["example.com"],
                    "apiVersions": ["*"],
                    "operations": ["*"],
                    "resources": ["*/status"],
                    "scope": "Namespaced",
                }
            ],
        )
        st, _, _ = await api.post(VWC, _config("ValidatingWebhookConfiguration", hook))
        st, obj, _ = await api.post(w, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}})
        assert st == 201 and srv.requests == []  # "*/status" does not match the main resource
        st, err, _ = await api.patch(w + "/a/status", {"status": {"phase": "Bad"}})
        assert (
            st == 422 and err["message"] == 'admission webhook "widgets.example.com" denied the request: bad phase'
        ), err
        req = srv.requests[-1][1]["request"]
        assert (req["resource"]["resource"], req["subResource"], req["kind"]["kind"]) == ("widgets", "status", "Widget")
        st, obj, _ = await api.patch(w + "/a/status", {"status": {"phase": "Good"}})
        assert st == 200 and obj["status"] == {"phase": "Good"}


async def test_match_policy_equivalent_and_exact(api):
    crd = _crd()
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [dict(v1, name="v1beta1", storage=False), v1]
    st, obj, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert st == 201, obj
    beta = "/apis/example.com/v1beta1/namespaces/default/widgets"
    with WebhookServer(lambda p, r: review_response(r, False, status={"message": p})) as srv:
        hook = _hook(
            "exact.example.com",
            srv.url("/exact"),
            srv.ca_bundle,
            matchPolicy="Exact",
            rules=[
                {
                    "apiGroups": ["example.com"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["widgets"],
                }
            ],
        )
        st, _, _ = await api.post(VWC, _config("ValidatingWebhookConfiguration", hook))
        body = {"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "a"}}
        st, obj, _ = await api.post(beta, body)
        assert st == 201 and srv.requests == [], obj  # Exact: v1beta1 is not v1
        st, obj, _ = await api.get(VWC + "/hooks")
        obj["webhooks"][0]["matchPolicy"] = "Equivalent"
        st, _, _ = await api.put(VWC + "/hooks", obj)
        st, err, _ = await api.post(beta, dict(body, metadata={"name": "b"}))
        assert st == 400 and err["message"] == 'admission webhook "exact.example.com" denied the request: /exact'
        assert srv.requests[-1][1]["request"]["requestKind"]["version"] == "v1beta1"


async def test_validating_webhooks_are_called_in_parallel(api):
    with WebhookServer(deny_bad, delay=1.0) as srv:
        hooks = [_hook(f"v{i}.example.com", srv.url(f"/{i}"), srv.ca_bundle) for i in range(3)]
        st, obj, _ = await api.post(VWC, _config("ValidatingWebhookConfiguration", *hooks))
        assert st == 201, obj
        t0 = time.monotonic()
        st, obj, hdrs = await api.post(CM, _cm("p"))
        took = time.monotonic() - t0
        assert st == 201 and len(srv.requests) == 3 and hdrs.getall("Warning") == ['299 - "looked at it"']
        assert took < 2.5, took  # three 1 s webhooks side by side
        st, err, _ = await api.post(CM, _cm("q", bad="1"))
        assert st == 403 and err["message"].startswith('admission webhook "v0.example.com" denied')


async def test_mutating_webhooks_see_deletes(api):
    def answer(path: str, review: dict) -> dict:
        req = review["request"]
        if req["oldObject"]["metadata"]["name"] == "keep":
            return review_response(review, False, status={"code": 403, "reason": "Forbidden", "message": "kept"})
        return review_response(review)

    with WebhookServer(answer) as srv:
        hook = _hook(
            "del.example.com",
            srv.url(),
            srv.ca_bundle,
            rules=[{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]}],
        )
        st, _, _ = await api.post(MWC, _config("MutatingWebhookConfiguration", hook))
        for name in ("keep", "drop"):
            st, _, _ = await api.post(CM, _cm(name))
            assert st == 201
        assert srv.requests == []
        st, err, _ = await api.delete(CM + "/keep")
        assert st == 403 and err["message"] == 'admission webhook "del.example.com" denied the request: kept'
        st, _, _ = await api.delete(CM + "/drop")
        assert st == 200
        req = srv.requests[-1][1]["request"]
        assert req["operation"] == "DELETE" and req["object"] is None and req["options"]["kind"] == "DeleteOptions"
