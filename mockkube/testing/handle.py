"""``mockkube.Cluster``: a cluster for a test suite or a script, with or without pytest.

    with mockkube.Cluster(profile="nodes: []\\n") as cluster:
        cluster.kubectl("get", "nodes")
        cluster.clock.advance(timedelta(minutes=10))
        cluster.reset()

In-process (a server thread in this process; ``cluster.client()`` reaches the store
directly) or ``subprocess=True`` (``mockkube serve`` in a child process). Both speak to the
server over HTTP for everything else, so a test reads the same either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import requests
import yaml

from mockkube.testing import waiting
from mockkube.testing.tools import ClientTools

if TYPE_CHECKING:
    from mockkube.testing.cluster import ThreadedCluster


def profile_file(profile: str | dict | None, workdir: Path) -> str | None:
    """A profile given as a path, inline YAML or a dict, as a file path (None: the demo cluster)."""
    if profile is None:
        return None
    if isinstance(profile, dict):
        text = yaml.safe_dump(profile, sort_keys=False)
    elif "\n" not in profile and os.path.exists(profile):
        return os.path.abspath(profile)
    else:
        text = profile
    path = workdir / "profile.yaml"
    path.write_text(text)
    return str(path)


class ClockControl:
    """The cluster's clock, moved over HTTP (``/mockkube/v1/clock``)."""

    def __init__(self, cluster: "Cluster") -> None:
        self._c = cluster

    def _post(self, body: dict) -> dict:
        return self._c._control("POST", "/mockkube/v1/clock", body)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self._c._control("GET", "/mockkube/v1/clock")["epoch"], tz=timezone.utc)

    @property
    def frozen(self) -> bool:
        return self._c._control("GET", "/mockkube/v1/clock")["frozen"]

    def advance(self, by: timedelta | float | str) -> datetime:
        """Move forward (a timedelta, seconds, or a duration such as "10m")."""
        if isinstance(by, timedelta):
            by = f"{by.total_seconds()}s"
        elif isinstance(by, (int, float)):
            by = f"{float(by)}s"
        return datetime.fromtimestamp(self._post({"advance": by})["epoch"], tz=timezone.utc)

    def set(self, when: datetime) -> datetime:
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        stamp = when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return datetime.fromtimestamp(self._post({"set": stamp})["epoch"], tz=timezone.utc)

    def freeze(self) -> datetime:
        return datetime.fromtimestamp(self._post({"freeze": True})["epoch"], tz=timezone.utc)

    def unfreeze(self) -> datetime:
        return datetime.fromtimestamp(self._post({"freeze": False})["epoch"], tz=timezone.utc)


AUTH_OPTIONS = ("authorization_mode", "token_auth_file", "anonymous_auth")


