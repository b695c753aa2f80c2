"""Custom resource structural schemas: validation messages, pruning, defaulting."""

from mockkube.machinery import structural

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "port": {"x-kubernetes-int-or-string": True},
                "note": {"type": "string", "nullable": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    },
}


def test_valid_object_has_no_errors_and_gets_defaults_and_pruning():
    obj = {
        "apiVersion": "x/v1",
        "kind": "W",
        "metadata": {"name": "a"},
        "spec": {"size": 2, "port": "http", "note": None, "bogus": 1, "extra": {"any": 1}},
        "junk": 1,
    }
    assert structural.validate(obj, SCHEMA) == []
    structural.prune_object(obj, SCHEMA)
    structural.default_object(obj, SCHEMA)
    assert obj["spec"] == {"size": 2, "port": "http", "note": None, "extra": {"any": 1}, "color": "red"}
    assert "junk" not in obj and obj["metadata"] == {"name": "a"}


def test_errors_name_the_field_as_upstream():
    errs = structural.validate({"spec": {"size": "big", "color": "pink"}}, SCHEMA)
    text = [str(e) for e in errs]
    assert any("spec.size" in t and "must be of type integer" in t for t in text)
    assert any("spec.color" in t and "Unsupported value" in t for t in text)
    errs = structural.validate({"spec": {"size": 11}}, SCHEMA)
    assert any("less than or equal to 10" in str(e) for e in errs)
    errs = structural.validate({"spec": {}}, SCHEMA)
    assert [e.field for e in errs] == ["spec.size"]
