"""A pod's volumes as directories on the host, for its containers' sandboxes: emptyDir
(one per pod, shared by its containers), ConfigMap, Secret, downward API and projected
volumes (with the ServiceAccount token, ``ca.crt`` and ``namespace``), hostPath; other
kinds (PersistentVolumeClaims, CSI, ephemeral) are an empty directory of the pod's.
Objects come through ``lookup`` (containerdata.Lookup), the token through ``token``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from mockkube.kubelet.containerdata import Lookup, data_of
from mockkube.kubelet.runtime.sandbox import Mount

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TokenFn = Callable[[dict, str, int], str]  # (pod, audience, expirationSeconds) -> token ("" if none)


class VolumeError(Exception):
    """A volume cannot be set up (the kubelet's FailedMount)."""


def _write(d: Path, files: dict[str, bytes]) -> None:
    for rel, content in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)


def _items(data: dict[str, str], items: list | None) -> dict[str, bytes]:
    if not items:
        return {k: v.encode() for k, v in data.items()}
    return {i.get("path", i.get("key", "")): data[i["key"]].encode() for i in items if i.get("key") in data}


def _field(pod: dict, path: str) -> str:
    m = pod.get("metadata") or {}
    if path == "metadata.labels":
        return "\n".join(f'{k}="{v}"' for k, v in sorted((m.get("labels") or {}).items()))
    if path == "metadata.annotations":
        return "\n".join(f'{k}="{v}"' for k, v in sorted((m.get("annotations") or {}).items()))
    for prefix, key in (("metadata.labels['", "labels"), ("metadata.annotations['", "annotations")):
        if path.startswith(prefix):
            return (m.get(key) or {}).get(path[len(prefix) : -2], "")
    return {
        "metadata.name": m.get("name", ""),
        "metadata.namespace": m.get("namespace", ""),
        "metadata.uid": m.get("uid", ""),
        "spec.nodeName": (pod.get("spec") or {}).get("nodeName", ""),
        "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", ""),
        "status.podIP": (pod.get("status") or {}).get("podIP", ""),
        "status.hostIP": (pod.get("status") or {}).get("hostIP", ""),
    }.get(path, "")


def _resource(pod: dict, ref: dict) -> str:
    from mockkube.machinery.quantity import parse_quantity

    c = next(
        (c for c in (pod.get("spec") or {}).get("containers") or () if c.get("name") == ref.get("containerName")),
        ((pod.get("spec") or {}).get("containers") or [{}])[0],
    )
    kind, _, res = ref.get("resource", "").partition(".")
    v = ((c.get("resources") or {}).get(kind) or {}).get(res)
    if v is None:
        return "0"
    q = parse_quantity(str(v))
    div = parse_quantity(str(ref.get("divisor") or "1"))
    import math

    return str(math.ceil(float(q) / (float(div) or 1.0)))


def _downward(pod: dict, items: list) -> dict[str, bytes]:
    out = {}
    for i in items or ():
        if i.get("fieldRef"):
            out[i["path"]] = _field(pod, i["fieldRef"].get("fieldPath", "")).encode()
        elif i.get("resourceFieldRef"):
            out[i["path"]] = _resource(pod, i["resourceFieldRef"]).encode()
    return out


def _object(lookup: Lookup, kind: str, ns: str, src: dict, optional: bool, volume: str) -> dict[str, str]:
    name = src.get("name", "") if kind == "ConfigMap" else src.get("secretName", src.get("name", ""))
    obj = lookup(kind, ns, name)
    if obj is None:
        if optional:
            return {}
        raise VolumeError(f'MountVolume.SetUp failed for volume "{volume}" : {kind.lower()} "{name}" not found')
    return data_of(obj, kind)


