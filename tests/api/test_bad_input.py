"""Bad requests over real HTTP: each gets upstream's status code and a Status naming the
problem, writes nothing, and the server keeps serving."""

from __future__ import annotations

import copy
import json

import pytest
import requests
from _seeds import path, resource_gates, seed

from mockkube.apiserver.resources import registry
from mockkube.testing.cluster import ThreadedCluster

REG = registry()
CM = REG.get("", "v1", "configmaps")
POD = REG.get("", "v1", "pods")
DC = REG.get("resource.k8s.io", "v1", "deviceclasses")
SLICE = REG.get("resource.k8s.io", "v1", "resourceslices")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ThreadedCluster(
        workdir=str(tmp_path_factory.mktemp("badinput")), components=False, feature_gates=resource_gates()
    ).start()
    s = requests.Session()
    assert s.post(c.url + "/api/v1/namespaces", json={"metadata": {"name": "fuzz"}}).status_code == 201
    for rt in (CM, DC):
        assert s.post(c.url + path(rt), json=seed(rt)).status_code == 201
    c.http = s
    try:
        yield c
    finally:
        c.stop()


def snapshot(c, rt) -> tuple[str, list]:
    body = c.http.get(c.url + path(rt)).json()
    return body["metadata"]["resourceVersion"], [
        (i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in body["items"]
    ]


def send(
    c, method: str, url: str, body: bytes | str | None, ct: str = "application/json", params: dict | None = None
) -> requests.Response:
    return c.http.request(method, c.url + url, data=body, headers={"Content-Type": ct}, params=params)


def assert_status(resp: requests.Response, code: int, reason: str) -> dict:
    assert resp.status_code == code, resp.text[:500]
    st = resp.json()
    assert (st["kind"], st["apiVersion"], st["status"], st["code"], st.get("reason")) == (
        "Status",
        "v1",
        "Failure",
        code,
        reason,
    ), st
    return st


def still_serving(c) -> None:
    assert c.http.get(c.url + "/version").status_code == 200
    assert c.http.get(c.url + path(CM)).status_code == 200


CM_URL = path(CM)
SEED_URL = path(CM, name="seed")

CASES = [
    # (id, method, url, body, content-type, params, code, reason, words the message must contain)
    (
        "json-truncated",
        "POST",
        CM_URL,
        b'{"kind": "ConfigMap",',
        "application/json",
        None,
        400,
        "BadRequest",
        ["couldn't get version/kind; json parse error"],
    ),
    ("json-garbage", "POST", CM_URL, b"\xff\xfe{{", "application/json", None, 400, "BadRequest", ["json parse error"]),
    ("json-array", "POST", CM_URL, b"[1, 2]", "application/json", None, 400, "BadRequest", ["object"]),
    ("json-null", "POST", CM_URL, b"null", "application/json", None, 400, "BadRequest", ["object"]),
    ("empty-body", "POST", CM_URL, b"", "application/json", None, 400, "BadRequest", ["empty"]),
    (
        "yaml-broken",
        "POST",
        CM_URL,
        b"kind: [ConfigMap\n  x: :",
        "application/yaml",
        None,
        400,
        "BadRequest",
        ["error converting YAML to JSON"],
    ),
    (
        "yaml-tab",
        "POST",
        CM_URL,
        b"metadata:\n\tname: x\n",
        "application/yaml",
        None,
        400,
        "BadRequest",
        ["error converting YAML to JSON"],
    ),
    (
        "wrong-kind",
        "POST",
        path(POD),
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        "application/json",
        None,
        400,
        "BadRequest",
        ["ConfigMap", "Pod"],
    ),
    (
        "wrong-group",
        "POST",
        CM_URL,
        json.dumps({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        "application/json",
        None,
        400,
        "BadRequest",
        ["apps/v1"],
    ),
    (
        "wrong-version",
        "POST",
        CM_URL,
        json.dumps({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        "application/json",
        None,
        400,
        "BadRequest",
        ["v2"],
    ),
    (
        "too-large",
        "POST",
        CM_URL,
        b'{"metadata":{"name":"big"},"data":{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}}',
        "application/json",
        None,
        413,
        "RequestEntityTooLarge",
        ["Request entity too large: limit is 3145728"],
    ),
    (
        "too-large-put",
        "PUT",
        SEED_URL,
        b'{"metadata":{"name":"seed"},"data":{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}}',
        "application/json",
        None,
        413,
        "RequestEntityTooLarge",
        ["Request entity too large"],
    ),
    (
        "too-large-patch",
        "PATCH",
        SEED_URL,
        b'{"data":{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}}',
        "application/merge-patch+json",
        None,
        413,
        "RequestEntityTooLarge",
        ["Request entity too large"],
    ),
    (
        "name-too-long",
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "x" * 254}}),
        "application/json",
        None,
        422,
        "Invalid",
        ["metadata.name", "must be no more than 253 characters"],
    ),
    (
        "name-invalid",
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "Not_Valid"}}),
        "application/json",
        None,
        422,
        "Invalid",
        ["metadata.name", "RFC 1123"],
    ),
    (
        "type-error",
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "t", "labels": {"a": 1}}}),
        "application/json",
        None,
        400,
        "BadRequest",
        ["cannot be handled as a ConfigMap", "metadata.labels"],
    ),
    (
        "strict-unknown",
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "s"}, "bogus": 1}),
        "application/json",
        {"fieldValidation": "Strict"},
        400,
        "BadRequest",
        ["strict decoding error", "bogus"],
    ),
    (
        "strict-unknown-nested-put",
        "PUT",
        SEED_URL,
        json.dumps({"metadata": {"name": "seed", "bogusMeta": 1}, "data": {"a": "b"}}),
        "application/json",
        {"fieldValidation": "Strict"},
        400,
        "BadRequest",
        ["strict decoding error", "metadata.bogusMeta"],
    ),
    (
        "strict-unknown-patch",
        "PATCH",
        SEED_URL,
        json.dumps({"bogus": {"x": 1}}),
        "application/merge-patch+json",
        {"fieldValidation": "Strict"},
        400,
        "BadRequest",
        ["bogus"],
    ),
    (
        "bad-field-validation",
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "fv"}}),
        "application/json",
        {"fieldValidation": "Loud"},
        422,
        "Invalid",
        ['CreateOptions.meta.k8s.io "" is invalid: fieldValidation'],
    ),
    (
        "patch-bad-json",
        "PATCH",
        SEED_URL,
        b'{"a":',
        "application/merge-patch+json",
        None,
        400,
        "BadRequest",
        ["json parse error"],
    ),
    (
        "json-patch-not-list",
        "PATCH",
        SEED_URL,
        b'{"op":"add"}',
        "application/json-patch+json",
        None,
        400,
        "BadRequest",
        [],
    ),
    (
        "json-patch-bad-path",
        "PATCH",
        SEED_URL,
        b'[{"op":"replace","path":"/nope/x","value":1}]',
        "application/json-patch+json",
        None,
        422,
        "Invalid",
        [],
    ),
    ("patch-unknown-type", "PATCH", SEED_URL, b"{}", "application/xml", None, 415, "UnsupportedMediaType", []),
    (
        "apply-without-manager",
        "PATCH",
        SEED_URL,
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seed"}}),
        "application/apply-patch+yaml",
        None,
        422,
        "Invalid",
        ["fieldManager"],
    ),
    (
        "put-name-mismatch",
        "PUT",
        SEED_URL,
        json.dumps({"metadata": {"name": "other"}}),
        "application/json",
        None,
        400,
        "BadRequest",
        ["does not match"],
    ),
    (
        "put-bad-rv",
        "PUT",
        SEED_URL,
        json.dumps({"metadata": {"name": "seed", "resourceVersion": "1"}}),
        "application/json",
        None,
        409,
        "Conflict",
        ["the object has been modified"],
    ),
    (
        "invalid-cel",
        "POST",
        path(DC),
        json.dumps(
            {"metadata": {"name": "bad-cel"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == "}}]}}
        ),
        "application/json",
        None,
        422,
        "Invalid",
        ["spec.selectors[0].cel.expression", "compilation failed"],
    ),
    (
        "invalid-cel-type",
        "POST",
        path(DC),
        json.dumps(
            {"metadata": {"name": "bad-cel2"}, "spec": {"selectors": [{"cel": {"expression": "device.driver + 1"}}]}}
        ),
        "application/json",
        None,
        422,
        "Invalid",
        ["spec.selectors[0].cel.expression"],
    ),
    (
        "invalid-slice",
        "POST",
        path(SLICE),
        json.dumps(
            {
                "metadata": {"name": "bad"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": "n",
                    "allNodes": True,
                    "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                },
            }
        ),
        "application/json",
        None,
        422,
        "Invalid",
        ['ResourceSlice.resource.k8s.io "bad" is invalid: spec'],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_request_is_rejected_and_writes_nothing(cluster, case):
    _, method, url, body, ct, params, code, reason, words = case
    rt = DC if "deviceclasses" in url else SLICE if "resourceslices" in url else POD if "/pods" in url else CM
    before = snapshot(cluster, rt), snapshot(cluster, CM)
    resp = send(cluster, method, url, body, ct, params)
    st = assert_status(resp, code, reason)
    for w in words:
        assert w in st["message"], st["message"]
    assert (snapshot(cluster, rt), snapshot(cluster, CM)) == before
    still_serving(cluster)


def test_invalid_cel_names_the_field_in_causes(cluster):
    body = {
        "metadata": {"name": "bad-cel3"},
        "spec": {
            "selectors": [
                {"cel": {"expression": 'device.driver == "a"'}},
                {"cel": {"expression": "device.attributes["}},
            ]
        },
    }
    st = assert_status(send(cluster, "POST", path(DC), json.dumps(body)), 422, "Invalid")
    assert [c["field"] for c in st["details"]["causes"]] == ["spec.selectors[1].cel.expression"]
    assert st["details"]["causes"][0]["reason"] == "FieldValueInvalid"
    assert (st["details"]["kind"], st["details"]["group"], st["details"]["name"]) == (
        "DeviceClass",
        "resource.k8s.io",
        "bad-cel3",
    )


def test_name_too_long_cause(cluster):
    st = assert_status(send(cluster, "POST", CM_URL, json.dumps({"metadata": {"name": "a" * 300}})), 422, "Invalid")
    assert st["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "field": "metadata.name", "message": st["details"]["causes"][0]["message"]}
    ]
    assert "must be no more than 253 characters" in st["details"]["causes"][0]["message"]


def test_unknown_field_warn_writes_with_a_warning(cluster):
    before = snapshot(cluster, CM)
    resp = send(
        cluster,
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "warned"}, "bogus": 1}),
        params={"fieldValidation": "Warn"},
    )
    assert resp.status_code == 201
    warning = resp.headers["Warning"]
    assert warning.startswith("299 - ") and "unknown field" in warning and "bogus" in warning
    assert snapshot(cluster, CM) != before
    resp = send(
        cluster,
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "ignored"}, "bogus": 1}),
        params={"fieldValidation": "Ignore"},
    )
    assert resp.status_code == 201 and "Warning" not in resp.headers


