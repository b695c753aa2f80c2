"""Pure logic of custom resources: printer-column JSONPath, CEL rules (transition rules,
reasons, fieldPath, messageExpression, optionalOldSelf), the Kubernetes CEL libraries,
pruning with reports, CRD validation messages and version order."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mockkube.apiserver import crdcel
from mockkube.apiserver.http.tables_custom import PrinterColumns
from mockkube.apiserver.resources.apiextensions_validation import validate_crd, validate_structural
from mockkube.apiserver.resources.customresources import served_types
from mockkube.cel import CELError, compile_with
from mockkube.machinery import structural
from mockkube.machinery.customresource import version_priority
from mockkube.machinery.fielderrors import Path
from mockkube.machinery.jsonpath import find, parse

OBJ = {
    "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"replicas": 3, "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]},
    "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]},
}


@pytest.mark.parametrize(
    "path,want",
    [
        (".spec.replicas", [3]),
        ("{.spec.ports[1].name}", ["b"]),
        (".spec.ports[*].port", [1, 2]),
        ('.status.conditions[?(@.type=="Synced")].status', ["False"]),
        (r".metadata.labels.app\.kubernetes\.io/name", ["web"]),
        (".spec.missing", []),
    ],
)
def test_jsonpath(path, want):
    assert find(OBJ, parse(path)) == want


def test_printer_columns_cells_and_default_age():
    now = datetime(2026, 1, 3, tzinfo=timezone.utc)
    p = PrinterColumns(
        [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
            {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
            {"name": "Created", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
    )
    assert [c["name"] for c in p.columns()] == ["Name", "Replicas", "Ready", "Missing", "Created"]
    assert p.cells(OBJ, now) == ["x", 3, "True", None, "2d"]
    default = PrinterColumns([])
    assert [c["name"] for c in default.columns()] == ["Name", "Age"]


SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' > max'"},
                {
                    "rule": "self.max >= oldSelf.max",
                    "reason": "FieldValueForbidden",
                    "message": "max may not shrink",
                    "fieldPath": ".max",
                },
                {
                    "rule": "!oldSelf.hasValue() || oldSelf.value().name == self.name",
                    "optionalOldSelf": True,
                    "reason": "FieldValueRequired",
                    "message": "name is fixed",
                },
            ],
            "properties": {
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "name": {"type": "string"},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {
                        "type": "object",
                        "properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
                        "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v grows"}],
                    },
                },
            },
        }
    },
}


def _msgs(obj, old=None):
    return [str(e) for e in crdcel.validate(obj, old, SCHEMA)]


def test_cel_rules_on_create():
    assert _msgs({"spec": {"min": 5, "max": 1, "name": "a"}}) == ['spec: Invalid value: "object": min 5 > max']
    assert _msgs({"spec": {"min": 1, "max": 5, "name": "a"}}) == []


def test_cel_transition_rules_correlate_old_values():
    old = {"spec": {"min": 1, "max": 5, "name": "a", "items": [{"k": "x", "v": 3}, {"k": "y", "v": 1}]}}
    new = {
        "spec": {"min": 1, "max": 4, "name": "b", "items": [{"k": "y", "v": 0}, {"k": "x", "v": 4}, {"k": "z", "v": 0}]}
    }
    assert _msgs(new, old) == [
        "spec.max: Forbidden: max may not shrink",
        "spec: Required value: name is fixed",
        'spec.items[0]: Invalid value: "object": v grows',
    ]


def test_cel_rule_that_is_not_a_transition_rule_does_not_need_old():
    assert crdcel.is_transition_rule("self.x == oldSelf.x")
    assert not crdcel.is_transition_rule("self.oldSelfish == 1")


@pytest.mark.parametrize(
    "expr,want",
    [
        ("'abc123def'.find('[0-9]+')", "123"),
        ("'a1b22'.findAll('[0-9]+')", ["1", "22"]),
        ("url('https://example.com:8443/p?q=1').getHost()", "example.com:8443"),
        ("url('https://example.com:8443/p').getPort()", "8443"),
        ("isURL('not a url')", False),
        ("ip('10.0.0.1').family()", 4),
        ("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", True),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
        ("isCIDR('10.0.0.0/33')", False),
        ("[1, 2, 1].lastIndexOf(1)", 2),
        ("[1, 2, 3].isSorted() && [1, 2].sum() == 3", True),
        ("quantity('1Gi').isGreaterThan(quantity('1Mi'))", True),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
    ],
)
def test_kubernetes_cel_libraries(expr, want):
    assert compile_with(expr, ()).evaluate({}) == want


@pytest.mark.parametrize(
    "rule,value,ok",
    [
        ("!format.dns1123Label().validate(self).hasValue()", "good-name", True),
        ("!format.dns1123Label().validate(self).hasValue()", "Bad_Name", False),
        (
            'format.named("uuid").value().validate(self).orValue([]).size() == 0',
            "123e4567-e89b-12d3-a456-426614174000",
            True,
        ),
        ('!format.named("no-such-format").hasValue()', "x", True),
    ],
)
def test_cel_format_library(rule, value, ok):
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"name": {"type": "string", "x-kubernetes-validations": [{"rule": rule}]}},
            }
        },
    }
    assert (crdcel.validate({"spec": {"name": value}}, None, schema) == []) is ok


def test_cel_compile_error_message():
    with pytest.raises(CELError) as e:
        crdcel.compile_rule("self.x <")
    assert str(e.value).startswith("compilation failed: ERROR: <input>:1:")


def test_prune_unknown_reports_paths_and_keeps_embedded_metadata():
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "tpl": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {"x": {"type": "string"}},
                    },
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
                },
            }
        },
    }
    obj = {
        "apiVersion": "g/v1",
        "kind": "K",
        "metadata": {"name": "x"},
        "top": 1,
        "spec": {
            "a": "1",
            "b": 2,
            "tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": "y", "z": 1},
            "free": {"any": {"thing": 1}},
            "list": [{"n": "a", "m": 1}],
        },
    }
    found = structural.prune_unknown(obj, schema)
    assert found == [
        'unknown field "top"',
        'unknown field "spec.b"',
        'unknown field "spec.tpl.z"',
        'unknown field "spec.list[0].m"',
    ]
    assert obj["spec"]["tpl"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": "y"}
    assert obj["spec"]["free"] == {"any": {"thing": 1}}


def test_structural_schema_errors():
    errs = [
        str(e)
        for e in validate_structural(
            {
                "properties": {
                    "spec": {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
                    "l": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}},
                    "n": {"type": "integer", "x-kubernetes-int-or-string": True},
                }
            },
            Path("s"),
        )
    ]
    assert errs == [
        "s.type: Required value: must not be empty at the root",
        "s.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
        "s.properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
        "s.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type "
        "is map",
        's.properties[n].type: Invalid value: "integer": must be empty if x-kubernetes-int-or-string is true',
    ]


def _crd(**spec) -> dict:
    base = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "things", "kind": "Thing", "listKind": "ThingList"},
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
        ],
    }
    base.update(spec)
    return {"metadata": {"name": "things.example.com"}, "spec": base}


def test_crd_validation_messages():
    assert validate_crd(_crd()) == []
    errs = [
        str(e)
        for e in validate_crd(
            _crd(
                group="example",
                scope="Global",
                versions=[
                    {"name": "v1", "served": True, "storage": False},
                    {"name": "V2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}},
                ],
            )
        )
    ]
    assert 'metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group' in errs
    assert 'spec.group: Invalid value: "example": should be a domain with at least one dot' in errs
    assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in errs
    assert "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required" in errs
    assert any(
        e.startswith("spec.versions: Invalid value: ")
        and e.endswith("must have exactly one version marked as storage version")
        for e in errs
    )
    assert any(e.startswith('spec.versions[1].name: Invalid value: "V2"') for e in errs)


def test_versions_sort_kube_aware_and_unserved_are_skipped():
    assert sorted(["v1alpha1", "foo", "v2", "v1beta2", "v1", "v1beta1"], key=version_priority) == [
        "v2",
        "v1",
        "v1beta2",
        "v1beta1",
        "v1alpha1",
        "foo",
    ]
    crd = _crd(
        versions=[
            {"name": "v1beta1", "served": True, "storage": False},
            {"name": "v1", "served": True, "storage": True},
            {"name": "v1alpha1", "served": False, "storage": False},
        ]
    )
    assert [rt.version for rt in served_types(crd)] == ["v1", "v1beta1"]


def test_schema_formats_and_list_duplicates():
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "at": {"type": "string", "format": "date-time"},
                    "ip": {"type": "string", "format": "ipv4"},
                    "own": {"type": "string", "format": "not-a-format"},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                },
            }
        },
    }
    obj = {
        "spec": {
            "at": "yesterday",
            "ip": "::1",
            "own": "x",
            "tags": ["a", "a"],
            "ports": [{"name": "p"}, {"name": "p"}],
        }
    }
    assert [str(e) for e in structural.validate(obj, schema)] == [
        'spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday"',
        'spec.ip: Invalid value: "::1": spec.ip in body must be of type ipv4: "::1"',
    ]
    assert [str(e) for e in structural.list_errors(obj, schema)] == [
        'spec.tags[1]: Duplicate value: "a"',
        'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"p"}',
    ]


def test_unsupported_keywords_and_bad_defaults():
    errs = [
        str(e)
        for e in validate_structural(
            {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "properties": {
                            "r": {"type": "integer", "default": "x"},
                            "l": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
                            "o": {"type": "object", "additionalProperties": False},
                            "p": {"type": "object", "patternProperties": {}},
                            "u": {"type": "object", "x-kubernetes-preserve-unknown-fields": False},
                        },
                    }
                },
            },
            Path("s"),
        )
    ]
    p = "s.properties[spec].properties"
    assert errs == [
        f'{p}[r].default: Invalid value: "string": default in body must be of type integer: "string"',
        f"{p}[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes "
        "quadratic",
        f"{p}[o].additionalProperties: Forbidden: additionalProperties cannot be set to false",
        f"{p}[p].patternProperties: Forbidden: patternProperties is not supported",
        f"{p}[u].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
    ]


def test_transition_rules_only_on_correlatable_nodes():
    rule = {"rule": "self == oldSelf"}
    errs = [
        str(e)
        for e in validate_structural(
            {
                "type": "object",
                "properties": {
                    "atomic": {"type": "array", "items": {"type": "object", "x-kubernetes-validations": [rule]}},
                    "keyed": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": {
                            "type": "object",
                            "properties": {"k": {"type": "string"}},
                            "x-kubernetes-validations": [rule],
                        },
                    },
                },
            },
            Path("s"),
        )
    ]
    assert errs == [
        's.properties[atomic].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
        "oldSelf cannot be used on the uncorrelatable portion of the schema within "
        "s.properties[atomic].items"
    ]


def test_cel_runtime_cost_limits():
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "xs": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x + y >= 0))"}],
                    }
                },
            }
        },
    }
    small = {"spec": {"xs": list(range(10))}}
    assert crdcel.validate(small, None, schema) == []
    big = {"spec": {"xs": list(range(500))}}  # 250,000 inner steps of 6: over the per-call limit
    assert [str(e) for e in crdcel.validate(big, None, schema)] == [
        "spec.xs: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation "
        "rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x + y >= 0))"
    ]
    assert [str(e) for e in crdcel.validate(big, None, schema, budget=50_000)] == [
        'spec.xs: Invalid value: "array": validation failed due to running out of cost budget, no further '
        "validation rules will be run"
    ]


def test_embedded_resources_need_api_version_and_kind():
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "templates": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": True,
                            "x-kubernetes-preserve-unknown-fields": True,
                        },
                    }
                },
            }
        },
    }
    obj = {"spec": {"templates": [{"apiVersion": "v1", "kind": "Pod"}, {"kind": "Pod"}]}}
    assert [str(e) for e in structural.embedded_errors(obj, schema)] == [
        "spec.templates[1].apiVersion: Required value: must not be empty"
    ]


FORMATTED = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.expiry > self.start", "message": "expiry before start"},
                {"rule": "self.start + self.grace <= timestamp('2030-01-01T00:00:00Z')", "message": "too late"},
                {"rule": "self.day.getDayOfWeek() == 1", "message": "not a monday"},
                {"rule": "size(self.blob) == 3", "message": "blob size"},
                {"rule": "self.windows.all(w, w > duration('0s'))", "message": "bad window"},
            ],
            "properties": {
                "start": {"type": "string", "format": "date-time"},
                "expiry": {"type": "string", "format": "date-time"},
                "grace": {"type": "string", "format": "duration"},
                "day": {"type": "string", "format": "date"},
                "blob": {"type": "string", "format": "byte"},
                "windows": {"type": "array", "items": {"type": "string", "format": "duration"}},
            },
        }
    },
}


def test_cel_rules_see_date_time_duration_date_and_byte_formats_typed():
    # upstream's UnstructuredToVal: date-time/date are timestamps, duration durations, byte bytes
    spec = {
        "start": "2024-05-06T10:00:00Z",
        "expiry": "2024-05-06T11:00:00.5+01:00",
        "grace": "1h30m",
        "day": "2024-05-06",
        "blob": "YWJj",
        "windows": ["5m", "1s"],
    }
    assert [str(e) for e in crdcel.validate({"spec": spec}, None, FORMATTED)] == []
    late = dict(spec, expiry="2024-05-06T10:59:00+01:00", windows=["0s"])
    assert [str(e) for e in crdcel.validate({"spec": late}, None, FORMATTED)] == [
        'spec: Invalid value: "object": expiry before start',
        'spec: Invalid value: "object": bad window',
    ]
    # the values rules see; a schema without those formats leaves the object as it is
    got = crdcel.cel_value({"spec": spec}, FORMATTED)
    assert crdcel.cel_value(spec, {"type": "object"}) is spec
    assert got["spec"]["blob"] == b"abc" and got["spec"]["windows"][0].ns == 300 * 10**9
    # a date-time keeps the offset it was written with, as Go's time.Time does
    assert got["spec"]["expiry"].offset == 3600


def test_pattern_is_go_regexp():
    """upstream apiextensions validation_test "invalid regex pattern": a CRD's pattern must
    compile as Go's regexp; objects are matched as Go matches ($ is the end of the text)."""
    errs = [
        str(e)
        for e in validate_structural(
            {"type": "object", "properties": {"foo": {"type": "string", "pattern": "+"}}},
            Path("spec.versions[0].schema.openAPIV3Schema"),
        )
    ]
    assert errs == [
        'spec.versions[0].schema.openAPIV3Schema.properties[foo].pattern: Invalid value: "+": must be a valid '
        "regular expression, but isn't: error parsing regexp: missing argument to repetition operator: `+`"
    ]
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert structural.validate({"s": "abc"}, schema) == []
    assert [str(e) for e in structural.validate({"s": "abc\n"}, schema)] == [
        "s: Invalid value: \"abc\\n\": s in body should match '^[a-z]+$'"
    ]
