"""`kubectl auth can-i` and `kubectl auth whoami` on an open cluster (AlwaysAllow): reviews
are answered, never stored; whoami reports the request's identity, `--as` included."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e
R = "/apis/authorization.k8s.io/v1"


def test_can_i_and_whoami(mockkube, mockkube_namespace):
    c = mockkube
    assert c.kubectl("auth", "can-i", "create", "pods", "-n", mockkube_namespace).stdout.strip() == "yes"
    assert c.kubectl("auth", "can-i", "get", "/healthz").stdout.strip() == "yes"
    rules = c.kubectl("auth", "can-i", "--list", "-n", mockkube_namespace).stdout
    assert "*.*" in rules and "[*]" in rules
    me = c.kubectl("auth", "whoami").stdout
    assert "kubernetes-admin" in me and "system:authenticated" in me
    alice = c.kubectl("auth", "whoami", "--as", "alice", "--as-group", "devs").stdout
    assert "alice" in alice and "devs" in alice


def test_reviews_are_validated_and_not_stored(mockkube):
    c = mockkube
    r = c.http.post(c.url + R + "/subjectaccessreviews", json={"spec": {"resourceAttributes": {"verb": "get"}}})
    st = r.json()
    assert (
        r.status_code == 422
        and 'spec.user: Invalid value: "": at least one of user or group must be specified' in st["message"]
    )
    r = c.http.post(c.url + R + "/selfsubjectaccessreviews", json={"spec": {}})
    assert r.status_code == 422 and "exactly one of nonResourceAttributes or resourceAttributes" in r.json()["message"]
    r = c.http.post(
        c.url + R + "/selfsubjectaccessreviews",
        json={"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}},
    )
    assert r.status_code == 201 and r.json()["status"] == {"allowed": True}
    assert c.http.get(c.url + R + "/selfsubjectaccessreviews").status_code == 405
