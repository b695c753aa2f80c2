"""How a ``mockkube`` command finds its server, as kubectl does: ``--server`` (``-s``),
``--kubeconfig``, ``$KUBECONFIG`` (the first file of the list that has the context) or
``~/.kube/config``, and ``--context``; the kubeconfig's CA and credentials (bearer token,
client certificate) go with every request. Without a kubeconfig the server is
``http://127.0.0.1:6443``, where ``mockkube serve`` listens by default."""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from mockkube.client import kubeconfigs

DEFAULT_SERVER = "http://127.0.0.1:6443"


class UsageError(Exception):
    """A command given what it cannot use (exit status 2, one line)."""


def add_flags(p: argparse.ArgumentParser) -> None:
    """kubectl's connection flags."""
    p.add_argument("-s", "--server", default=None, help="the server's address (default: the kubeconfig's)")
    p.add_argument("--kubeconfig", default=None, help="path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", default=None, help="the kubeconfig context to use (default: its current-context)")


def _kubeconfig_files(explicit: str | None) -> list[str]:
    if explicit:
        if not Path(explicit).exists():
            raise UsageError(f"stat {explicit}: no such file or directory")
        return [explicit]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [f for f in env.split(os.pathsep) if f and Path(f).exists()]
    home = Path.home() / ".kube" / "config"
    return [str(home)] if home.exists() else []


def resolve(args: argparse.Namespace) -> kubeconfigs.Credentials:
    """The server and credentials ``args`` name."""
    import yaml

    files = _kubeconfig_files(getattr(args, "kubeconfig", None))
    context = getattr(args, "context", None)
    creds = None
    for path in files:
        try:
            creds = kubeconfigs.load(path, context)
        except kubeconfigs.NoContext:
            continue
        except (OSError, yaml.YAMLError, ValueError, TypeError, KeyError, IndexError) as e:
            raise UsageError(f"cannot read the kubeconfig {path}: {e}") from None
        break
    if creds is None and context:
        raise UsageError(f'context "{context}" does not exist')
    server = getattr(args, "server", None)
    if creds is None:
        return kubeconfigs.Credentials((server or DEFAULT_SERVER).rstrip("/"))
    if server:
        creds.server = server.rstrip("/")
    return creds


def call(
    args: argparse.Namespace, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
) -> str:
    """One request to the server; the body of a 2xx answer. Errors leave as ``CommandError``
    with the server's Status message, or with why the server could not be reached."""
    creds = resolve(args)
    url = creds.server + path
    headers = {"Content-Type": content_type, **creds.headers}
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60, context=creds.ssl) as resp:
            return resp.read().decode()
    except urllib.error.HTTPError as e:
        try:
            msg = json.loads(e.read()).get("message", "") or e.reason
        except ValueError:
            msg = e.reason
        raise CommandError(msg) from None
    except urllib.error.URLError as e:
        raise CommandError(f"cannot reach {creds.server}: {e.reason}") from None
    except OSError as e:
        raise CommandError(f"cannot reach {creds.server}: {e}") from None


class CommandError(Exception):
    """What the server answered, or why it could not be asked (exit status 1, one line)."""


def request(
    args: argparse.Namespace,
    method: str,
    path: str,
    body: bytes | None = None,
    content_type: str = "application/json",
    end: str = "",
) -> int:
    """``call`` for a command that prints the answer (then ``end``)."""
    sys.stdout.write(call(args, method, path, body, content_type) + end)
    return 0
