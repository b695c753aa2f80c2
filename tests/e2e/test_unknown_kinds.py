"""kubectl 1.35 applying kinds the server does not serve reads as on a real cluster.

kubectl's field validation asks /openapi/v3 first and, for a group-version it does not
list, /openapi/v2 (as protobuf); a 404 there would surface as "error validating data".
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture
def kubectl(mockkube_empty):
    return mockkube_empty.kubectl


def _apply(kubectl, api_version: str, kind: str):
    return kubectl(
        "apply",
        "-f",
        "-",
        check=False,
        input=f"""
apiVersion: {api_version}
kind: {kind}
metadata:
  name: x
  namespace: default
""",
    )


@pytest.mark.parametrize(
    "api_version,kind",
    [
        ("example.com/v1", "Widget"),  # unknown group (a CRD not installed yet)
        ("apps/v1", "Widget"),  # known group-version, unknown kind (a typo)
        ("apps/v9", "Deployment"),  # known group, unknown version
        ("v2", "Pod"),  # unknown core version
    ],
)
def test_unknown_kind_says_no_matches(kubectl, api_version, kind):
    p = _apply(kubectl, api_version, kind)
    assert p.returncode == 1
    assert "error validating data" not in p.stderr
    assert (
        f'resource mapping not found for name: "x" namespace: "default" from "STDIN": '
        f'no matches for kind "{kind}" in version "{api_version}"'
    ) in p.stderr
    assert "ensure CRDs are installed first" in p.stderr


def test_served_kind_still_validated_by_the_server(kubectl):
    p = kubectl(
        "apply",
        "-f",
        "-",
        check=False,
        input="""
apiVersion: v1
kind: ConfigMap
metadata:
  name: typo
  namespace: default
bogus: 1
""",
    )
    assert p.returncode == 1
    assert 'unknown field "bogus"' in p.stderr
