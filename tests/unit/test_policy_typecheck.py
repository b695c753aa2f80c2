"""ValidatingAdmissionPolicy type checking against the matched kinds' schemas."""

from __future__ import annotations

from mockkube.apiserver.admission.typecheck import expression_warnings, undefined_fields
from mockkube.apiserver.resources import registry
from mockkube.machinery import schema


def _deployments() -> schema.Node:
    return schema.for_type(registry().get("apps", "v1", "deployments"))


def test_undefined_fields_with_positions():
    root = _deployments()
    assert undefined_fields("object.replicas > 1", root) == [("replicas", 6)]
    assert undefined_fields("object.spec.replicas > 1 && oldObject.spec.replica == 2", root) == [("replica", 42)]
    assert undefined_fields("object.spec.template.spec.containers.all(c, c.image != '')", root) == []
    assert (
        undefined_fields(
            "object.metadata.labels.app == 'x' && object.spec.template.metadata.annotations.x == 'y'", root
        )
        == []
    )  # maps take any key
    assert undefined_fields("object.spec.template.spec.containers[0].imagee == 'x'", root) == [("imagee", 39)]
    assert undefined_fields("params.anything.goes && request.userInfo.username == 'x'", root) == []


def test_warnings_as_upstream_renders_them():
    policy = {
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "resources": ["deployments"],
                        "operations": ["CREATE"],
                    },
                    {"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["CREATE"]},
                ]
            },
            "validations": [{"expression": "object.replicas > 1"}, {"expression": "object.spec.replicas > 1"}],
        }
    }
    assert expression_warnings(policy, registry()) == [
        {
            "fieldRef": "spec.validations[0].expression",
            "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n"
            " | object.replicas > 1\n | ......^",
        }
    ]