@pytest.mark.parametrize("mode", ["Warn", "Ignore"])
def test_unknown_fields_are_not_stored(cluster, mode):
    name = f"pruned-{mode.lower()}"
    resp = send(
        cluster,
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": name}, "bogus": 1, "data": {"a": "b"}}),
        params={"fieldValidation": mode},
    )
    assert resp.status_code == 201
    stored = cluster.http.get(cluster.url + path(CM, name=name)).json()
    assert "bogus" not in stored and "bogus" not in resp.json()


def test_strict_message_is_upstreams(cluster):
    st = assert_status(
        send(
            cluster,
            "POST",
            CM_URL,
            json.dumps({"metadata": {"name": "s2"}, "bogus": 1}),
            params={"fieldValidation": "Strict"},
        ),
        400,
        "BadRequest",
    )
    assert st["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"'
    )


def test_warning_header_is_quoted_like_upstream(cluster):
    resp = send(
        cluster,
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "warned2"}, "bogus": 1}),
        params={"fieldValidation": "Warn"},
    )
    assert resp.headers["Warning"] == '299 - "unknown field \\"bogus\\""'


def test_huge_valid_label_selector(cluster):
    sel = ",".join(f"k{i}=v{i}" for i in range(400))  # ~5 KB, under the request-line limit
    resp = cluster.http.get(cluster.url + CM_URL, params={"labelSelector": sel})
    assert resp.status_code == 200 and resp.json()["items"] == []
    sel = ",".join(f"k{i} notin (a,b,c)" for i in range(150)) + ",!absent"  # matches every ConfigMap
    resp = cluster.http.get(cluster.url + CM_URL, params={"labelSelector": sel})
    everything = cluster.http.get(cluster.url + CM_URL).json()["items"]
    assert resp.status_code == 200
    assert [i["metadata"]["name"] for i in resp.json()["items"]] == [i["metadata"]["name"] for i in everything]
    assert "seed" in [i["metadata"]["name"] for i in everything]


