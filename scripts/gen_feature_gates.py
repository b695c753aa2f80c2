"""Generate mockkube/config/feature_gates_v1.36.json: every feature gate kube-apiserver
v1.36 registers, with its default, stage and lock at 1.36, read from upstream's versioned
feature lists.

Usage::

    python scripts/gen_feature_gates.py --at 1.36 SOURCE.go [SOURCE.go ...] > mockkube/config/feature_gates_v1.36.json

Each SOURCE is Go text holding one or more ``map[featuregate.Feature]featuregate.VersionedSpecs{...}``
literals (and, optionally, the ``X featuregate.Feature = "Name"`` constants that name them).
A later source wins for a gate that two of them list. What kube-apiserver registers:

- kubernetes pkg/features/kube_features.go (``defaultVersionedKubernetesFeatureGates``; its
  ``genericfeatures.*``/``apiextensionsfeatures.*``/``zpagesfeatures.*`` entries are relisted copies)
- k8s.io/apiserver pkg/features/kube_features.go
- k8s.io/apiextensions-apiserver pkg/features/kube_features.go
- k8s.io/component-base featuregate/feature_gate.go (AllAlpha, AllBeta), logs/api/v1 and
  metrics/features and zpages/features kube_features.go
- k8s.io/client-go features/known_features.go (registered through kube's client adapter)

How the committed table was made (the JSON's ``sources`` say the same): the staging
repositories at their ``kubernetes-1.36.1`` tags (``git show kubernetes-1.36.1:PATH`` in
snapshots of k8s.io/apiserver, apiextensions-apiserver, component-base and client-go), and,
for kubernetes' own gates, one complete pkg/features/kube_features.go saved from the search
tool's read_file: the index holds no copy of kubernetes/kubernetes at a v1.36 tag, and the
fullest v1.36 text it has is the fork carlory/kubernetes at 1ba78f50f72912e62015c3ea2cba042455f2be5a,
taken just after release-1.36 branched: its relisted k8s.io/apiserver gates include those
1.36 added (ShardedListAndWatch, DeclarativeValidationBeta, ManifestBasedAdmissionControlConfig)
and none added later (EtcdRangeStream, WatchListCompression), its gates marked "remove in
1.37" are still there,
and its only 1.37 entry (HPAGeneration, beta from 1.37) has no spec at 1.36 and is left out.
So the table is that file evaluated at 1.36, with no overlay. (Earlier tables overlaid the
v1.35 line with a v1.37 DRA/scheduler gate file and a kubernetes/website page.) A newer or
fuller source is one more argument: give it after the others and its gates win.

The same file's ``defaultKubernetesFeatureGateDependencies`` (featuregate's
AddDependencies) becomes the JSON's ``dependencies``: a gate that is on needs every gate it
lists on, which kube-apiserver checks at start-up. Only entries with a dependency matter;
the staging repositories declare none at 1.36.

The Go source is read, never committed; the JSON it makes is. A gate's spec at ``--at`` is its
last entry whose Version (and MinCompatibilityVersion) is not above it, as featuregate's
emulation version picks it; a gate with no entry yet is left out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

CONST_RE = re.compile(r"^\s*(\w+)\s+(?:featuregate\.)?Feature\s*=\s*\"([\w-]+)\"", re.M)
MAP_RE = re.compile(r"map\[(?:featuregate\.)?Feature\](?:featuregate\.)?VersionedSpecs\s*\{")
DEPS_RE = re.compile(r"map\[(?:featuregate\.)?Feature\]\[\](?:featuregate\.)?Feature\s*\{")
DEP_ENTRY_RE = re.compile(r"([\w.]+)\s*:\s*\{([^{}]*)\}")
KEY_RE = re.compile(r"([\w.]+)\s*:\s*\{")
SPEC_FIELD_RE = re.compile(
    r"(\w+)\s*:\s*((?:version\.MustParse\(\"[^\"]*\"\))|(?:version\.MajorMinor\([^)]*\))|[\w.]+)"
)
STAGES = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "GA", "Deprecated": "DEPRECATED", "PreAlpha": "PRE-ALPHA"}


def _strip_comments(text: str) -> str:
    """Go line comments out (the specs hold no string with ``//``)."""
    return re.sub(r"//[^\n]*", "", text)


def _version(expr: str) -> tuple[int, int]:
    m = re.match(r"version\.MustParse\(\"(\d+)\.(\d+)", expr)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.match(r"version\.MajorMinor\(\s*(\d+)\s*,\s*(\d+)\s*\)", expr)
    if m:
        return int(m.group(1)), int(m.group(2))
    raise ValueError(f"unreadable version {expr!r}")


def _block(text: str, start: int) -> tuple[str, int]:
    """The text inside the brace that opens at ``start`` and the index after its close."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    raise ValueError("unbalanced braces")


def _spec(body: str) -> dict:
    fields = dict(SPEC_FIELD_RE.findall(body))
    pre = fields.get("PreRelease", "").split(".")[-1]
    if pre not in STAGES:
        raise ValueError(f"unknown PreRelease in {{{body}}}")
    out = {
        "version": _version(fields["Version"]),
        "default": fields.get("Default") == "true",
        "stage": STAGES[pre],
        "locked": fields.get("LockToDefault") == "true",
    }
    if "MinCompatibilityVersion" in fields:
        out["minCompat"] = _version(fields["MinCompatibilityVersion"])
    return out


def parse_versioned(text: str) -> dict[str, list[dict]]:
    """{gate name: [spec, ...]} from every VersionedSpecs map literal in ``text``."""
    text = _strip_comments(text)
    names = dict(CONST_RE.findall(text))
    out: dict[str, list[dict]] = {}
    for m in MAP_RE.finditer(text):
        inner, _ = _block(text, m.end() - 1)
        pos = 0
        while True:
            k = KEY_RE.search(inner, pos)
            if k is None:
                break
            body, pos = _block(inner, k.end() - 1)
            ident = k.group(1).split(".")[-1]
            specs = [_spec(s) for s in re.findall(r"\{([^{}]*)\}", body)]
            if specs:
                out[names.get(ident, ident)] = specs
    return out


def _ident(expr: str) -> str:
    """``pkg.Name`` and ``featuregate.Feature(pkg.Name)`` both name ``Name``."""
    m = re.fullmatch(r"(?:featuregate\.)?Feature\(([\w.]+)\)", expr.strip())
    return (m.group(1) if m else expr.strip()).split(".")[-1]


def parse_dependencies(text: str) -> dict[str, list[str]]:
    """{gate: [gates it depends on]} from every ``map[Feature][]Feature`` literal in ``text``
    (featuregate's AddDependencies: a gate may be on only while all of these are on)."""
    text = _strip_comments(text)
    names = dict(CONST_RE.findall(text))
    out: dict[str, list[str]] = {}
    for m in DEPS_RE.finditer(text):
        inner, _ = _block(text, m.end() - 1)
        for key, body in DEP_ENTRY_RE.findall(inner):
            deps = [names.get(_ident(d), _ident(d)) for d in body.split(",") if d.strip()]
            if deps:
                name = names.get(_ident(key), _ident(key))
                out[name] = sorted(set(out.get(name, [])) | set(deps))
    return out


def at_version(specs: list[dict], at: tuple[int, int]) -> dict | None:
    """The spec in force at ``at`` (None: the gate does not exist yet)."""
    chosen = None
    for s in sorted(specs, key=lambda s: s["version"]):
        if s["version"] <= at and s.get("minCompat", (0, 0)) <= at:
            chosen = s
    return chosen


def generate(sources: list[tuple[str, str]], at: tuple[int, int]) -> dict:
    """The JSON document: gates at ``at`` from ``sources`` [(label, text)], later ones winning."""
    merged: dict[str, list[dict]] = {}
    deps: dict[str, list[str]] = {}
    for _, text in sources:
        merged.update(parse_versioned(text))
        for name, on in parse_dependencies(text).items():
            deps[name] = sorted(set(deps.get(name, [])) | set(on))
    gates = {}
    for name in sorted(merged):
        s = at_version(merged[name], at)
        if s is None:
            continue
        gates[name] = {"default": s["default"], "stage": s["stage"], "lockToDefault": s["locked"]}
    return {
        "version": f"{at[0]}.{at[1]}",
        "generatedBy": "scripts/gen_feature_gates.py",
        "sources": [label for label, _ in sources],
        "gates": gates,
        "dependencies": {name: on for name, on in sorted(deps.items()) if name in gates and set(on) <= set(gates)},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--at", default="1.36", help="the Kubernetes minor version to evaluate at")
    ap.add_argument("--label", action="append", default=[], help="what each source is (in order), kept in the output")
    ap.add_argument("sources", nargs="+", help="Go files, lowest precedence first")
    args = ap.parse_args(argv)
    major, minor = (int(x) for x in args.at.split("."))
    labels = args.label + [Path(p).name for p in args.sources[len(args.label) :]]
    doc = generate([(label, Path(p).read_text()) for label, p in zip(labels, args.sources)], (major, minor))
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