def materialize(
    pod: dict, root: Path, lookup: Lookup, token: TokenFn, ca: bytes, host_path: Callable[[str], str] = str
) -> dict[str, str]:
    """Create the pod's volumes under ``root``; volume name -> host path. ``host_path`` maps
    a hostPath of the pod's node to the host's (a node's kubelet directories are its own)."""
    ns = pod["metadata"].get("namespace", "default")
    spec = pod.get("spec") or {}
    out: dict[str, str] = {}
    for v in spec.get("volumes") or ():
        name = v.get("name", "")
        d = root / name
        if v.get("hostPath"):
            hp = v["hostPath"]
            path, typ = host_path(hp.get("path", "")), hp.get("type", "")
            if typ == "DirectoryOrCreate":
                os.makedirs(path, exist_ok=True)
            elif typ == "FileOrCreate" and not os.path.exists(path):
                os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
                open(path, "a").close()
            elif typ == "Directory" and not os.path.isdir(path):
                raise VolumeError(
                    f'MountVolume.SetUp failed for volume "{name}" : hostPath type check failed: {path} is not a directory'
                )
            elif typ == "File" and not os.path.isfile(path):
                raise VolumeError(
                    f'MountVolume.SetUp failed for volume "{name}" : hostPath type check failed: {path} is not a file'
                )
            elif not os.path.exists(path):
                raise VolumeError(
                    f'MountVolume.SetUp failed for volume "{name}" : mount failed: {path}: no such file or directory'
                )
            out[name] = path
            continue
        d.mkdir(parents=True, exist_ok=True)
        out[name] = str(d)
        if v.get("configMap") is not None:
            src = v["configMap"]
            _write(d, _items(_object(lookup, "ConfigMap", ns, src, bool(src.get("optional")), name), src.get("items")))
        elif v.get("secret") is not None:
            src = v["secret"]
            _write(d, _items(_object(lookup, "Secret", ns, src, bool(src.get("optional")), name), src.get("items")))
        elif v.get("downwardAPI") is not None:
            _write(d, _downward(pod, v["downwardAPI"].get("items") or []))
        elif v.get("projected") is not None:
            for s in v["projected"].get("sources") or ():
                if s.get("configMap") is not None:
                    src = s["configMap"]
                    data = _object(lookup, "ConfigMap", ns, src, bool(src.get("optional")), name)
                    _write(d, _items(data, src.get("items")))
                elif s.get("secret") is not None:
                    src = s["secret"]
                    _write(
                        d, _items(_object(lookup, "Secret", ns, src, bool(src.get("optional")), name), src.get("items"))
                    )
                elif s.get("downwardAPI") is not None:
                    _write(d, _downward(pod, s["downwardAPI"].get("items") or []))
                elif s.get("serviceAccountToken") is not None:
                    t = s["serviceAccountToken"]
                    tok = token(pod, t.get("audience", ""), int(t.get("expirationSeconds") or 3600))
                    _write(d, {t.get("path", "token"): tok.encode()})
                elif s.get("clusterTrustBundle") is not None:
                    _write(d, {s["clusterTrustBundle"].get("path", "ca.crt"): ca})
    return out


def service_account(pod: dict, root: Path, token: TokenFn, ca: bytes, automount: bool) -> str | None:
    """The kube-api-access files (token, ca.crt, namespace) the ServiceAccount admission
    plugin projects into every container, when the pod has no such mount of its own."""
    spec = pod.get("spec") or {}
    if not automount or spec.get("automountServiceAccountToken") is False:
        return None
    d = root / "kube-api-access"
    d.mkdir(parents=True, exist_ok=True)
    _write(
        d,
        {
            "token": token(pod, "", 3607).encode(),
            "ca.crt": ca,
            "namespace": pod["metadata"].get("namespace", "default").encode(),
        },
    )
    return str(d)


def mounts(pod: dict, container: dict, vols: dict[str, str], sa_dir: str | None, pod_dir: Path) -> list[Mount]:
    """The container's mounts: its volumeMounts (subPath honoured), the service account's
    directory unless something is mounted there, /etc/hosts and /etc/hostname of the pod."""
    kinds = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    out: list[Mount] = []
    for m in container.get("volumeMounts") or ():
        src = vols.get(m.get("name", ""))
        if src is None:
            continue
        if m.get("subPath"):
            src = os.path.join(src, m["subPath"])
            if not os.path.exists(src):
                os.makedirs(src, exist_ok=True)
        v = kinds.get(m.get("name")) or {}
        ro = bool(m.get("readOnly")) or any(k in v for k in ("configMap", "secret", "downwardAPI", "projected"))
        out.append(Mount(src, m.get("mountPath", ""), ro))
    if sa_dir and not any(os.path.normpath(m.target) == SA_DIR for m in out):
        out.append(Mount(sa_dir, SA_DIR, True))
    for f in ("hosts", "hostname"):
        if (pod_dir / f).exists() and not any(os.path.normpath(m.target) == f"/etc/{f}" for m in out):
            out.append(Mount(str(pod_dir / f), f"/etc/{f}", True))
    return out