@pytest.mark.parametrize(
    "sel,words",
    [
        ("a=" + "x" * 100, ["must be no more than 63"]),
        ("a in (", ["unable to parse requirement"]),
        ("x" * 400 + "=b", ["name part must be no more than 63"]),
        (",".join(f"k{i}=v{i}" for i in range(300)) + ",bad key=1", ["unable to parse requirement"]),
    ],
)
def test_invalid_label_selector_is_400(cluster, sel, words):
    resp = cluster.http.get(cluster.url + CM_URL, params={"labelSelector": sel})
    st = assert_status(resp, 400, "BadRequest")
    for w in words:
        assert w in st["message"], st["message"]
    still_serving(cluster)


def test_label_selector_over_8k_is_served(cluster):
    sel = ",".join(f"k{i}=v{i}" for i in range(1500))  # ~17 KB
    resp = cluster.http.get(cluster.url + CM_URL, params={"labelSelector": sel})
    assert resp.status_code == 200


def test_server_survives_a_burst_of_garbage(cluster):
    before = snapshot(cluster, CM)
    for i in range(50):
        body = bytes((i * 37 + j) % 256 for j in range(200))
        resp = send(cluster, "POST", CM_URL, body, ct=["application/json", "application/yaml"][i % 2])
        assert resp.status_code in (400, 415), resp.text
        assert resp.json()["kind"] == "Status"
    assert snapshot(cluster, CM) == before
    still_serving(cluster)


