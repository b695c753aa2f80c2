"""flowcontrol.apiserver.k8s.io/v1 over HTTP: the bootstrap configuration a v1.36 cluster
starts with (kept by the configuration controller: recreated when deleted, Dangling
conditions), defaults and validation as upstream's, the mandatory objects' fixed specs,
kubectl's columns, and reset restoring them."""

from __future__ import annotations

import aiohttp
import pytest

from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
async def cluster():
    async with running_server(components=True, cluster="nodes: []\ndeviceClasses: false\n") as server:
        await server.settled()
        async with aiohttp.ClientSession() as s:
            yield Api(s, server.url, server)


async def test_bootstrap_configuration(cluster):
    api = cluster
    st, fss, _ = await api.get(f"{FC}/flowschemas")
    names = [o["metadata"]["name"] for o in fss["items"]]
    assert sorted(names) == sorted(
        [
            "exempt",
            "catch-all",
            "system-nodes",
            "system-node-high",
            "probes",
            "system-leader-election",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-system-service-accounts",
            "service-accounts",
            "global-default",
        ]
    )
    st, pls, _ = await api.get(f"{FC}/prioritylevelconfigurations")
    assert sorted(o["metadata"]["name"] for o in pls["items"]) == sorted(
        [
            "catch-all",
            "exempt",
            "system",
            "node-high",
            "leader-election",
            "workload-high",
            "workload-low",
            "global-default",
        ]
    )
    probes = next(o for o in fss["items"] if o["metadata"]["name"] == "probes")
    assert probes["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
    [cond] = probes["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Dangling", "False", "Found")
    assert (
        cond["message"]
        == 'This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it exists'
    )
    st, tbl, _ = await api.get(f"{FC}/flowschemas/probes", headers=TABLE)
    assert [c["name"] for c in tbl["columnDefinitions"]] == [
        "Name",
        "PriorityLevel",
        "MatchingPrecedence",
        "DistinguisherMethod",
        "Age",
        "MissingPL",
    ]
    cells = tbl["rows"][0]["cells"]
    assert [cells[i] for i in (0, 1, 2, 3, 5)] == ["probes", "exempt", 2, "<none>", "False"]
    st, tbl, _ = await api.get(f"{FC}/prioritylevelconfigurations", headers=TABLE)
    rows = {r["cells"][0]: r["cells"][:6] for r in tbl["rows"]}
    assert rows["workload-low"] == ["workload-low", "Limited", 100, 128, 6, 50]
    assert rows["exempt"] == ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert rows["catch-all"] == ["catch-all", "Limited", 5, "<none>", "<none>", "<none>"]


async def test_ensurer_and_dangling(cluster):
    api = cluster
    assert (await api.delete(f"{FC}/flowschemas/global-default"))[0] == 200
    await api.server.settled()
    st, fs, _ = await api.get(f"{FC}/flowschemas/global-default")
    assert st == 200 and fs["spec"]["matchingPrecedence"] == 9900
    # a schema of one's own, pointing at a level that does not exist (yet)
    mine = {
        "metadata": {"name": "mine"},
        "spec": {
            "priorityLevelConfiguration": {"name": "mine"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": "alice"}}],
                    "resourceRules": [
                        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}
                    ],
                }
            ],
        },
    }
    st, out, _ = await api.post(f"{FC}/flowschemas", mine)
    assert st == 201, out
    assert out["spec"]["matchingPrecedence"] == 1000 and out["metadata"]["generation"] == 1
    await api.server.settled()
    st, out, _ = await api.get(f"{FC}/flowschemas/mine")
    assert [(c["status"], c["reason"]) for c in out["status"]["conditions"]] == [("True", "NotFound")]
    pl = {
        "metadata": {"name": "mine"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}},
    }
    st, out, _ = await api.post(f"{FC}/prioritylevelconfigurations", pl)
    assert st == 201, out
    assert out["spec"]["limited"] == {
        "nominalConcurrencyShares": 30,
        "lendablePercent": 0,
        "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}},
    }
    await api.server.settled()
    st, out, _ = await api.get(f"{FC}/flowschemas/mine")
    assert [(c["status"], c["reason"]) for c in out["status"]["conditions"]] == [("False", "Found")]


