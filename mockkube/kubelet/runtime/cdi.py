"""CDI (Container Device Interface) as a container runtime applies it: a prepared device's
ID ``vendor/class=name`` names a device in a spec file (JSON or YAML) that the driver wrote
into a CDI directory; the spec's and the device's ``containerEdits`` go into the container.
Of the edits a process can have, environment variables and mounts are applied; device
nodes are bound when they exist on the host; hooks are not run."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field


@dataclass
class Edits:
    env: dict[str, str] = field(default_factory=dict)
    mounts: list[tuple[str, str, bool]] = field(default_factory=list)  # (host path, container path, read-only)
    missing: list[str] = field(default_factory=list)  # IDs that no spec file names


def _specs(dirs: list[str]) -> list[dict]:
    import yaml

    out = []
    for d in dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if not n.endswith((".json", ".yaml", ".yml")):
                continue
            try:
                with open(os.path.join(d, n)) as f:
                    spec = json.load(f) if n.endswith(".json") else yaml.safe_load(f)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            if isinstance(spec, dict):
                out.append(spec)
    return out


def _apply(edits: dict, out: Edits) -> None:
    for e in edits.get("env") or ():
        k, _, v = str(e).partition("=")
        out.env[k] = v
    for m in edits.get("mounts") or ():
        if m.get("hostPath") and m.get("containerPath"):
            out.mounts.append((m["hostPath"], m["containerPath"], "ro" in (m.get("options") or ())))
    for d in edits.get("deviceNodes") or ():
        host = d.get("hostPath") or d.get("path")
        if host and d.get("path") and os.path.exists(host):
            out.mounts.append((host, d["path"], False))


def edits(dirs: list[str], ids: list[str]) -> Edits:
    """The container edits of the CDI devices ``ids`` found in the spec files of ``dirs``."""
    out = Edits()
    if not ids:
        return out
    specs = _specs(dirs)
    for cdi_id in ids:
        kind, _, name = cdi_id.partition("=")
        found = False
        for spec in specs:
            if spec.get("kind") != kind:
                continue
            dev = next((d for d in spec.get("devices") or () if d.get("name") == name), None)
            if dev is None:
                continue
            _apply(spec.get("containerEdits") or {}, out)
            _apply(dev.get("containerEdits") or {}, out)
            found = True
            break
        if not found:
            out.missing.append(cdi_id)
    return out
