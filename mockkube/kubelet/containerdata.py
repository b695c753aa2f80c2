"""What a container sees of its ConfigMaps and Secrets, and the user's canned exec answers,
for the exec shell (mockkube/kubelet/streaming.py): ``envFrom`` and ``configMapKeyRef`` /
``secretKeyRef`` variables, and the files of configMap, secret and projected volumes at
their mount paths (``items``, ``subPath``). Pure: objects come through ``lookup``.
"""

from __future__ import annotations

import base64
import json
from typing import Callable

Lookup = Callable[[str, str, str], "dict | None"]  # (kind, namespace, name) -> object


def data_of(obj: dict | None, kind: str) -> dict[str, str]:
    if not obj:
        return {}
    dec = lambda v: base64.b64decode(v).decode(errors="replace")  # noqa: E731
    if kind == "Secret":
        out = {k: dec(v) for k, v in (obj.get("data") or {}).items()}
        out.update(obj.get("stringData") or {})
        return out
    out = dict(obj.get("data") or {})
    out.update({k: dec(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


def env_from(spec: dict, namespace: str, lookup: Lookup) -> dict[str, str]:
    """The variables ``envFrom`` brings, in order (later sources win)."""
    env: dict[str, str] = {}
    for src in spec.get("envFrom") or ():
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            if key in src:
                data = data_of(lookup(kind, namespace, (src[key] or {}).get("name", "")), kind)
                env.update({src.get("prefix", "") + k: v for k, v in data.items()})
    return env


def key_ref(value_from: dict, namespace: str, lookup: Lookup) -> str | None:
    """A ``configMapKeyRef`` or ``secretKeyRef`` variable's value (None: not such a ref)."""
    for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
        ref = value_from.get(key)
        if ref:
            return data_of(lookup(kind, namespace, ref.get("name", "")), kind).get(ref.get("key", ""), "")
    return None


def volume_files(pod: dict, spec: dict, lookup: Lookup) -> dict[str, str]:
    namespace = pod["metadata"].get("namespace", "default")
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    out: dict[str, str] = {}
    for m in spec.get("volumeMounts") or ():
        vol = volumes.get(m.get("name")) or {}
        sources = []
        if "configMap" in vol:
            sources.append(("ConfigMap", vol["configMap"]))
        if "secret" in vol:
            sources.append(("Secret", dict(vol["secret"], name=vol["secret"].get("secretName", ""))))
        for p in (vol.get("projected") or {}).get("sources") or ():
            for key, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                if key in p:
                    sources.append((kind, p[key]))
        base = m.get("mountPath", "").rstrip("/")
        for kind, src in sources:
            data = data_of(lookup(kind, namespace, src.get("name", "")), kind)
            items = src.get("items")
            pairs = [(i.get("path", ""), data.get(i.get("key", ""))) for i in items] if items else list(data.items())
            for path, content in pairs:
                if content is None:
                    continue
                if m.get("subPath"):
                    if path == m["subPath"]:
                        out[base] = content
                    continue
                out[f"{base}/{path}"] = content
    return out


def canned_answers(text: str | None) -> dict[str, dict]:
    """The ``mockkube.io/exec[.<container>]`` annotation: YAML or JSON mapping a command line
    (its words joined by single spaces) to its stdout, or to ``{stdout, stderr, exitCode}``."""
    if not text:
        return {}
    try:
        import yaml

        data = yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - not YAML: try JSON, else no answers
        try:
            data = json.loads(text)
        except ValueError:
            return {}
    out: dict[str, dict] = {}
    for k, v in data.items() if isinstance(data, dict) else ():
        v = v if isinstance(v, dict) else {"stdout": "" if v is None else str(v)}
        out[" ".join(str(k).split())] = {
            "stdout": str(v.get("stdout", "")),
            "stderr": str(v.get("stderr", "")),
            "exitCode": int(v.get("exitCode", 0) or 0),
        }
    return out
