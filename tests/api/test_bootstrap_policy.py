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


def test_the_compiled_policy_the_server_reads_is_the_vendored_yaml():
    # the server reads policy.json (parsing the YAML cost every start 15-40 ms); after editing
    # a YAML file, run scripts/update_bootstrappolicy.py --compile
    assert (rb.POLICY_DIR / "policy.json").read_text() == _script().compiled(rb.POLICY_DIR)


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


def test_the_workload_gates_add_upstreams_rules_for_podgroups_and_workloads():
    """policy.go/controller_policy.go with GenericWorkload, DRAWorkloadResourceClaims and
    WorkloadWithJob on; with v1.36's defaults (all off) nothing of scheduling.k8s.io's
    v1alpha2 resources is granted."""
    from mockkube.config.features import FeatureGates

    def by_name(gates) -> dict[str, dict]:
        return {r["metadata"]["name"]: r for r in rb.cluster_roles(gates)}

    def grants(role: dict, resource: str, verb: str) -> bool:
        return any(
            "scheduling.k8s.io" in r.get("apiGroups", ()) and resource in r.get("resources", ()) and verb in r["verbs"]
            for r in role.get("rules") or ()
        )

    off = by_name(FeatureGates())
    assert not any(grants(r, "podgroups", "get") for r in off.values() if r["metadata"]["name"] != "cluster-admin")
    assert "system:controller:podgroup-protection-controller" not in off
    on = by_name(
        FeatureGates(
            {
                "GenericWorkload": True,
                "GangScheduling": True,
                "DRAWorkloadResourceClaims": True,
                "WorkloadWithJob": True,
            }
        )
    )
    sched = on["system:kube-scheduler"]
    assert grants(sched, "podgroups", "watch") and grants(sched, "podgroups/status", "patch")
    assert not grants(sched, "workloads", "get")
    for role in ("view", "edit", "admin"):  # aggregated from system:aggregate-to-view/-edit
        assert grants(on[role], "workloads", "list") and grants(on[role], "podgroups/status", "get"), role
    assert grants(on["edit"], "podgroups", "deletecollection") and not grants(on["view"], "podgroups", "create")
    assert grants(on["system:controller:resource-claim-controller"], "podgroups/status", "update")
    assert grants(on["system:controller:job-controller"], "workloads", "create")
    protection = on["system:controller:podgroup-protection-controller"]
    assert protection["rules"] == [
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list", "update", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
    ]
    bindings = {b["metadata"]["name"]: b for b in rb.cluster_role_bindings(FeatureGates({"GenericWorkload": True}))}
    assert bindings["system:controller:podgroup-protection-controller"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "podgroup-protection-controller", "namespace": "kube-system"}
    ]


async def test_a_restart_with_a_gate_on_reconciles_the_bootstrap_roles(tmp_path):
    """kube-apiserver's rbac/bootstrap-roles hook at every start: a bootstrap ClusterRole made
    while GenericWorkload was off gains its rules when the server comes back with it on
    (nothing is taken away), unless the role says autoupdate "false"."""
    db = f"sqlite:///{tmp_path}/db.sqlite"

    def role(server, name: str) -> dict:
        return server.store.get(server.registry.get(RBAC, "v1", "clusterroles"), "", name).obj

    def podgroup_rules(r: dict) -> list[dict]:
        return [
            x for x in r["rules"] if "scheduling.k8s.io" in x.get("apiGroups", ()) and "podgroups" in x["resources"]
        ]

    async with running_server(db_url=db) as server:
        assert podgroup_rules(role(server, "system:kube-scheduler")) == []
        edit = dict(role(server, "system:aggregate-to-edit"))
        edit["metadata"] = {**edit["metadata"], "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "false"}}
        server.resources.update(server.registry.get(RBAC, "v1", "clusterroles"), "", edit["metadata"]["name"], edit)
        rv = role(server, "system:kube-scheduler")["metadata"]["resourceVersion"]
    async with running_server(db_url=db) as server:  # same gates: nothing rewritten
        assert role(server, "system:kube-scheduler")["metadata"]["resourceVersion"] == rv
    async with running_server(db_url=db, feature_gates={"GenericWorkload": True}) as server:
        assert podgroup_rules(role(server, "system:kube-scheduler")) == [
            {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["get", "list", "watch"]}
        ]
        assert podgroup_rules(role(server, "system:aggregate-to-view"))
        assert podgroup_rules(role(server, "system:aggregate-to-edit")) == []  # autoupdate "false": left alone