# -- regressions: server bugs the fuzzer found (500s, dropped connections) --
@pytest.mark.parametrize("av", [["v1"], 1, {"a": "b"}])
def test_non_string_api_version_is_400(cluster, av):
    resp = send(cluster, "POST", CM_URL, json.dumps({"apiVersion": av, "metadata": {"name": "av"}}))
    assert_status(resp, 400, "BadRequest")


def test_deeply_nested_json_is_400(cluster):
    assert_status(send(cluster, "POST", CM_URL, b"[" * 5000), 400, "BadRequest")


def test_container_without_name_is_not_a_500(cluster):
    body = {"metadata": {"name": "noname"}, "spec": {"containers": [{"image": "busybox"}]}}
    resp = send(cluster, "POST", path(POD), json.dumps(body))
    st = assert_status(resp, 422, "Invalid")
    assert "spec.containers[0].name" in st["message"]


def test_warning_with_control_character_gets_a_response(cluster):
    resp = send(
        cluster,
        "POST",
        CM_URL,
        json.dumps({"metadata": {"name": "ctl"}, "\x01": 1}),
        params={"fieldValidation": "Warn"},
    )
    assert resp.status_code == 201 and "Warning" in resp.headers


def test_put_with_null_metadata_is_not_a_500(cluster):
    resp = send(cluster, "PUT", SEED_URL, json.dumps({"metadata": None, "data": {"a": "b"}}))
    assert 400 <= resp.status_code < 500


def test_namespace_with_null_labels_is_not_a_500(cluster):
    resp = send(cluster, "POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": "nulllabels", "labels": None}}))
    assert resp.status_code == 201
    assert resp.json()["metadata"]["labels"] == {"kubernetes.io/metadata.name": "nulllabels"}


def _leaf_paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaf_paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaf_paths(v, prefix + (i,))


def test_null_or_empty_anywhere_is_never_a_500(cluster):
    """Every field of every kind's valid seed set to null, {} and [] in turn: a 4xx or a
    2xx, never a 5xx (upstream decodes null as the zero value, then validates)."""
    failures = []
    n = 0
    for rt in REG.all():
        base = seed(rt)
        for p in _leaf_paths(base):
            if not p or p[0] in ("apiVersion", "kind") or p in (("metadata",), ("metadata", "name")):
                continue
            for value in (None, {}, []):
                n += 1
                obj = copy.deepcopy(base)
                obj["metadata"]["name"] = f"null-{n}"
                parent = obj
                for k in p[:-1]:
                    parent = parent[k]
                parent[p[-1]] = value
                resp = send(cluster, "POST", path(rt), json.dumps(obj))
                if resp.status_code >= 500:
                    failures.append(
                        f"{rt.plural} {'.'.join(map(str, p))}={json.dumps(value)}: "
                        f"{resp.json().get('message', '')[:100]}"
                    )
    assert failures == []


