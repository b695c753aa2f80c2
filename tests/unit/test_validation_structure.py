"""The decode step: unknown fields and type errors, worded as kube-apiserver words them."""

from __future__ import annotations

import pytest

from mockkube.machinery.schema import for_kind
from mockkube.machinery.validation import check_structure, decode_error, unknown_field_warnings, valid_quantity

POD = for_kind("", "v1", "Pod")
CLAIM = for_kind("resource.k8s.io", "v1", "ResourceClaim")
SLICE = for_kind("resource.k8s.io", "v1", "ResourceSlice")
DEPLOY = for_kind("apps", "v1", "Deployment")
SECRET = for_kind("", "v1", "Secret")
LEASE = for_kind("coordination.k8s.io", "v1", "Lease")


def _pod(spec: dict, **top) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec, **top}


def test_valid_pod_is_clean():
    pod = _pod(
        {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": "500m", "memory": 1073741824}},
                    "env": [{"name": "A", "value": "b"}],
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
        }
    )
    s = check_structure(pod, POD)
    assert s.type_errors == [] and s.unknown_fields == [] and s.ok


@pytest.mark.parametrize(
    "root,obj,unknown",
    [
        (POD, _pod({"containers": []}, x=1), ['unknown field "x"']),
        (POD, _pod({"foo": 1, "containers": []}), ['unknown field "spec.foo"']),
        (
            POD,
            _pod({"containers": [{"name": "a"}, {"name": "b", "bar": 1}]}),
            ['unknown field "spec.containers[1].bar"'],
        ),
        (
            POD,
            _pod({"containers": [{"name": "a", "resources": {"limits": {}, "huge": 1}}]}),
            ['unknown field "spec.containers[0].resources.huge"'],
        ),
        (POD, {"metadata": {"name": "p", "labelz": {}}}, ['unknown field "metadata.labelz"']),
        (
            POD,
            {"metadata": {"ownerReferences": [{"name": "o", "kindd": "x"}]}},
            ['unknown field "metadata.ownerReferences[0].kindd"'],
        ),
        # map of structs: the map key is part of the path
        (
            SLICE,
            {"spec": {"devices": [{"name": "d", "attributes": {"model": {"string": "a", "foo": 1}}}]}},
            ['unknown field "spec.devices[0].attributes.model.foo"'],
        ),
        (
            SLICE,
            {"spec": {"devices": [{"name": "d", "capacity": {"mem": {"value": "1Gi", "x": 1}}}]}},
            ['unknown field "spec.devices[0].capacity.mem.x"'],
        ),
        (
            CLAIM,
            {
                "spec": {
                    "devices": {
                        "requests": [{"name": "r", "exactly": {"deviceClassName": "c", "count": 1, "zz": True}}]
                    }
                }
            },
            ['unknown field "spec.devices.requests[0].exactly.zz"'],
        ),
        # document order, several at once
        (POD, {"b": 1, "spec": {"q": 1}, "a": 2}, ['unknown field "b"', 'unknown field "spec.q"', 'unknown field "a"']),
        # nested under an unknown field: not descended (Go skips the value)
        (POD, {"spec": {"q": {"r": 1}}}, ['unknown field "spec.q"']),
    ],
)
def test_unknown_fields(root, obj, unknown):
    s = check_structure(obj, root)
    assert s.unknown_fields == unknown
    assert s.type_errors == []


