"""mockkube.Cluster's authentication option: what it accepts, refused clearly otherwise."""

import pytest

from mockkube.testing.handle import Cluster
from mockkube.testing.plugin import OPTIONS


def test_auth_options(tmp_path):
    assert "auth" in OPTIONS
    with pytest.raises(ValueError, match="takes authorization_mode, token_auth_file, anonymous_auth"):
        Cluster(auth={"tokens": {"alice": "secret"}}, workdir=str(tmp_path))
    assert Cluster(auth=True, workdir=str(tmp_path)).auth == {"authorization_mode": "Node,RBAC"}  # as kubeadm
    assert Cluster(auth={"anonymous_auth": False}, workdir=str(tmp_path)).auth == {
        "anonymous_auth": False,
        "authorization_mode": "Node,RBAC",
    }
    assert Cluster(workdir=str(tmp_path)).auth == {}
