#!/usr/bin/env python3
"""Vendor kube-apiserver's bootstrap RBAC policy into mockkube/apiserver/resources/bootstrappolicy/.

Upstream keeps the default policy of a fresh cluster (with default feature gates) as golden
files next to the code that builds it, in kubernetes/kubernetes
``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/``: cluster-roles.yaml,
cluster-role-bindings.yaml, controller-roles.yaml, controller-role-bindings.yaml,
namespace-roles.yaml, namespace-role-bindings.yaml. mockkube's server creates its bootstrap
RBAC objects from these files (mockkube/apiserver/resources/rbac_bootstrap.py), and
tests/unit/test_bootstrap_policy.py checks the server's objects against them.

Usage::

    python scripts/update_bootstrappolicy.py --ref v1.36.0   # fetch the six files of a tag
    python scripts/update_bootstrappolicy.py --derive        # controller-role-bindings.yaml
                                                             # from controller-roles.yaml
    python scripts/update_bootstrappolicy.py --compile       # policy.json from the YAML files

The server reads ``policy.json``: every vendored YAML file (and ``v1.36-delta.yaml``) as
parsed, in one JSON document keyed by file name, because parsing the YAML took 15-40 ms of
every start (``--ref`` and ``--derive`` write it again; tests/api/test_bootstrap_policy.py
checks it matches the YAML files).

``--ref`` downloads the files from raw.githubusercontent.com at that tag or commit and
overwrites the vendored copies; after it, ``v1.36-delta.yaml`` (rules known to be in v1.36
that an older snapshot lacks) is redundant and may be emptied.

Where the committed copies come from (the machine they were vendored on could not reach
GitHub; they were copied from a stored index of public repositories, and no copy of the six
files at one v1.36 commit was in it):

==============================  ===========================================================
controller-roles.yaml           kubernetes/kubernetes@008b3652959ca58af8be3fb5b6ecfe9ae7638282
                                (v1.36 development: has ``resourceclaims/binding`` for the
                                resource-claim-controller, DRAResourceClaimGranularStatus-
                                Authorization), byte for byte
namespace-roles.yaml            kubernetes/kubernetes@008b3652..., byte for byte
namespace-role-bindings.yaml    kubernetes/kubernetes@008b3652..., byte for byte
controller-role-bindings.yaml   derived from controller-roles.yaml by ``--derive`` exactly as
                                upstream's ControllerRoleBindings() builds them (one
                                ClusterRoleBinding ``system:controller:<sa>`` to the
                                ServiceAccount kube-system/<sa> per controller role); the
                                stored upstream copies were of other commits
cluster-roles.yaml              aks-lts/kubernetes@ec451e29abeced580a69170d5e4633da583964a6
                                (a v1.34-era snapshot of the same upstream file), byte for
                                byte; what v1.36 adds with default gates and is known is in
                                v1.36-delta.yaml: ``resourceclaims/binding`` (update, patch)
                                for system:kube-scheduler (kubernetes/kubernetes#134947)
cluster-role-bindings.yaml      kubernetes/kubernetes@c60df8997f62f861cf0cd2b13ab62271464589ed
                                in the current encoding (no ``creationTimestamp: null``) with
                                the two bindings added upstream since (system:monitoring,
                                system:service-account-issuer-discovery)
==============================  ===========================================================
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

import yaml

FILES = (
    "cluster-roles.yaml",
    "cluster-role-bindings.yaml",
    "controller-roles.yaml",
    "controller-role-bindings.yaml",
    "namespace-roles.yaml",
    "namespace-role-bindings.yaml",
)
UPSTREAM = (
    "https://raw.githubusercontent.com/kubernetes/kubernetes/{ref}/"
    "plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/{name}"
)
OUT = Path(__file__).resolve().parent.parent / "mockkube" / "apiserver" / "resources" / "bootstrappolicy"
COMPILED = "policy.json"
PREFIX = "system:controller:"

_BINDING = """\
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata:
    annotations:
      rbac.authorization.kubernetes.io/autoupdate: "true"
    labels:
      kubernetes.io/bootstrapping: rbac-defaults
    name: {role}
  roleRef:
    apiGroup: rbac.authorization.k8s.io
    kind: ClusterRole
    name: {role}
  subjects:
  - kind: ServiceAccount
    name: {sa}
    namespace: kube-system
"""


def fetch(ref: str) -> None:
    for name in FILES:
        with urllib.request.urlopen(UPSTREAM.format(ref=ref, name=name), timeout=30) as r:
            (OUT / name).write_bytes(r.read())
        print(f"fetched {name} at {ref}")


def derive_bindings(controller_roles: str) -> str:
    """controller-role-bindings.yaml as upstream's ControllerRoleBindings() makes it: each
    controller role ``system:controller:<sa>`` bound to the ServiceAccount kube-system/<sa>,
    listed by name (the golden test sorts by name) in sigs.k8s.io/yaml's encoding."""
    roles = sorted(r["metadata"]["name"] for r in yaml.safe_load(controller_roles)["items"])
    body = "".join(_BINDING.format(role=r, sa=r[len(PREFIX) :]) for r in roles if r.startswith(PREFIX))
    return f"apiVersion: v1\nitems:\n{body}kind: List\nmetadata: {{}}\n"


def compiled(directory: Path) -> str:
    """policy.json's text: each YAML file of ``directory`` as parsed, keyed by its name."""
    files = sorted(p.name for p in directory.glob("*.yaml"))
    return json.dumps({name: yaml.safe_load((directory / name).read_text()) for name in files}, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ref", help="fetch the six golden files at this kubernetes/kubernetes tag or commit")
    p.add_argument(
        "--derive", action="store_true", help="write controller-role-bindings.yaml from controller-roles.yaml"
    )
    p.add_argument("--compile", action="store_true", help="write policy.json from the YAML files")
    args = p.parse_args(argv)
    if not args.ref and not args.derive and not args.compile:
        p.print_help()
        return 2
    if args.ref:
        fetch(args.ref)
    if args.derive:
        text = derive_bindings((OUT / "controller-roles.yaml").read_text())
        (OUT / "controller-role-bindings.yaml").write_text(text)
        print("derived controller-role-bindings.yaml")
    (OUT / COMPILED).write_text(compiled(OUT))
    print(f"wrote {COMPILED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
