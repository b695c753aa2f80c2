import pytest

from mockkube.machinery import names


@pytest.mark.parametrize(
    "value,ok",
    [
        ("my-name", True),
        ("a", True),
        ("123-abc", True),
        ("-a", False),
        ("A", False),
        ("a.b", False),
        ("a" * 63, True),
        ("a" * 64, False),
        ("a\n", False),
    ],
)
def test_dns1123_label(value, ok):
    assert (names.dns1123_label(value) == []) is ok


def test_dns1123_label_messages():
    assert names.dns1123_label("a.b") == ["must not contain dots"]
    assert names.dns1123_label("A") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    assert names.dns1123_label("a" * 64) == ["must be no more than 63 characters"]


@pytest.mark.parametrize(
    "value,ok",
    [
        ("example.com", True),
        ("a", True),
        ("Example.com", False),
        ("a..b", False),
        ("a" * 254, False),
    ],
)
def test_dns1123_subdomain(value, ok):
    assert (names.dns1123_subdomain(value) == []) is ok


@pytest.mark.parametrize(
    "value,msgs",
    [
        ("foo", []),
        ("example.com/foo", []),
        ("Foo_bar.baz", []),
        ("/foo", ["prefix part must be non-empty"]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
    ],
)
def test_qualified_name(value, msgs):
    assert names.qualified_name(value) == msgs


def test_qualified_name_bad_forms():
    assert len(names.qualified_name("")) == 2  # empty + regex, as upstream
    assert names.qualified_name("a/b/c")[0].startswith("a valid label key must consist")
    assert names.qualified_name("Example.com/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")


@pytest.mark.parametrize("value,ok", [("", True), ("v1", True), ("-v", False), ("a" * 64, False)])
def test_label_value(value, ok):
    assert (names.label_value(value) == []) is ok


@pytest.mark.parametrize("value,ok", [("my_name", True), ("_x", True), ("1x", False), ("a-b", False)])
def test_c_identifier(value, ok):
    assert (names.c_identifier(value) == []) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("example.com/gpu", True),
        ("gpu", False),
        ("kubernetes.io/gpu", False),
        ("requests.x/y", False),
        ("example.com/", False),
    ],
)
def test_extended_resource_name(value, ok):
    assert names.is_extended_resource_name(value) is ok


@pytest.mark.parametrize(
    "value,ok",
    [
        ("cpu", True),
        ("memory", True),
        ("hugepages-2Mi", True),
        ("ephemeral-storage", True),
        ("example.com/gpu", False),
        ("example.com/gpu", False),
    ],
)
def test_node_allocatable_resource_name(value, ok):
    assert names.is_node_allocatable_resource_name(value) is ok


def _fields(errs):
    return [(e.type, e.field) for e in errs]


def test_object_meta_cluster_scoped():
    errs = names.validate_object_meta({"name": "x", "namespace": "default"}, False)
    assert _fields(errs) == [("Forbidden", "metadata.namespace")]
    assert errs[0].detail == "not allowed on this type"


def test_object_meta_requires_name_and_namespace():
    errs = names.validate_object_meta({}, True)
    assert _fields(errs) == [("Required", "metadata.name"), ("Required", "metadata.namespace")]
    assert errs[0].detail == "name or generateName is required"


def test_object_meta_generate_name_trailing_dash_ok():
    assert names.validate_object_meta({"generateName": "gpu-", "name": "gpu-abcde", "namespace": "ns"}, True) == []


def test_object_meta_labels_annotations_finalizers_owners():
    meta = {
        "name": "Bad_Name",
        "labels": {"ok": "-bad"},
        "annotations": {"/x": "v"},
        "finalizers": ["orphan", "foregroundDeletion"],
        "ownerReferences": [{"apiVersion": "", "kind": "Pod", "name": "p", "uid": "u"}],
    }
    errs = names.validate_object_meta(meta, False)
    assert _fields(errs) == [
        ("Invalid", "metadata.name"),
        ("Invalid", "metadata.labels"),
        ("Invalid", "metadata.annotations"),
        ("Invalid", "metadata.ownerReferences.apiVersion"),
        ("Invalid", "metadata.finalizers"),
    ]


def test_annotations_total_size():
    errs = names.validate_annotations({"a": "x" * (256 * 1024)}, "metadata.annotations")
    assert _fields(errs) == [("TooLong", "metadata.annotations")]


def test_managed_fields_shape():
    errs = names.validate_managed_fields(
        [{"operation": "Patch", "fieldsType": "X", "manager": "m"}], "metadata.managedFields"
    )
    assert _fields(errs) == [
        ("Invalid", "metadata.managedFields[0].operation"),
        ("Invalid", "metadata.managedFields[0].fieldsType"),
    ]


def test_object_meta_update_immutables():
    old = {
        "name": "a",
        "namespace": "ns",
        "uid": "1",
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "resourceVersion": "5",
        "generation": 2,
    }
    new = dict(old, name="b", uid="2", generation=1)
    errs = names.validate_object_meta_update(new, old)
    assert _fields(errs) == [
        ("Invalid", "metadata.generation"),
        ("Invalid", "metadata.name"),
        ("Invalid", "metadata.uid"),
    ]
    assert errs[1].detail == "field is immutable"


def test_object_meta_update_requires_rv_and_no_new_finalizers_when_deleting():
    old = {"name": "a", "deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["x"], "resourceVersion": "1"}
    new = dict(old, finalizers=["x", "y"], resourceVersion="")
    errs = names.validate_object_meta_update(new, old)
    assert _fields(errs) == [("Forbidden", "metadata.finalizers"), ("Invalid", "metadata.resourceVersion")]