def test_json_bodies_end_with_a_newline_as_gos_encoder_writes_them(cluster):
    """The Python client's utils print Status bodies verbatim (its own e2e suite compares
    them, newline included)."""
    c = cluster
    st = send(c, "POST", path(CM), json.dumps(seed(CM)))
    assert_status(st, 409, "AlreadyExists")
    assert st.content.endswith(b'"code":409}\n')
    got = c.http.get(c.url + path(CM))
    assert got.content.endswith(b"}\n") and not got.content.endswith(b"\n\n")


# -- option bodies and query parameters decode as apiserver decodes them ----------
RC_URL = "/api/v1/namespaces/fuzz/replicationcontrollers"
_PROBE = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
DELETE_OPTIONS_CASES = [
    # the schemathesis finding: a number for dryRun was a 500 "TypeError: 'float' object is not iterable"
    ({"dryRun": 1.5}, "json: cannot unmarshal number into Go struct field DeleteOptions.dryRun of type []string"),
    ({"dryRun": "All"}, "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"),
    ({"dryRun": ["All", 1]}, "json: cannot unmarshal number into Go struct field DeleteOptions.dryRun of type string"),
    (
        {"gracePeriodSeconds": "0"},
        "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
    ),
    (
        {"gracePeriodSeconds": 1.5},
        "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
    ),
    (
        {"orphanDependents": "true"},
        "json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool",
    ),
    (
        {"propagationPolicy": 1},
        "json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation",
    ),
    (
        {"preconditions": "x"},
        "json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions",
    ),
    (
        {"preconditions": {"uid": 1}},
        "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID",
    ),
    (
        {"ignoreStoreReadErrorWithClusterBreakingPotential": 1},
        (
            "json: cannot unmarshal number into Go struct field "
            "DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential of type bool"
        ),
    ),
    ([1], f"couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type {_PROBE}"),
    (
        {"kind": 1},
        (
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field "
            ".kind of type string"
        ),
    ),
]


@pytest.mark.parametrize("collection", [True, False], ids=["deletecollection", "delete"])
@pytest.mark.parametrize("body,message", DELETE_OPTIONS_CASES, ids=[str(c[0]) for c in DELETE_OPTIONS_CASES])
def test_delete_options_of_the_wrong_type_are_400(cluster, body, message, collection):
    """Since v1.35 apiserver answers every DeleteOptions decode error with a 400 carrying
    the decoder's message (kubernetes#133358); nothing is deleted."""
    before = snapshot(cluster, CM)
    url = CM_URL if collection else SEED_URL
    st = assert_status(send(cluster, "DELETE", url, json.dumps(body)), 400, "BadRequest")
    assert st["message"] == message
    assert snapshot(cluster, CM) == before
    st = assert_status(send(cluster, "DELETE", RC_URL, json.dumps(body)), 400, "BadRequest")
    assert st["message"] == message


