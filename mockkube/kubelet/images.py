"""What mockkube knows of images without pulling them: what well-known images listen on
by default, so port-forward to a simulated container of such an image reaches what the real
one serves (``nginx`` answers HTTP on port 80 with its default welcome page; pod annotations
still override the answer, docs/exec.md); which images have no entrypoint (their args are the
command) and which are kind's own; and so which containers the process runtime runs and
which keep a simulated main process (``runs_program``)."""

from __future__ import annotations

from typing import Callable

from mockkube.kubelet.lifecycle import normalize_image

NGINX_WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""

# image repository name (the last path segment, without tag or digest) -> {port: (content type, body)}
DEFAULT_LISTENERS: dict[str, dict[int, tuple[str, str]]] = {
    "nginx": {80: ("text/html", NGINX_WELCOME)},
}


# images with no ENTRYPOINT (busybox's and the distributions' CMD is a shell, python's is
# python3): a container's args alone are the command it runs
NO_ENTRYPOINT_IMAGES = frozenset(
    {
        "busybox",
        "alpine",
        "ubuntu",
        "debian",
        "fedora",
        "centos",
        "rockylinux",
        "almalinux",
        "archlinux",
        "bash",
        "python",
    }
)

# kind's own images (the control plane's static pods, kube-proxy, kindnet, CoreDNS): their
# programs are not on the host, so the process runtime simulates their containers
KIND_IMAGES = frozenset(
    {
        "registry.k8s.io/etcd",
        "registry.k8s.io/kube-apiserver",
        "registry.k8s.io/kube-controller-manager",
        "registry.k8s.io/kube-scheduler",
        "registry.k8s.io/kube-proxy",
        "registry.k8s.io/coredns/coredns",
        "docker.io/kindest/kindnetd",
    }
)


def repository(image: str) -> str:
    """``docker.io/library/nginx:1.27@sha256:...`` -> ``nginx``."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def listeners(container: dict) -> dict[int, tuple[str, str]]:
    """The ports a container of a well-known image listens on, with what each answers."""
    return dict(DEFAULT_LISTENERS.get(repository(container.get("image") or ""), {}))


def repository_path(image: str) -> str:
    """``nginx:1.27`` -> ``docker.io/library/nginx``: the normalized reference without tag or
    digest (as the kubelet reports images, docker.io and library/ made explicit)."""
    name = normalize_image(image).split("@", 1)[0]
    head, _, last = name.rpartition("/")
    return f"{head}/{last.split(':', 1)[0]}"


def lookup(table: dict, image: str):
    """What ``kubelet.images`` maps an image to, by the reference as written or normalized
    as the kubelet reports it (on either side), or None."""
    if not table:
        return None
    if image in table:
        return table[image]
    want = normalize_image(image)
    return next((v for k, v in table.items() if k == want or normalize_image(k) == want), None)


def runs_program(c: dict, mapped: Callable[[str], bool]) -> bool:
    """Whether a container runs a program of its own in the process runtime: a command, an
    image ``mapped`` to an entrypoint (``kubelet.images``), or args given to an image without
    an entrypoint (busybox, python). Otherwise its main process is simulated, and so is
    every container of kind's own images, whose programs the host does not have."""
    image = c.get("image") or ""
    if repository_path(image) in KIND_IMAGES:
        return False
    if c.get("command") or mapped(image):
        return True
    return bool(c.get("args")) and repository(image) in NO_ENTRYPOINT_IMAGES


def pod_runs_programs(pod: dict, mapped: Callable[[str], bool]) -> bool:
    """Whether some container of the pod runs a program of its own (``runs_program``)."""
    spec = pod.get("spec") or {}
    return any(
        runs_program(c, mapped) for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
    )


def why_simulated(c: dict) -> str:
    """The event that says a container's main process is simulated (the process runtime)."""
    image = c.get("image") or ""
    if repository_path(image) in KIND_IMAGES:
        return f'Container image "{image}" is one of kind\'s own: its main process is simulated'
    return (
        f'Container image "{image}" is not mapped to a program (kubelet.images) and the container has no '
        "command: its main process is simulated; exec runs real commands in its sandbox"
    )
