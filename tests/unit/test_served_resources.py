"""The registry (what is served) and scripts/served_resources.json (what the OpenAPI
documents describe) must agree, so a resource is never served without its documents."""

from __future__ import annotations

import json
from pathlib import Path

from mockkube.apiserver.resources import registry

SERVED = Path(__file__).parents[2] / "scripts" / "served_resources.json"
NOT_IN_OPENAPI = {"log", "exec", "attach", "portforward", "proxy"}  # text and streaming: no object schema


def _doc_resources() -> dict:
    data = json.loads(SERVED.read_text())
    items = data if isinstance(data, list) else data["resources"]
    return {(r["group"], r["version"], r["plural"]): r for r in items}


def test_registry_matches_served_resources_json():
    docs = _doc_resources()
    reg = {(rt.group, rt.version, rt.plural): rt for rt in registry().all()}
    assert set(reg) == set(docs)
    for key, rt in reg.items():
        d = docs[key]
        assert (d["kind"], d["namespaced"]) == (rt.kind, rt.namespaced), key
        assert sorted(d["verbs"]) == sorted(rt.verbs), key
        subs = {s.name: sorted(s.verbs) for s in rt.subresources if s.name not in NOT_IN_OPENAPI}
        assert {s["name"]: sorted(s["verbs"]) for s in d.get("subresources", [])} == subs, key
