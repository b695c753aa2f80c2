"""The authorizer library's fieldSelector/labelSelector (Kubernetes 1.31+): the selectors
reach the authorizer's attributes, and the check reads as before."""

from __future__ import annotations

from mockkube.cel import engine
from mockkube.cel.authz import Authorizer


def test_selectors_reach_the_authorizer() -> None:
    seen: list[dict] = []

    def allow(user: dict, attrs: dict) -> tuple[bool, str]:
        seen.append(attrs)
        return True, "ok"

    expr = (
        "authorizer.group('').resource('pods').namespace('ns')"
        ".fieldSelector('spec.nodeName=n1').labelSelector('app=web').check('list').allowed()"
    )
    prog = engine.compile_with(expr, (("authorizer", "Authorizer"),))
    assert prog.evaluate({"authorizer": Authorizer({"username": "u"}, allow)}) is True
    assert seen[0]["fieldSelector"] == "spec.nodeName=n1" and seen[0]["labelSelector"] == "app=web"
    assert seen[0]["verb"] == "list" and seen[0]["resource"] == "pods"
