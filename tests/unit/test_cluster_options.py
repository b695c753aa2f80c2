"""mockkube.Cluster's option slot for authentication is reserved: named, refused clearly."""

import pytest

from mockkube.testing.handle import Cluster
from mockkube.testing.plugin import OPTIONS


def test_auth_is_a_known_option_but_not_supported_yet(tmp_path):
    assert "auth" in OPTIONS
    with pytest.raises(NotImplementedError, match="authentication options are not supported yet"):
        Cluster(auth={"tokens": {"alice": "secret"}}, workdir=str(tmp_path))
