"""kubectl and helm run against a cluster's kubeconfig, with per-cluster caches."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class ClientTools:
    """kubectl and helm against a cluster with ``kubeconfig`` and ``workdir`` attributes
    (ThreadedCluster and mockkube.Cluster)."""

    kubeconfig: str
    workdir: Path

    def env(self) -> dict:
        env = dict(os.environ)
        env["KUBECONFIG"] = self.kubeconfig
        env["HOME"] = str(self.workdir)  # kubectl/helm caches stay per cluster
        env.setdefault("HELM_CACHE_HOME", str(self.workdir / "helm-cache"))
        env.setdefault("HELM_CONFIG_HOME", str(self.workdir / "helm-config"))
        env.setdefault("HELM_DATA_HOME", str(self.workdir / "helm-data"))
        return env

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 60) -> subprocess.CompletedProcess:
        from mockkube.testing import binaries

        p = subprocess.run([binaries.kubectl(), *args], input=input, capture_output=True, text=True,
                           env=self.env(), timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def helm(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        from mockkube.testing import binaries

        p = subprocess.run([binaries.helm(), *args], capture_output=True, text=True, env=self.env(),
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p