@pytest.mark.parametrize("ct", ["text/plain", "*/*", "text/yaml", "application/x-www-form-urlencoded"])
def test_bodies_of_other_media_types_are_415(cluster, ct):
    before = snapshot(cluster, CM)
    accepted = (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    for method, url, body in (
        ("DELETE", CM_URL, {"dryRun": ["All"]}),
        ("DELETE", SEED_URL, {}),
        ("POST", CM_URL, {"metadata": {"name": "plain"}}),
        ("PUT", SEED_URL, {"metadata": {"name": "seed"}}),
    ):
        st = assert_status(send(cluster, method, url, json.dumps(body), ct=ct), 415, "UnsupportedMediaType")
        assert st["message"] == accepted
    assert snapshot(cluster, CM) == before


def test_null_delete_options_body_is_no_options(cluster):
    send(cluster, "POST", CM_URL, json.dumps({"metadata": {"name": "null-opts"}}))
    resp = send(cluster, "DELETE", path(CM, name="null-opts"), b"null")
    assert resp.status_code == 200, resp.text
    assert send(cluster, "GET", path(CM, name="null-opts"), None).status_code == 404


@pytest.mark.parametrize(
    "method,url,params,message",
    [
        ("GET", CM_URL, {"limit": "x"}, 'strconv.ParseInt: parsing "x": invalid syntax'),
        ("GET", CM_URL, {"limit": ""}, 'strconv.ParseInt: parsing "": invalid syntax'),
        ("GET", CM_URL, {"timeoutSeconds": "1.5"}, 'strconv.ParseInt: parsing "1.5": invalid syntax'),
        (
            "GET",
            CM_URL,
            {"limit": "99999999999999999999"},
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        ("DELETE", CM_URL, {"limit": "1_0"}, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
        ("DELETE", SEED_URL, {"gracePeriodSeconds": " 1"}, 'strconv.ParseInt: parsing " 1": invalid syntax'),
        ("DELETE", CM_URL, {"gracePeriodSeconds": "\u0663"}, 'strconv.ParseInt: parsing "\u0663": invalid syntax'),
        (
            "GET",
            path(POD, name="nope") + "/log",
            {"tailLines": "ten"},
            'strconv.ParseInt: parsing "ten": invalid syntax',
        ),
    ],
)
def test_integer_query_parameters_parse_as_strconv_does(cluster, method, url, params, message):
    before = snapshot(cluster, CM)
    st = assert_status(send(cluster, method, url, None, params=params), 400, "BadRequest")
    assert st["message"] == message
    assert snapshot(cluster, CM) == before


@pytest.mark.parametrize(
    "params,message,causes",
    [
        (
            {"tailLines": "-1"},
            'PodLogOptions "nope" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
            [("FieldValueInvalid", "tailLines")],
        ),
        (
            {"limitBytes": "0", "sinceSeconds": "0"},
            'PodLogOptions "nope" is invalid: [limitBytes: Invalid value: 0: must be greater than 0, '
            "sinceSeconds: Invalid value: 0: must be greater than 0]",
            [("FieldValueInvalid", "limitBytes"), ("FieldValueInvalid", "sinceSeconds")],
        ),
    ],
)
def test_pod_log_options_are_validated_before_the_pod_is_read(cluster, params, message, causes):
    """LogREST's ValidatePodLogOptions: 422 Invalid naming each field, ahead of the pod's 404."""
    st = assert_status(send(cluster, "GET", path(POD, name="nope") + "/log", None, params=params), 422, "Invalid")
    assert st["message"] == message
    assert st["details"]["kind"] == "PodLogOptions" and st["details"]["name"] == "nope"
    assert [(c["reason"], c["field"]) for c in st["details"]["causes"]] == causes


def test_boolean_query_parameters_are_lenient_as_upstream(cluster):
    """Convert_Slice_string_To_bool: only "0" and "false" (any case) are false; so a bogus
    ``force`` on a merge patch is true, and refused as one, not as a parse error."""
    st = assert_status(
        send(cluster, "PATCH", SEED_URL, b"{}", ct="application/merge-patch+json", params={"force": "maybe"}),
        422,
        "Invalid",
    )
    assert (
        st["message"] == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for '
        "non-apply patch"
    )
    for v in ("FALSE", "0"):
        assert (
            send(cluster, "PATCH", SEED_URL, b"{}", ct="application/merge-patch+json", params={"force": v}).status_code
            == 200
        )


@pytest.mark.parametrize(
    "sub,body,message",
    [
        (
            "binding",
            {"target": "node-1"},
            (
                'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal '
                "string into Go struct field Binding.target of type v1.ObjectReference"
            ),
        ),
        (
            "eviction",
            {"deleteOptions": "x"},
            (
                'Eviction in version "v1" cannot be handled as a Eviction: json: cannot '
                "unmarshal string into Go struct field Eviction.deleteOptions of type "
                "v1.DeleteOptions"
            ),
        ),
        (
            "eviction",
            {"deleteOptions": {"dryRun": 1}},
            (
                'Eviction in version "v1" cannot be handled as a Eviction: json: '
                "cannot unmarshal number into Go struct field "
                "DeleteOptions.deleteOptions.dryRun of type []string"
            ),
        ),
    ],
)
def test_subresource_bodies_of_the_wrong_type_are_400(cluster, sub, body, message):
    url = _evictable(cluster, "typed")
    try:
        st = assert_status(
            send(cluster, "POST", url.replace("/eviction", "/" + sub), json.dumps(body)), 400, "BadRequest"
        )
        assert st["message"] == message
        got = cluster.http.get(cluster.url + path(POD, PODS_NS, "typed")).json()
        assert "nodeName" not in got["spec"] and "deletionTimestamp" not in got["metadata"]
    finally:
        send(cluster, "DELETE", path(POD, PODS_NS, "typed"), json.dumps({"gracePeriodSeconds": 0}))


def test_namespace_finalize_of_the_wrong_type_is_400(cluster):
    st = assert_status(
        send(cluster, "PUT", "/api/v1/namespaces/fuzz/finalize", json.dumps({"spec": "x"})), 400, "BadRequest"
    )
    assert st["message"] == (
        'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal '
        "string into Go struct field Namespace.spec of type v1.NamespaceSpec"
    )
    assert cluster.http.get(cluster.url + "/api/v1/namespaces/fuzz").json()["status"]["phase"] == "Active"


@pytest.mark.parametrize("rv", ["99999999999999999999", "18446744073709551616", "-1", "+5", " 5", "1_0", "\u0663"])
@pytest.mark.parametrize("watch", [False, True], ids=["list", "watch"])
def test_resource_version_parses_as_uint64(cluster, rv, watch):
    """A resourceVersion past uint64 (or not plain digits) is invalid, a 400, not a 504
    Too large resource version."""
    params = {"resourceVersion": rv, **({"watch": "true", "timeoutSeconds": "1"} if watch else {})}
    st = assert_status(send(cluster, "GET", CM_URL, None, params=params), 400, "BadRequest")
    assert st["message"] == f"invalid resource version: {rv}"


def test_resource_version_ahead_of_the_store_is_upstreams_504(cluster):
    rv = int(snapshot(cluster, CM)[0]) + 1000
    st = assert_status(send(cluster, "GET", CM_URL, None, params={"resourceVersion": str(rv)}), 504, "Timeout")
    assert st["message"].startswith(f"Timeout: Too large resource version: {rv}, current: ")


PODS_NS = "pods-only"  # the fuzz namespace may hold a ResourceQuota (test_null_or_empty...) refusing pods


def _evictable(cluster, name: str) -> str:
    send(cluster, "POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": PODS_NS}}))
    resp = send(cluster, "POST", path(POD, PODS_NS), json.dumps(seed(POD, name, PODS_NS)))
    assert resp.status_code == 201, resp.text
    return path(POD, PODS_NS, name) + "/eviction"