async def test_validation_as_upstream(api):
    bad = {
        "metadata": {"name": "bad"},
        "spec": {
            "priorityLevelConfiguration": {"name": ""},
            "matchingPrecedence": 1,
            "distinguisherMethod": {"type": "ByColour"},
            "rules": [
                {
                    "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": "x"}, "user": {"name": "u"}}],
                    "nonResourceRules": [{"verbs": ["get", "*"], "nonResourceURLs": ["healthz"]}],
                }
            ],
        },
    }
    st, body, _ = await api.post(f"{FC}/flowschemas", bad)
    assert st == 422
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "spec.matchingPrecedence"),
        ("FieldValueNotSupported", "spec.distinguisherMethod.type"),
        ("FieldValueRequired", "spec.priorityLevelConfiguration.name"),
        ("FieldValueRequired", "spec.rules[0].subjects[0].serviceAccount.namespace"),
        ("FieldValueForbidden", "spec.rules[0].subjects[0].user"),
        ("FieldValueInvalid", "spec.rules[0].nonResourceRules[0].verbs"),
        ("FieldValueInvalid", "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]"),
    ]
    assert "only the schema named 'exempt' may have matchingPrecedence 1" in body["message"]
    pl = {
        "metadata": {"name": "p"},
        "spec": {
            "type": "Limited",
            "limited": {
                "lendablePercent": 101,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5}},
            },
        },
    }
    st, body, _ = await api.post(f"{FC}/prioritylevelconfigurations", pl)
    assert st == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.limited.limitResponse.queuing.handSize", "Invalid value: 5: should not be greater than queues (4)"),
        ("spec.limited.lendablePercent", "Invalid value: 101: must be between 0 and 100, inclusive"),
    ]
    st, body, _ = await api.get(f"{FC}/prioritylevelconfigurations/catch-all")
    body["spec"]["limited"]["nominalConcurrencyShares"] = 50
    st, body, _ = await api.put(f"{FC}/prioritylevelconfigurations/catch-all", body)
    assert st == 422 and "spec of 'catch-all' must equal the fixed value" in body["message"]
    st, body, _ = await api.get(f"{FC}/prioritylevelconfigurations/exempt")
    body["spec"]["exempt"]["nominalConcurrencyShares"] = 5  # the exempt level's own settings may be tuned
    assert (await api.put(f"{FC}/prioritylevelconfigurations/exempt", body))[0] == 200


async def test_discovery(api):
    st, body, _ = await api.get(FC)
    assert [(r["name"], r.get("shortNames"), r["namespaced"]) for r in body["resources"]] == [
        ("flowschemas", None, False),
        ("flowschemas/status", None, False),
        ("prioritylevelconfigurations", None, False),
        ("prioritylevelconfigurations/status", None, False),
    ]


async def test_reset_restores_the_bootstrap_configuration(cluster):
    api = cluster
    st, before, _ = await api.get(f"{FC}/flowschemas/service-accounts")
    before["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] = "false"
    before["spec"]["matchingPrecedence"] = 8000
    assert (await api.put(f"{FC}/flowschemas/service-accounts", before))[0] == 200
    await api.server.settled()
    assert (await api.get(f"{FC}/flowschemas/service-accounts"))[1]["spec"]["matchingPrecedence"] == 8000
    await api.server.reset()
    st, after, _ = await api.get(f"{FC}/flowschemas/service-accounts")
    assert after["spec"]["matchingPrecedence"] == 9000
    assert after["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] == "true"
    assert [c["reason"] for c in after["status"]["conditions"]] == ["Found"]
