"""What well-known images listen on by default, so port-forward to a simulated container of
such an image reaches what the real one serves: ``nginx`` answers HTTP on port 80 with its
default welcome page. Pod annotations still override the answer (docs/exec.md)."""

from __future__ import annotations

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


# images whose default command is a shell (busybox's and the distributions' CMD is sh or bash):
# without a terminal it reads an empty stdin and exits 0 at once, as these images do on a cluster
SHELL_IMAGES = frozenset(
    {"busybox", "alpine", "ubuntu", "debian", "fedora", "centos", "rockylinux", "almalinux", "archlinux", "bash"}
)


def repository(image: str) -> str:
    """``docker.io/library/nginx:1.27@sha256:...`` -> ``nginx``."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def listeners(container: dict) -> dict[int, tuple[str, str]]:
    """The ports a container of a well-known image listens on, with what each answers."""
    return dict(DEFAULT_LISTENERS.get(repository(container.get("image") or ""), {}))