def test_eviction_honours_the_requests_dry_run(cluster):
    """``?dryRun=All`` on pods/eviction (the CreateOptions) is the eviction's dry run, as
    the eviction REST's propagateDryRun makes it: the pod stays (it was deleted)."""
    url = _evictable(cluster, "ev-dry")
    try:
        resp = send(cluster, "POST", url, json.dumps({"metadata": {"name": "ev-dry"}}), params={"dryRun": "All"})
        assert resp.status_code == 201, resp.text
        pod = cluster.http.get(cluster.url + path(POD, PODS_NS, "ev-dry")).json()
        assert "deletionTimestamp" not in pod["metadata"]
        st = assert_status(
            send(cluster, "POST", url, json.dumps({"metadata": {"name": "ev-dry"}}), params={"dryRun": "x"}),
            422,
            "Invalid",
        )
        assert st["message"] == (
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "x": supported values: "All"'
        )
        st = assert_status(
            send(
                cluster,
                "POST",
                url,
                json.dumps({"metadata": {"name": "ev-dry"}, "deleteOptions": {"dryRun": ["All", "All"]}}),
                params={"dryRun": "All"},
            ),
            400,
            "BadRequest",
        )
        assert st["message"] == "Non-matching dry-run options in request and content: [All] and [All All]"
        assert (
            "deletionTimestamp" not in cluster.http.get(cluster.url + path(POD, PODS_NS, "ev-dry")).json()["metadata"]
        )
    finally:
        send(cluster, "DELETE", path(POD, PODS_NS, "ev-dry"), json.dumps({"gracePeriodSeconds": 0}))


@pytest.mark.parametrize("meta", [{}, {"name": "other"}])
def test_eviction_of_another_name_is_400(cluster, meta):
    url = _evictable(cluster, "ev-name")
    try:
        st = assert_status(send(cluster, "POST", url, json.dumps({"metadata": meta})), 400, "BadRequest")
        assert st["message"] == "name in URL does not match name in Eviction object"
        assert (
            "deletionTimestamp" not in cluster.http.get(cluster.url + path(POD, PODS_NS, "ev-name")).json()["metadata"]
        )
    finally:
        send(cluster, "DELETE", path(POD, PODS_NS, "ev-name"), json.dumps({"gracePeriodSeconds": 0}))
