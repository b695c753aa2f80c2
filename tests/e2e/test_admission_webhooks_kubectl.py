"""kubectl against admission webhooks: a denial and a warning read as on a real cluster, a
mutation visible in what kubectl gets back."""

from __future__ import annotations

import json
import threading

import pytest

from tests.api.test_admission_webhooks import Hooks, _webhook

pytestmark = pytest.mark.e2e


@pytest.fixture
def hooks():
    h = Hooks()
    threading.Thread(target=h.serve_forever, daemon=True).start()
    yield h
    h.shutdown()
    h.server_close()


def test_kubectl_meets_webhooks(mockkube_fresh, hooks):
    c = mockkube_fresh
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "guard"},
        "webhooks": [_webhook(hooks, "deny.example.com", "/deny"), _webhook(hooks, "warn.example.com", "/warn")],
    }
    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "label"},
        "webhooks": [_webhook(hooks, "label.example.com", "/label")],
    }
    c.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [config, mutating]}))
    r = c.kubectl("create", "configmap", "bad-idea", check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == (
        'error: failed to create configmap: admission webhook "deny.example.com" denied '
        "the request: names starting with bad are not allowed"
    )
    bad = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad-applied"}}
    r = c.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert r.returncode == 1 and r.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": admission webhook "deny.example.com" denied '
        "the request: names starting with bad are not allowed"
    )
    r = c.kubectl("create", "configmap", "fine", "-o", "json")
    assert "Warning: configmaps are watched" in r.stderr
    assert json.loads(r.stdout)["metadata"]["labels"] == {"mutated": "yes"}
    out = c.kubectl("get", "validatingwebhookconfigurations").stdout.splitlines()
    assert out[0].split() == ["NAME", "WEBHOOKS", "AGE"] and out[1].split()[:2] == ["guard", "2"]