def test_apiversion_and_kind_always_allowed_and_opaque_objects_free():
    assert check_structure({"apiVersion": "v9", "kind": "Whatever"}, POD).ok
    claim = {
        "spec": {"devices": {"config": [{"opaque": {"driver": "d", "parameters": {"anything": {"goes": [1, "x"]}}}}]}}
    }
    assert check_structure(claim, CLAIM).ok
    managed = {"metadata": {"managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {".": {}}}}]}}
    assert check_structure(managed, POD).ok


@pytest.mark.parametrize(
    "root,obj,message",
    [
        (
            POD,
            {"spec": {"containers": "x"}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
        ),
        (POD, {"spec": "x"}, "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"),
        (
            POD,
            {"spec": {"containers": ["x"]}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container",
        ),
        (
            POD,
            {"spec": {"containers": [{"name": 5}]}},
            "json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string",
        ),
        (
            POD,
            {"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}},
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
        (
            POD,
            {"spec": {"containers": [{"ports": [{"containerPort": 1.5}]}]}},
            "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
        (
            POD,
            {"spec": {"containers": [{"ports": [{"containerPort": 2**31}]}]}},
            "json: cannot unmarshal number 2147483648 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
        ),
        (
            POD,
            {"spec": {"hostNetwork": "yes"}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool",
        ),
        (
            POD,
            {"metadata": {"labels": {"a": 1}}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            POD,
            {"metadata": {"labels": []}},
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
        ),
        (
            POD,
            {"metadata": {"creationTimestamp": 5}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
        ),
        (
            CLAIM,
            {"spec": {"devices": {"requests": {"name": "r"}}}},
            "json: cannot unmarshal object into Go struct field DeviceClaim.spec.devices.requests of type []v1.DeviceRequest",
        ),
        (
            DEPLOY,
            {"spec": {"strategy": {"rollingUpdate": {"maxSurge": True}}}},
            "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
        ),
        (SECRET, {"data": {"k": "not base64!"}}, "illegal base64 data at input byte 3"),
        (
            POD,
            {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            POD,
            {"spec": {"containers": [{"resources": {"limits": {"cpu": True}}}]}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
)
def test_type_errors(root, obj, message):
    assert check_structure(obj, root).type_errors == [message]


def test_only_first_type_error_reported_and_fatal_error_wins():
    s = check_structure({"spec": {"hostNetwork": "x", "hostPID": "y"}}, POD)
    assert len(s.type_errors) == 2
    err = decode_error("Pod", "v1", s.type_errors)
    assert err.message.endswith("PodSpec.spec.hostNetwork of type bool")
    # a failing custom unmarshaller (Time) stops decoding: it is the only error
    s = check_structure({"spec": {"hostNetwork": "x"}, "metadata": {"creationTimestamp": "yesterday"}}, POD)
    assert s.type_errors == [
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
    ]


@pytest.mark.parametrize("value", ["25%", 3, "http", 0])
def test_int_or_string_accepts_both(value):
    obj = {"spec": {"strategy": {"rollingUpdate": {"maxSurge": value, "maxUnavailable": value}}}}
    assert check_structure(obj, DEPLOY).ok


@pytest.mark.parametrize("value", ["1", "500m", "1Gi", "1.5", "1e3", "2E6", 2, 0.5, "-1", ".5", " 1 "])
def test_quantity_accepts_strings_and_numbers(value):
    assert valid_quantity(str(value).strip())
    obj = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"memory": value}}}]}}
    assert check_structure(obj, POD).ok


@pytest.mark.parametrize("value", ["", "1Gb", "1.2.3", "abc", "1 Gi", "Gi"])
def test_quantity_rejects(value):
    assert not valid_quantity(value)


def test_nulls_allowed_where_go_accepts_them():
    obj = {
        "metadata": {"labels": None, "creationTimestamp": None, "annotations": {"a": None}},
        "spec": {
            "containers": [None, {"name": "c", "ports": None, "resources": {"limits": {"cpu": None}}}],
            "hostNetwork": None,
            "terminationGracePeriodSeconds": None,
        },
        "status": None,
    }
    assert check_structure(obj, POD).ok
    lease = {"spec": {"holderIdentity": None, "renewTime": None, "leaseDurationSeconds": None}}
    assert check_structure(lease, LEASE).ok


def test_valid_times_and_bytes():
    assert check_structure(
        {"spec": {"renewTime": "2024-01-02T03:04:05.123456Z", "acquireTime": "2024-01-02T03:04:05+02:00"}}, LEASE
    ).ok
    assert check_structure({"data": {"k": "aGVsbG8=", "e": ""}}, SECRET).ok


def test_decode_error_wording():
    err = decode_error("Pod", "v1", ['unknown field "spec.foo"', 'unknown field "x"'])
    assert err.code == 400 and err.reason == "BadRequest"
    assert err.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.foo", unknown field "x"'
    )
    assert err.status()["kind"] == "Status"
    err = decode_error("ResourceClaim", "v1", ["json: cannot unmarshal string into Go struct field X.y of type int32"])
    assert err.message == (
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: '
        "json: cannot unmarshal string into Go struct field X.y of type int32"
    )


def test_warnings_are_the_findings():
    assert unknown_field_warnings(['unknown field "spec.foo"']) == ['unknown field "spec.foo"']
