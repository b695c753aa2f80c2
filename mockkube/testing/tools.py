"""kubectl and helm run against a cluster's kubeconfig, with per-cluster caches."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml


class ClientTools:
    """kubectl and helm against a cluster with ``kubeconfig`` and ``workdir`` attributes
    (ThreadedCluster and mockkube.Cluster)."""

    kubeconfig: str
    workdir: Path

    def env(self) -> dict:
        env = dict(os.environ)
        env["KUBECONFIG"] = self.kubeconfig
        env["HOME"] = str(self.workdir)  # kubectl/helm caches stay per cluster
        # kubectl and helm live for a fraction of a second but parse megabytes (OpenAPI,
        # cached discovery): Go's default collector (GOGC=100) spends about a fifth of their
        # CPU freeing what exit frees anyway; under `pytest -n` that CPU is another worker's
        env.setdefault("GOGC", "400")
        env.setdefault("HELM_CACHE_HOME", str(self.workdir / "helm-cache"))
        env.setdefault("HELM_CONFIG_HOME", str(self.workdir / "helm-config"))
        env.setdefault("HELM_DATA_HOME", str(self.workdir / "helm-data"))
        return env

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess:
        from mockkube.testing import binaries

        p = subprocess.run(
            [binaries.kubectl(), *args], input=input, capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def helm(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        from mockkube.testing import binaries

        p = subprocess.run([binaries.helm(), *args], capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def kubeconfig_for(
        self,
        user: str | None = None,
        groups: list[str] | tuple[str, ...] = (),
        service_account: str | None = None,
        duration: str = "1h",
    ) -> str:
        """A kubeconfig (its path) whose credential is a bearer token for ``user`` (with
        ``groups``) or for ``service_account`` (``"name"`` in default or ``"namespace/name"``,
        a real TokenRequest token), so every client (kubectl, helm, the Python client) acts
        as them. Needs a cluster with authentication on (``auth=`` / ``authorization_mode=``)."""
        if (user is None) == (service_account is None):
            raise ValueError("give exactly one of user= or service_account=")
        if service_account is not None:
            ns, _, name = service_account.rpartition("/")
            token = self.kubectl("create", "token", name, "-n", ns or "default", "--duration", duration).stdout.strip()
            slug = f"sa-{ns or 'default'}-{name}"
        else:
            body = json.dumps({"user": user, "groups": list(groups)})
            out = self.kubectl("create", "--raw", "/mockkube/v1/tokens", "-f", "-", input=body).stdout
            token = json.loads(out)["token"]
            slug = "user-" + re.sub(r"[^A-Za-z0-9_.-]", "_", user)
        config = yaml.safe_load(Path(self.kubeconfig).read_text())
        for u in config.get("users") or ():
            u["user"] = {"token": token}
        path = Path(self.workdir) / f"kubeconfig-{slug}"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return str(path)
