"""The controllers in a process of their own (``mockkube serve --controllers process``:
``mockkube controller-manager``, controllermanagermain.py), as the server's component
(childprocess.py). The key material they sign with is the server's, handed over as
kube-controller-manager takes it: files named by its flags, in the process's directory.
"""

from __future__ import annotations

import os
from typing import Any

from mockkube.server.childprocess import ChildComponent


class ControllerManagerProcess(ChildComponent):
    """The component standing for the controller-manager process in ``server.components``."""

    name = "controller-manager"
    attr = "controller_manager_child"
    # upstream's identity (its informers, the ServiceAccounts and tokens of its controllers)
    user = {"username": "system:kube-controller-manager", "groups": ["system:masters"]}

    def extra_args(self, workdir: str) -> list[str]:
        from cryptography.hazmat.primitives import serialization

        def write(name: str, data: bytes) -> str:
            path = os.path.join(workdir, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return path

        key = self.server.sa_signer.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        cert, ca_key = self.server.signing_ca()
        # each controller as its own ServiceAccount, as kubeadm runs kube-controller-manager
        # and as the controllers in the server's process act (identities.controller_user);
        # without authentication every request is the admin's anyway
        own = ["--use-service-account-credentials"] if self.server.authn.enabled else []
        return own + [
            "--service-account-private-key-file",
            write("sa.key", key),
            "--root-ca-file",
            write("ca.crt", self.server.ca_certificate().encode()),
            "--cluster-signing-cert-file",
            write("signing.crt", cert),
            "--cluster-signing-key-file",
            write("signing.key", ca_key),
        ]


async def start(server: Any) -> list:
    component = ControllerManagerProcess(server)
    await component.start()
    return [component]
