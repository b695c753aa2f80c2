"""[]byte fields decode as Go's encoding/json does (base64.StdEncoding skips "\\r" and "\\n")
and are stored and returned in the canonical encoding a Go round trip gives."""

from __future__ import annotations

import base64

import pytest

DATA = bytes(range(256)) * 2  # 512 bytes: 684 base64 characters, nine lines at 76 columns
FLAT = base64.b64encode(DATA).decode()
WRAPPED = "\n".join(FLAT[i : i + 76] for i in range(0, len(FLAT), 76)) + "\n"  # as `base64` wraps it
CRLF = WRAPPED.replace("\n", "\r\n")


def _secret(name: str, value: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"blob": value}}


@pytest.mark.parametrize("value", [WRAPPED, CRLF])
async def test_secret_with_line_breaks_is_created_and_returned_canonical(api, value):
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", _secret("wrapped", value))
    assert code == 201, body
    assert body["data"]["blob"] == FLAT
    code, got, _ = await api.get("/api/v1/namespaces/default/secrets/wrapped")
    assert code == 200 and got["data"]["blob"] == FLAT


async def test_secret_in_yaml_with_a_folded_block(api):
    lines = "\n".join("    " + FLAT[i : i + 76] for i in range(0, len(FLAT), 76))
    doc = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: yaml-wrapped\ndata:\n  blob: |\n{lines}\n"
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", doc, ct="application/yaml")
    assert code == 201, body
    assert body["data"]["blob"] == FLAT


async def test_update_patch_and_apply_take_line_breaks(api):
    assert (await api.post("/api/v1/namespaces/default/secrets", _secret("s", "YQ==")))[0] == 201
    code, body, _ = await api.patch("/api/v1/namespaces/default/secrets/s", {"data": {"blob": WRAPPED}})
    assert code == 200, body
    assert body["data"]["blob"] == FLAT
    body["data"]["blob"] = CRLF
    code, body, _ = await api.put("/api/v1/namespaces/default/secrets/s", body)
    assert code == 200, body
    assert body["data"]["blob"] == FLAT
    code, body, _ = await api.patch(
        "/api/v1/namespaces/default/secrets/applied",
        _secret("applied", WRAPPED),
        ct="application/apply-patch+yaml",
        params={"fieldManager": "test"},
    )
    assert code == 201, body
    assert body["data"]["blob"] == FLAT


async def test_configmap_binary_data_and_webhook_ca_bundle(api):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bin"}, "binaryData": {"b": WRAPPED}}
    code, body, _ = await api.post("/api/v1/namespaces/default/configmaps", cm)
    assert code == 201, body
    assert body["binaryData"]["b"] == FLAT
    hook = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "wrapped-ca"},
        "webhooks": [
            {
                "name": "w.example.com",
                "clientConfig": {"url": "https://example.com/hook", "caBundle": WRAPPED},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": ["x.example.com"],
                        "apiVersions": ["v1"],
                        "resources": ["y"],
                    }
                ],
            }
        ],
    }
    code, body, _ = await api.post("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", hook)
    assert code == 201, body
    assert body["webhooks"][0]["clientConfig"]["caBundle"] == FLAT


async def test_non_canonical_trailing_bits_come_back_canonical(api):
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", _secret("bits", "QR=="))
    assert code == 201, body
    assert body["data"]["blob"] == "QQ=="


@pytest.mark.parametrize(
    "value,offset",
    [("YWJj\nZA=====", 9), ("AA=\n", 4), ("not base64!", 3), ("YWJj\n!", 5)],
)
async def test_bad_base64_is_a_400_status_at_goes_offset(api, value, offset):
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", _secret("bad", value))
    assert code == 400, body
    assert body["kind"] == "Status" and body["reason"] == "BadRequest" and body["code"] == 400
    assert body["message"] == (
        f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte {offset}'
    )


async def test_a_json_array_of_bytes_is_stored_as_base64(api):
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", _secret("arr", [104, 105]))
    assert code == 201, body
    assert body["data"]["blob"] == "aGk="
    code, body, _ = await api.post("/api/v1/namespaces/default/secrets", _secret("arr2", [104, 300]))
    assert code == 400, body
    assert body["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: '
        "json: cannot unmarshal number 300 into Go struct field Secret.data of type uint8"
    )
