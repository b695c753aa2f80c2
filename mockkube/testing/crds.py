"""Install CustomResourceDefinitions from YAML files, as envtest's ``CRDInstallOptions.Paths``
does for operator tests: every ``*.yaml``/``*.yml``/``*.json`` file given (or found in a
given directory), multi-document files included; objects of other kinds are skipped.

A CRD is served as soon as its create returns (mockkube establishes it in the same
request), so no waiting is needed afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import yaml

_SUFFIXES = (".yaml", ".yml", ".json")


def read_crds(paths: Iterable[str | Path]) -> list[dict]:
    """The CustomResourceDefinitions in ``paths`` (files or directories, not recursive)."""
    out: list[dict] = []
    for p in paths:
        p = Path(p)
        files = sorted(f for f in p.iterdir() if f.suffix in _SUFFIXES) if p.is_dir() else [p]
        for f in files:
            for doc in yaml.safe_load_all(f.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    out.append(doc)
    return out


def install_crds(client: Any, paths: Iterable[str | Path]) -> list[dict]:
    """Create (or replace) the CRDs of ``paths`` through ``client``
    (``mockkube.client.client.Client``); returns them as stored."""
    rt = client.rt("customresourcedefinitions", "apiextensions.k8s.io")
    out = []
    for crd in read_crds(paths):
        name = crd["metadata"]["name"]
        live = client.get(rt, "", name)
        if live is None:
            client.create(rt, crd)
        else:
            crd = dict(crd, metadata=dict(crd["metadata"], resourceVersion=live["metadata"]["resourceVersion"]))
            client.update(rt, crd)
        out.append(client.get(rt, "", name))
    return out
