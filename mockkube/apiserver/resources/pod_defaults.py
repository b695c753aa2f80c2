"""Pod defaulting as the v1 defaulters and the admission plugins a default cluster runs
(DefaultTolerationSeconds, ServiceAccount) apply it, so a Pod read back looks like one
read from a real cluster."""

from __future__ import annotations

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"


def _default_container(c: dict) -> None:
    if not isinstance(c, dict):
        return
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    image = c.get("image") or ""
    if "imagePullPolicy" not in c:
        tag = image.rsplit("/", 1)[-1]
        latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
        c["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
    res = c["resources"]
    if isinstance(res, dict) and isinstance(res.get("limits"), dict):
        req = res.setdefault("requests", {})
        if isinstance(req, dict):
            for k, v in res["limits"].items():
                req.setdefault(k, v)  # requests default to limits


def default_pod_spec(spec: dict) -> None:
    """SetDefaults_PodSpec and the container defaults: what every PodSpec gets, pod
    templates of Deployments and ReplicaSets included."""
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            _default_container(c)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")


def default_pod(pod: dict) -> None:
    """A Pod also gets SetDefaults_Pod (enableServiceLinks) and what the default admission
    plugins add (ServiceAccount, DefaultTolerationSeconds); templates do not."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    tols = spec.get("tolerations")
    if tols is None or isinstance(tols, list):
        tols = list(tols or [])
        have = {t.get("key") for t in tols if isinstance(t, dict) and t.get("effect") in (None, "", "NoExecute")}
        for key in (_NOT_READY, _UNREACHABLE):
            if key not in have:
                tols.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
        spec["tolerations"] = tols


def qos_class(spec: dict) -> str:
    """Guaranteed / Burstable / BestEffort from container requests and limits (cpu, memory)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        if not isinstance(c, dict):
            continue
        res = c.get("resources") or {}
        req = res.get("requests") or {}
        lim = res.get("limits") or {}
        for r in ("cpu", "memory"):
            if r in req or r in lim:
                any_set = True
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"
