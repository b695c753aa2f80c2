#!/usr/bin/env python3
"""Generate ``mockkube/generated/proto_types.py``: the protobuf field table for request bodies.

client-go's typed clients send protobuf, so the server needs, for every message reachable from
the kinds it accepts, each field's number, proto type and the Go JSON facts (json name,
``omitempty``/``omitzero``, pointer, ``,inline``) that decide how the decoded object looks in
JSON. Field numbers and types come from upstream ``generated.proto``; the JSON facts come from
the Go struct tags in the same package (``json:"..." protobuf:"...,N,..."``, matched by N).

Run (the paths are checkouts or bare git dirs, e.g. the mirrors the ``fetch`` tool makes)::

    .venv/bin/python scripts/gen_proto_types.py \\
        /work/.mirror/kubernetes+api/repo /work/.mirror/kubernetes+apimachinery/repo \\
        --ref v0.36.3 -o mockkube/generated/proto_types.py

``--ref`` is the git ref to read when a path is a git dir (default: HEAD); it is ignored for a
plain directory. Nothing upstream is copied: the output is only the derived table.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

# (apiVersion, kind) -> proto message; the roots of the table.
KINDS: list[tuple[str, str, str]] = [
    ("v1", "Namespace", "k8s.io.api.core.v1.Namespace"),
    ("v1", "Node", "k8s.io.api.core.v1.Node"),
    ("v1", "Pod", "k8s.io.api.core.v1.Pod"),
    ("v1", "Binding", "k8s.io.api.core.v1.Binding"),
    ("v1", "Event", "k8s.io.api.core.v1.Event"),
    ("v1", "ConfigMap", "k8s.io.api.core.v1.ConfigMap"),
    ("v1", "Secret", "k8s.io.api.core.v1.Secret"),
    ("v1", "ServiceAccount", "k8s.io.api.core.v1.ServiceAccount"),
    ("v1", "Service", "k8s.io.api.core.v1.Service"),
    ("policy/v1", "Eviction", "k8s.io.api.policy.v1.Eviction"),
    ("resource.k8s.io/v1", "DeviceClass", "k8s.io.api.resource.v1.DeviceClass"),
    ("resource.k8s.io/v1", "ResourceClaim", "k8s.io.api.resource.v1.ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate", "k8s.io.api.resource.v1.ResourceClaimTemplate"),
    ("resource.k8s.io/v1", "ResourceSlice", "k8s.io.api.resource.v1.ResourceSlice"),
    ("resource.k8s.io/v1beta2", "DeviceTaintRule", "k8s.io.api.resource.v1beta2.DeviceTaintRule"),
    (
        "resource.k8s.io/v1alpha3",
        "ResourcePoolStatusRequest",
        "k8s.io.api.resource.v1alpha3.ResourcePoolStatusRequest",
    ),
    ("resource.k8s.io/v1beta2", "DeviceClass", "k8s.io.api.resource.v1beta2.DeviceClass"),
    ("resource.k8s.io/v1beta2", "ResourceClaim", "k8s.io.api.resource.v1beta2.ResourceClaim"),
    ("resource.k8s.io/v1beta2", "ResourceClaimTemplate", "k8s.io.api.resource.v1beta2.ResourceClaimTemplate"),
    ("resource.k8s.io/v1beta2", "ResourceSlice", "k8s.io.api.resource.v1beta2.ResourceSlice"),
    ("resource.k8s.io/v1beta1", "DeviceClass", "k8s.io.api.resource.v1beta1.DeviceClass"),
    ("resource.k8s.io/v1beta1", "ResourceClaim", "k8s.io.api.resource.v1beta1.ResourceClaim"),
    ("resource.k8s.io/v1beta1", "ResourceClaimTemplate", "k8s.io.api.resource.v1beta1.ResourceClaimTemplate"),
    ("resource.k8s.io/v1beta1", "ResourceSlice", "k8s.io.api.resource.v1beta1.ResourceSlice"),
    ("coordination.k8s.io/v1", "Lease", "k8s.io.api.coordination.v1.Lease"),
    ("events.k8s.io/v1", "Event", "k8s.io.api.events.v1.Event"),
    ("apps/v1", "Deployment", "k8s.io.api.apps.v1.Deployment"),
    ("apps/v1", "ReplicaSet", "k8s.io.api.apps.v1.ReplicaSet"),
    ("autoscaling/v1", "Scale", "k8s.io.api.autoscaling.v1.Scale"),
    ("scheduling.k8s.io/v1", "PriorityClass", "k8s.io.api.scheduling.v1.PriorityClass"),
    ("scheduling.k8s.io/v1alpha2", "Workload", "k8s.io.api.scheduling.v1alpha2.Workload"),
    ("scheduling.k8s.io/v1alpha2", "PodGroup", "k8s.io.api.scheduling.v1alpha2.PodGroup"),
    ("policy/v1", "PodDisruptionBudget", "k8s.io.api.policy.v1.PodDisruptionBudget"),
    ("v1", "PersistentVolumeClaim", "k8s.io.api.core.v1.PersistentVolumeClaim"),
    ("v1", "PersistentVolume", "k8s.io.api.core.v1.PersistentVolume"),
    ("v1", "Endpoints", "k8s.io.api.core.v1.Endpoints"),
    ("v1", "LimitRange", "k8s.io.api.core.v1.LimitRange"),
    ("v1", "PodTemplate", "k8s.io.api.core.v1.PodTemplate"),
    ("storage.k8s.io/v1", "StorageClass", "k8s.io.api.storage.v1.StorageClass"),
    ("storage.k8s.io/v1", "CSIDriver", "k8s.io.api.storage.v1.CSIDriver"),
    ("storage.k8s.io/v1", "CSINode", "k8s.io.api.storage.v1.CSINode"),
    ("storage.k8s.io/v1", "VolumeAttachment", "k8s.io.api.storage.v1.VolumeAttachment"),
    ("discovery.k8s.io/v1", "EndpointSlice", "k8s.io.api.discovery.v1.EndpointSlice"),
    ("networking.k8s.io/v1", "Ingress", "k8s.io.api.networking.v1.Ingress"),
    ("networking.k8s.io/v1", "IngressClass", "k8s.io.api.networking.v1.IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy", "k8s.io.api.networking.v1.NetworkPolicy"),
    ("node.k8s.io/v1", "RuntimeClass", "k8s.io.api.node.v1.RuntimeClass"),
    ("apps/v1", "DaemonSet", "k8s.io.api.apps.v1.DaemonSet"),
    ("apps/v1", "StatefulSet", "k8s.io.api.apps.v1.StatefulSet"),
    ("apps/v1", "ControllerRevision", "k8s.io.api.apps.v1.ControllerRevision"),
    ("batch/v1", "Job", "k8s.io.api.batch.v1.Job"),
    ("batch/v1", "CronJob", "k8s.io.api.batch.v1.CronJob"),
    ("v1", "ReplicationController", "k8s.io.api.core.v1.ReplicationController"),
    ("rbac.authorization.k8s.io/v1", "Role", "k8s.io.api.rbac.v1.Role"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "k8s.io.api.rbac.v1.ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "k8s.io.api.rbac.v1.RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "k8s.io.api.rbac.v1.ClusterRoleBinding"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "k8s.io.api.authorization.v1.SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SubjectAccessReview", "k8s.io.api.authorization.v1.SubjectAccessReview"),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview", "k8s.io.api.authorization.v1.LocalSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "k8s.io.api.authorization.v1.SelfSubjectRulesReview"),
    ("authentication.k8s.io/v1", "SelfSubjectReview", "k8s.io.api.authentication.v1.SelfSubjectReview"),
    ("authentication.k8s.io/v1", "TokenRequest", "k8s.io.api.authentication.v1.TokenRequest"),
    ("authentication.k8s.io/v1", "TokenReview", "k8s.io.api.authentication.v1.TokenReview"),
    ("autoscaling/v1", "HorizontalPodAutoscaler", "k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler"),
    ("autoscaling/v2", "HorizontalPodAutoscaler", "k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest", "k8s.io.api.certificates.v1.CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "k8s.io.api.flowcontrol.v1.FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "PriorityLevelConfiguration",
        "k8s.io.api.flowcontrol.v1.PriorityLevelConfiguration",
    ),
    ("storage.k8s.io/v1", "CSIStorageCapacity", "k8s.io.api.storage.v1.CSIStorageCapacity"),
    ("storage.k8s.io/v1", "VolumeAttributesClass", "k8s.io.api.storage.v1.VolumeAttributesClass"),
    ("networking.k8s.io/v1", "ServiceCIDR", "k8s.io.api.networking.v1.ServiceCIDR"),
    ("networking.k8s.io/v1", "IPAddress", "k8s.io.api.networking.v1.IPAddress"),
    ("meta.k8s.io/v1", "DeleteOptions", "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
    ("v1", "DeleteOptions", "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
]

# Messages with a hand-written JSON form in protobuf.py; they are leaves of the table.
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "k8s.io.api.authentication.v1.ExtraValue",
    "k8s.io.api.authorization.v1.ExtraValue",
    "k8s.io.api.certificates.v1.ExtraValue",
}

SCALARS = {"string", "bool", "int32", "int64", "bytes", "double", "float", "uint32", "uint64"}


class Source:
    """Reads files from a work tree or, for a bare/mirror git dir, from ``ref``."""

    def __init__(self, path: str, ref: str) -> None:
        self.path = path
        self.git = os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects"))
        if not self.git and not os.path.isdir(path):
            raise SystemExit(f"not a directory: {path}")
        self.ref = ref

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", self.path, *args], check=True, capture_output=True, text=True).stdout

    def read(self, rel: str) -> str:
        if self.git:
            return self._git("show", f"{self.ref}:{rel}")
        with open(os.path.join(self.path, rel), encoding="utf-8") as f:
            return f.read()

    def listdir(self, rel: str) -> list[str]:
        if self.git:
            return [p.rsplit("/", 1)[-1] for p in self._git("ls-tree", "--name-only", f"{self.ref}:{rel}").split()]
        return os.listdir(os.path.join(self.path, rel))


@dataclass
class ProtoField:
    number: int
    name: str
    label: str  # "" | "r" | "m"
    type: str  # scalar name or message full name


@dataclass
class GoField:
    json: str
    flags: str  # subset of "opiz": omitempty, pointer, inline, omitzero


@dataclass
class Package:
    messages: dict[str, list[ProtoField]] = field(default_factory=dict)
    go: dict[str, dict[int, GoField]] = field(default_factory=dict)


_MSG = re.compile(r"^message (\w+) \{(.*?)^\}", re.S | re.M)
_FIELD = re.compile(
    r"^\s*(optional|repeated|required)?\s*(map<\s*(\w+)\s*,\s*([\w.]+)\s*>|[\w.]+)"
    r"\s+(\w+)\s*=\s*(\d+)\s*;",
    re.M,
)
_STRUCT = re.compile(r"^type (\w+) struct \{(.*?)^\}", re.S | re.M)
_GOFIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`", re.M)


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def parse_proto(text: str) -> tuple[str, dict[str, list[ProtoField]]]:
    text = _strip_comments(text)
    package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
    messages: dict[str, list[ProtoField]] = {}
    for m in _MSG.finditer(text):
        fields = []
        for f in _FIELD.finditer(m.group(2)):
            label, typ, key, val, name, num = f.groups()
            if key:
                if key != "string":
                    raise SystemExit(f"{m.group(1)}.{name}: map key {key} not supported")
                lab, typ = "m", val
            else:
                lab = "r" if label == "repeated" else ""
            if typ not in SCALARS:
                typ = typ[1:] if typ.startswith(".") else f"{package}.{typ}"
            fields.append(ProtoField(int(num), name, lab, typ))
        messages[f"{package}.{m.group(1)}"] = fields
    return package, messages


def parse_go(text: str) -> dict[str, dict[int, GoField]]:
    """Struct name -> protobuf field number -> json facts, from the struct tags."""
    out: dict[str, dict[int, GoField]] = {}
    for s in _STRUCT.finditer(_strip_comments(text)):
        fields: dict[int, GoField] = {}
        for name, gotype, tag in _GOFIELD.findall(s.group(2)):
            pb = re.search(r'protobuf:"([^"]*)"', tag)
            if not pb or "," not in pb.group(1):
                continue
            number = int(pb.group(1).split(",")[1])
            js = re.search(r'json:"([^"]*)"', tag)
            parts = (js.group(1) if js else "").split(",")
            opts = set(parts[1:])
            flags = ("o" if "omitempty" in opts else "") + ("p" if gotype.startswith("*") else "")
            flags += "z" if "omitzero" in opts else ""
            if not parts[0] and (not name or "inline" in opts):
                # an embedded struct without a json name: Go's JSON promotes its fields
                flags += "i"
            fields[number] = GoField(parts[0], flags)
        out[s.group(1)] = fields
    return out


def package_location(package: str) -> tuple[str, str]:
    """Proto package -> (repo key, directory)."""
    if package.startswith("k8s.io.api."):
        return "api", package[len("k8s.io.api.") :].replace(".", "/")
    if package.startswith("k8s.io.apimachinery."):
        return "apimachinery", package[len("k8s.io.apimachinery.") :].replace(".", "/")
    raise SystemExit(f"unknown proto package {package}")


def load_package(sources: dict[str, Source], package: str) -> Package:
    repo, rel = package_location(package)
    src = sources[repo]
    _, messages = parse_proto(src.read(f"{rel}/generated.proto"))
    pkg = Package(messages=messages)
    for name in sorted(src.listdir(rel)):
        if (
            not name.endswith(".go")
            or name.endswith("_test.go")
            or name.startswith("zz_")
            or name in ("generated.pb.go", "types_swagger_doc_generated.go")
        ):
            continue
        pkg.go.update(parse_go(src.read(f"{rel}/{name}")))
    return pkg


def build(sources: dict[str, Source]) -> dict[str, dict[int, tuple[str, str, str, str]]]:
    packages: dict[str, Package] = {}
    table: dict[str, dict[int, tuple[str, str, str, str]]] = {}
    todo = [msg for _, _, msg in KINDS]
    while todo:
        full = todo.pop()
        if full in table or full in SPECIAL:
            continue
        package, short = full.rsplit(".", 1)
        if package not in packages:
            packages[package] = load_package(sources, package)
        pkg = packages[package]
        if full not in pkg.messages:
            raise SystemExit(f"message {full} not found")
        go = pkg.go.get(short)
        if go is None:
            raise SystemExit(f"no Go struct for {full} (a named slice/map type needs support)")
        entry = {}
        for f in pkg.messages[full]:
            g = go.get(f.number)
            if g is None:
                print(f"warning: {full}.{f.name}: no Go tag, assuming omitempty", file=sys.stderr)
                g = GoField(f.name, "o")
            if g.json == "-":
                continue
            entry[f.number] = (g.json, f.label, f.type, g.flags)
            if f.type not in SCALARS:
                todo.append(f.type)
        table[full] = entry
    return table


def render(table: dict[str, dict[int, tuple[str, str, str, str]]]) -> str:
    lines = [
        '"""GENERATED by scripts/gen_proto_types.py from kubernetes/api + kubernetes/apimachinery.',
        "",
        "Do not edit; regenerate. MESSAGES: message full name -> field number ->",
        "(json name, label, type, flags). label: '' single, 'r' repeated, 'm' map<string, type>.",
        "type: a proto scalar or a message full name. flags: 'o' omitempty, 'z' omitzero,",
        "'p' Go pointer, 'i' embedded (its JSON fields are inlined into the parent).",
        "KINDS: (apiVersion, kind) -> message full name.",
        '"""',
        "",
        "MESSAGES: dict[str, dict[int, tuple[str, str, str, str]]] = {",
    ]
    for name in sorted(table):
        lines.append(f"    {name!r}: {{")
        for num, spec in sorted(table[name].items()):
            lines.append(f"        {num}: {spec!r},")
        lines.append("    },")
    lines.append("}")
    lines.append("")
    lines.append("KINDS: dict[tuple[str, str], str] = {")
    for api_version, kind, msg in KINDS:
        lines.append(f"    ({api_version!r}, {kind!r}): {msg!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("api", help="kubernetes/api checkout or git dir")
    ap.add_argument("apimachinery", help="kubernetes/apimachinery checkout or git dir")
    ap.add_argument("--ref", default="HEAD", help="git ref when the paths are git dirs")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = ap.parse_args(argv)
    sources = {"api": Source(args.api, args.ref), "apimachinery": Source(args.apimachinery, args.ref)}
    text = render(build(sources))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