def _flag_text(value: "dict | str | None") -> str:
    """A ``--feature-gates``/``--runtime-config`` value from a string or a dict (bools as
    true/false), the form both the server and ``mockkube serve`` take."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())


class Cluster(ClientTools):
    """One mockkube cluster: start with ``with`` (or ``start()``/``stop()``)."""

    def __init__(
        self,
        profile: str | dict | None = None,
        *,
        subprocess: bool = False,
        filter_timeout: float | None = None,
        binding_timeout: float | None = None,
        frozen_clock: bool = False,
        control_plane: bool = False,
        db_url: str | None = None,
        workdir: str | None = None,
        auth: dict | bool | None = None,
        feature_gates: "dict[str, bool] | str | None" = None,
        runtime_config: "dict[str, bool | str] | str | None" = None,
        controllers: str = "server",
        node_shards: int = 0,
    ) -> None:
        """``control_plane``: kind's control-plane node and kube-system pods (off by default,
        to keep tests fast; docs/profiles.md). ``auth``: a secured cluster (``True``: Node,RBAC with authentication, as kubeadm's),
        or a dict of ``authorization_mode`` (default "Node,RBAC"), ``token_auth_file``,
        ``anonymous_auth``; the
        kubeconfig then holds an admin token and ``kubeconfig_for()`` hands out others.
        ``feature_gates``, ``runtime_config``: kube-apiserver's ``--feature-gates`` and
        ``--runtime-config`` (a string or a dict), on top of v1.36's defaults and the profile's
        ``featureGates``/``runtimeConfig``. ``controllers``: ``"process"`` runs the controllers
        in ``mockkube controller-manager``, a client of the API (``mockkube serve
        --controllers``). ``node_shards``: the simulated kubelets in that many ``mockkube
        kubelets`` processes (``mockkube serve --node-shards``)."""
        auth = {"authorization_mode": "Node,RBAC"} if auth is True else dict(auth or {})
        unknown = set(auth) - set(AUTH_OPTIONS)
        if unknown:
            raise ValueError(f"mockkube.Cluster(auth=...) takes {', '.join(AUTH_OPTIONS)}; got {sorted(unknown)}")
        if auth:
            auth.setdefault("authorization_mode", "Node,RBAC")
        self.auth = auth
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="mockkube-"))
        self.kubeconfig = str(self.workdir / "kubeconfig")
        self.profile_path = profile_file(profile, self.workdir)
        self.in_subprocess = subprocess
        self.options: dict[str, Any] = {
            "filter_timeout": filter_timeout,
            "binding_timeout": binding_timeout,
            "frozen_clock": frozen_clock,
            "control_plane": control_plane,
            "db_url": db_url,
            "feature_gates": _flag_text(feature_gates),
            "runtime_config": _flag_text(runtime_config),
            "controllers": controllers,
            "node_shards": node_shards,
        }
        self.url = ""
        self.http = requests.Session()
        self.clock = ClockControl(self)
        self._threaded: ThreadedCluster | None = None
        self._proc: Any = None
        self._api_client = None
        self._kinds: dict[str, tuple[str, str, bool]] | None = None

    # -- life cycle ---------------------------------------------------------------------
    def start(self) -> "Cluster":
        t0 = time.perf_counter()
        if self.in_subprocess:
            try:
                self._start_subprocess()
            except BaseException:
                self.stop()  # a server that started but did not settle must not outlive the caller
                raise
        else:
            from mockkube.testing.clock import FakeClock
            from mockkube.testing.cluster import ThreadedCluster

            o = self.options
            self._threaded = ThreadedCluster(
                workdir=str(self.workdir),
                cluster=self.profile_path,
                db_url=o["db_url"],
                binding_timeout=o["binding_timeout"],
                filter_timeout=o["filter_timeout"],
                control_plane=o["control_plane"],
                feature_gates=o["feature_gates"] or None,
                runtime_config=o["runtime_config"] or None,
                clock=FakeClock(time.time()) if o["frozen_clock"] else None,
                controllers=o["controllers"],
                node_shards=o["node_shards"],
                **self.auth,
            ).start()
            self._threaded.settled()
            self.url = self._threaded.url
        self._use_kubeconfig_token()
        self.start_seconds = time.perf_counter() - t0
        return self

    def _start_subprocess(self) -> None:
        o = self.options
        cmd = [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--kubeconfig", self.kubeconfig]
        if self.profile_path:
            cmd += ["--cluster", self.profile_path]
        if o["db_url"]:
            cmd += ["--db", o["db_url"]]
        cmd += ["--control-plane" if o["control_plane"] else "--no-control-plane"]
        if o["filter_timeout"] is not None:
            cmd += ["--dra-filter-timeout", f"{o['filter_timeout']}s"]
        if o["binding_timeout"] is not None:
            cmd += ["--binding-timeout", f"{o['binding_timeout']}s"]
        if o["feature_gates"]:
            cmd += ["--feature-gates", o["feature_gates"]]
        if o["runtime_config"]:
            cmd += ["--runtime-config", o["runtime_config"]]
        if o["controllers"] != "server":
            cmd += ["--controllers", o["controllers"]]
        if o["node_shards"]:
            cmd += ["--node-shards", str(o["node_shards"])]
        a = self.auth
        if a.get("authorization_mode"):
            cmd += ["--authorization-mode", a["authorization_mode"]]
        if a.get("token_auth_file"):
            cmd += ["--token-auth-file", a["token_auth_file"]]
        if "anonymous_auth" in a:
            cmd += [f"--anonymous-auth={str(bool(a['anonymous_auth'])).lower()}"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline()
        if not line.startswith("mockkube ready at "):
            self._proc.kill()
            raise RuntimeError(f"mockkube serve did not start: {line!r}")
        self.url = line.split()[-1]
        self._use_kubeconfig_token()
        self._control("POST", "/mockkube/v1/settle")
        if o["frozen_clock"]:
            self.clock.freeze()

    def _use_kubeconfig_token(self) -> None:
        """Control calls carry the kubeconfig's (admin) credentials and trust, as kubectl does."""
        import base64

        import yaml

        config = yaml.safe_load(Path(self.kubeconfig).read_text())
        cluster = (config.get("clusters") or [{}])[0].get("cluster") or {}
        user = (config.get("users") or [{}])[0].get("user") or {}

        def save(name: str, b64: str) -> str:
            path = self.workdir / name
            path.write_bytes(base64.b64decode(b64))
            path.chmod(0o600)
            return str(path)

        if cluster.get("certificate-authority-data"):
            self.http.verify = save("http-ca.crt", cluster["certificate-authority-data"])
            self.http.trust_env = False  # else REQUESTS_CA_BUNDLE in the environment wins over verify
        if user.get("client-certificate-data"):
            self.http.cert = (
                save("http-client.crt", user["client-certificate-data"]),
                save("http-client.key", user["client-key-data"]),
            )
        elif user.get("token"):
            self.http.headers["Authorization"] = f"Bearer {user['token']}"

    def stop(self) -> None:
        if self._threaded is not None:
            self._threaded.stop()
            self._threaded = None
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None
        if self._api_client is not None:
            self._api_client.close()
            self._api_client = None
        self.http.close()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- controls -------------------------------------------------------------------------
    def _control(self, method: str, path: str, body: dict | None = None) -> dict:
        r = self.http.request(method, self.url + path, json=body, timeout=60)
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
        return r.json()

    def reset(self) -> dict:
        """Back to the state the cluster settled into after start (objects, allocations,
        driver and kubelet state, clock, injected faults); resourceVersions keep rising."""
        return self._control("POST", "/mockkube/v1/reset")  # kinds it removed answer 404, as on the server

    # -- clients ----------------------------------------------------------------------------
    @property
    def api_client(self):
        """An official-Python-client ``ApiClient`` configured for this cluster."""
        if self._api_client is None:
            from kubernetes import client, config

            cfg = client.Configuration()
            config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
            self._api_client = client.ApiClient(cfg)
        return self._api_client

    def client(self, manager: str = "test"):
        """The in-process store client (in-process clusters only)."""
        if self._threaded is None:
            raise RuntimeError("client() needs an in-process cluster (subprocess=False)")
        return self._threaded.client(manager)

    @property
    def server(self):
        """The in-process ``mockkube.server.server.Server`` (in-process clusters only)."""
        if self._threaded is None:
            raise RuntimeError("server needs an in-process cluster (subprocess=False)")
        return self._threaded.server

    # -- namespaces and objects -------------------------------------------------------------
    def install_crds(self, *paths: str) -> list[dict]:
        """Create (or replace) the CustomResourceDefinitions in these YAML files or
        directories, as envtest's CRDInstallOptions.Paths; they are served when this returns
        (a reset removes CRDs installed after the cluster settled, like any other object)."""
        from mockkube.testing.crds import read_crds

        out = []
        base = self.url + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        for crd in read_crds(paths):
            name = crd["metadata"]["name"]
            live = self.http.get(f"{base}/{name}", timeout=60)
            if live.status_code == 404:
                r = self.http.post(base, json=crd, timeout=60)
            else:
                live.raise_for_status()
                body = dict(
                    crd, metadata=dict(crd["metadata"], resourceVersion=live.json()["metadata"]["resourceVersion"])
                )
                r = self.http.put(f"{base}/{name}", json=body, timeout=60)
            if r.status_code >= 400:
                raise RuntimeError(f"installing CRD {name}: {r.status_code} {r.text}")
            out.append(self.http.get(f"{base}/{name}", timeout=60).json())
        self._kinds = None  # discovery changed
        return out

    def create_namespace(self, prefix: str = "test") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        r = self.http.post(self.url + "/api/v1/namespaces", json={"metadata": {"name": name}}, timeout=60)
        r.raise_for_status()
        return name

    def delete_namespace(self, name: str) -> None:
        self.http.delete(f"{self.url}/api/v1/namespaces/{name}", timeout=60)

    def resource_path(self, kind: str, namespace: str | None = None) -> str:
        """The collection URL path for a kind, plural, singular or short name (kubectl's
        spelling), found through discovery, so custom resources work too."""
        hit = self._kinds.get(kind.lower()) if self._kinds is not None else None
        if hit is None:  # first use, or a kind served since (a CRD applied by kubectl): ask again
            self._kinds = _discover(self.http, self.url)
            hit = self._kinds.get(kind.lower())
        if hit is None:
            raise KeyError(f"the server doesn't have a resource type {kind!r}")
        prefix, plural, namespaced = hit
        if namespaced:
            return f"{prefix}/namespaces/{namespace or 'default'}/{plural}"
        return f"{prefix}/{plural}"

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        r = self.http.get(f"{self.url}{self.resource_path(kind, namespace)}/{name}", timeout=60)
        if r.status_code == 404:
            return None
        r.raise_for_status()
        return r.json()

    # -- waiting (watches, never sleeps) ------------------------------------------------------
    def wait_for(
        self,
        kind: str,
        name: str,
        condition: str | Callable[[dict], bool],
        namespace: str | None = None,
        timeout: float = 30.0,
    ) -> dict:
        """Watch ``kind/name`` until ``condition`` holds and return the object. A string is a
        condition type that must be True (``"Ready"``, ``"Complete"``); a callable gets the
        object. ``"deleted"`` waits for the object to be gone (returns {})."""
        return waiting.watch_until(
            self.http, self.url + self.resource_path(kind, namespace), name, waiting.as_predicate(condition), timeout
        )

    def wait_for_pod_phase(
        self, name: str, phase: str = "Running", namespace: str | None = None, timeout: float = 30.0
    ) -> dict:
        return self.wait_for("pods", name, lambda o: (o.get("status") or {}).get("phase") == phase, namespace, timeout)

    def wait_for_claim_allocated(self, name: str, namespace: str | None = None, timeout: float = 30.0) -> dict:
        return self.wait_for(
            "resourceclaims", name, lambda o: bool((o.get("status") or {}).get("allocation")), namespace, timeout
        )


def _discover(http: requests.Session, url: str) -> dict[str, tuple[str, str, bool]]:
    out: dict[str, tuple[str, str, bool]] = {}

    def add(prefix: str, resources: list[dict]) -> None:
        for r in resources:
            if "/" in r["name"]:
                continue
            entry = (prefix, r["name"], r.get("namespaced", False))
            for key in [r["name"], r.get("singularName") or "", r.get("kind", ""), *(r.get("shortNames") or [])]:
                if key:
                    out.setdefault(key.lower(), entry)

    add("/api/v1", http.get(url + "/api/v1", timeout=60).json()["resources"])
    for g in http.get(url + "/apis", timeout=60).json()["groups"]:
        gv = g["preferredVersion"]["groupVersion"]
        add(f"/apis/{gv}", http.get(f"{url}/apis/{gv}", timeout=60).json()["resources"])
    return out
