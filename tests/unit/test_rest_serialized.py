"""Every writing verb of the generic registry runs serialized (one write at a time across
threads; on PostgreSQL, retried on a stale cache). A decorator that slips onto a helper
(as a merge once left it, so creates ran unlocked and a create on one API server missed a
namespace made through another) fails here."""

import pytest

from mockkube.apiserver.rest import Resources


@pytest.mark.parametrize(
    "verb", ["create", "update", "patch", "delete", "bind", "finalize_namespace", "finalize_delete"]
)
def test_writing_verbs_are_serialized(verb: str) -> None:
    assert getattr(getattr(Resources, verb), "__wrapped__", None) is not None, f"{verb} is not @_serialized"
