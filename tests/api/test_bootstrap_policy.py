"""The bootstrap RBAC objects a fresh server holds are upstream's golden files (vendored in
mockkube/apiserver/resources/bootstrappolicy/ by scripts/update_bootstrappolicy.py), and the
in-process components' identities are the subjects upstream binds its roles to."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

from mockkube.apiserver.resources import rbac_bootstrap as rb
from mockkube.rules.identities import CONTROLLERS, controller_user, driver_service_accounts
from mockkube.rules.rbac import aggregated_rules
from mockkube.testing.cluster import running_server

RBAC = "rbac.authorization.k8s.io"
ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("update_bootstrappolicy", ROOT / "scripts/update_bootstrappolicy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _same_meta(live: dict, want: dict) -> None:
    for k in ("labels", "annotations"):
        assert (live["metadata"].get(k) or {}) == (want["metadata"].get(k) or {}), (want["metadata"]["name"], k)


async def test_the_server_holds_the_golden_bootstrap_policy():
    delta = (yaml.safe_load((rb.POLICY_DIR / "v1.36-delta.yaml").read_text()) or {}).get("clusterRoles") or {}
    async with running_server() as server:

        def objects(plural: str) -> dict[tuple[str, str], dict]:
            rt = server.registry.get(RBAC, "v1", plural)
            return {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in server.store.objects(rt)}

        roles = objects("clusterroles")
        for want in rb.golden("cluster-roles.yaml") + rb.golden("controller-roles.yaml"):
            name = want["metadata"]["name"]
            live = roles[("", name)]
            _same_meta(live, want)
            assert live.get("aggregationRule") == want.get("aggregationRule"), name
            if want.get("aggregationRule"):  # rules: null upstream, filled by the aggregation controller
                assert want["rules"] is None
                assert live["rules"] == aggregated_rules(live, list(roles.values())) and live["rules"], name
            else:
                assert live["rules"] == want["rules"] + [r for r in delta.get(name, ()) if r not in want["rules"]], name
        bindings = objects("clusterrolebindings")
        for want in rb.golden("cluster-role-bindings.yaml") + rb.golden("controller-role-bindings.yaml"):
            live = bindings[("", want["metadata"]["name"])]
            _same_meta(live, want)
            assert live["roleRef"] == want["roleRef"] and live.get("subjects") == want.get("subjects")
            assert ("", want["roleRef"]["name"]) in roles  # no dangling bootstrap binding
        for plural, name in (("roles", "namespace-roles.yaml"), ("rolebindings", "namespace-role-bindings.yaml")):
            have = objects(plural)
            for want in rb.golden(name):
                live = have[(want["metadata"]["namespace"], want["metadata"]["name"])]
                _same_meta(live, want)
                for k in ("rules", "roleRef", "subjects"):
                    assert live.get(k) == want.get(k), (want["metadata"]["name"], k)
        # v1.36: the scheduler may change status.allocation/reservedFor (DRA granular status authz)
        assert any(
            "resourceclaims/binding" in r.get("resources", ()) and "update" in r["verbs"]
            for r in roles[("", "system:kube-scheduler")]["rules"]
        )


def test_controller_role_bindings_are_derived_as_upstream_derives_them():
    text = (rb.POLICY_DIR / "controller-roles.yaml").read_text()
    assert _script().derive_bindings(text) == (rb.POLICY_DIR / "controller-role-bindings.yaml").read_text()


def test_each_controller_acts_as_the_service_account_its_upstream_role_is_bound_to():
    bindings = rb.golden("controller-role-bindings.yaml") + rb.pool_status_objects()[1]  # + a feature-gated one
    bound = {(s["namespace"], s["name"]) for b in bindings for s in b["subjects"]}
    for c in CONTROLLERS:
        user = controller_user(c)["username"]
        if user == "system:kube-controller-manager":
            continue
        _, _, ns, sa = user.split(":")
        assert (ns, sa) in bound, c


def test_the_built_in_drivers_have_a_chart_like_identity():
    roles, bindings = rb.driver_objects()
    assert [b["subjects"][0]["name"] for b in bindings] == driver_service_accounts()
    gpu = next(r for r in roles if r["metadata"]["name"] == "mockkube:dra-driver:gpu.example.com")
    assert {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["resourceclaims/driver"],
        "resourceNames": ["gpu.example.com"],
        "verbs": ["associated-node:update", "associated-node:patch"],
    } in gpu["rules"]
