"""The transcribed API Priority and Fairness bootstrap objects against upstream's
``pkg/apis/flowcontrol/bootstrap/default.go`` (k8s.io/apiserver v0.36.3, read from the mirror
the ``fetch`` tool makes; skipped without it): the same objects, in the same lists and order,
with the same priority levels, precedences, distinguishers, concurrency and queuing numbers."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from mockkube.rules import flowcontrol_bootstrap as boot

MIRROR = "/work/.mirror/kubernetes+apiserver/repo"
REF = "v0.36.3"


@pytest.fixture(scope="module")
def default_go() -> str:
    if not os.path.isdir(MIRROR):
        pytest.skip("no k8s.io/apiserver mirror")
    return subprocess.run(
        ["git", "--git-dir", MIRROR, "show", f"{REF}:pkg/apis/flowcontrol/bootstrap/default.go"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


_CONSTS = {
    "flowcontrol.PriorityLevelConfigurationNameExempt": "exempt",
    "flowcontrol.PriorityLevelConfigurationNameCatchAll": "catch-all",
    "flowcontrol.FlowSchemaNameCatchAll": "catch-all",
    "flowcontrol.FlowDistinguisherMethodByUserType": "ByUser",
    "flowcontrol.FlowDistinguisherMethodByNamespaceType": "ByNamespace",
    '""': "",
}


def _value(tok: str) -> str:
    tok = tok.strip().rstrip(",").split("//")[0].strip()
    return _CONSTS.get(tok, tok.strip('"'))


def _vars(src: str, prefix: str) -> dict[str, str]:
    """Go variable name -> its initializer text, for ``<prefix>... = new...(``."""
    out = {}
    for m in re.finditer(rf"\n\t({prefix}\w+) = (new\w+\()", src):
        start = m.end()
        depth, i = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        out[m.group(1)] = src[start : i - 1]
    return out


def _list(src: str, name: str) -> list[str]:
    body = re.search(rf"{name} = \[\]\*flowcontrol\.\w+\{{(.*?)\n\t\}}", src, re.S).group(1)
    return re.findall(r"^\s*(\w+),", body, re.M)


def _fs_fields(init: str) -> tuple:
    init = re.sub(r"//[^\n]*", "", init)
    args = re.split(r",\s*", init.strip(), maxsplit=4)
    return tuple(_value(a) for a in args[:4])


def _pl_fields(init: str) -> tuple:
    name = _value(init.split(",")[0])
    nums = {
        k: int(v)
        for k, v in re.findall(
            r"(NominalConcurrencyShares|LendablePercent|Queues|HandSize|QueueLengthLimit):\s*(?:ptr\.To\(int32\()?(\d+)",
            init,
        )
    }
    typ = "Exempt" if "PriorityLevelEnablementExempt" in init else "Limited"
    reject = "LimitResponseTypeReject" in init
    return name, typ, nums, reject


def _our_pl(o: dict) -> tuple:
    s = o["spec"]
    nums: dict = {}
    body = s.get("exempt") or s.get("limited") or {}
    for k, key in (("NominalConcurrencyShares", "nominalConcurrencyShares"), ("LendablePercent", "lendablePercent")):
        if key in body:
            nums[k] = body[key]
    q = (body.get("limitResponse") or {}).get("queuing") or {}
    for k, key in (("Queues", "queues"), ("HandSize", "handSize"), ("QueueLengthLimit", "queueLengthLimit")):
        if key in q:
            nums[k] = q[key]
    return o["metadata"]["name"], s["type"], nums, (body.get("limitResponse") or {}).get("type") == "Reject"


def test_flow_schemas_match_upstream(default_go):
    inits = _vars(default_go, "(?:Mandatory|Suggested)FlowSchema")
    upstream = [_fs_fields(inits[v]) for v in _list(default_go, "MandatoryFlowSchemas")]
    upstream += [_fs_fields(inits[v]) for v in _list(default_go, "SuggestedFlowSchemas")]
    ours = [
        (
            o["metadata"]["name"],
            o["spec"]["priorityLevelConfiguration"]["name"],
            str(o["spec"]["matchingPrecedence"]),
            (o["spec"].get("distinguisherMethod") or {}).get("type", ""),
        )
        for o in boot.flow_schemas()
    ]
    assert ours == upstream
    assert all(o["metadata"]["annotations"] == {boot.AUTO_UPDATE: "true"} for o in boot.flow_schemas())


def test_priority_levels_match_upstream(default_go):
    inits = _vars(default_go, "(?:Mandatory|Suggested)PriorityLevelConfiguration")
    upstream = [_pl_fields(inits[v]) for v in _list(default_go, "MandatoryPriorityLevelConfigurations")]
    upstream += [_pl_fields(inits[v]) for v in _list(default_go, "SuggestedPriorityLevelConfigurations")]
    assert [_our_pl(o) for o in boot.priority_levels()] == upstream


def test_subjects_and_rules_match_upstream(default_go):
    """Per FlowSchema: the subject helpers and rule verbs/resources as upstream writes them."""
    inits = _vars(default_go, "(?:Mandatory|Suggested)FlowSchema")
    by_name = {_fs_fields(v)[0]: v for v in inits.values()}
    consts = {
        "user.SystemPrivilegedGroup": boot.SYSTEM_PRIVILEGED_GROUP,
        "user.AllUnauthenticated": boot.ALL_UNAUTHENTICATED,
        "user.AllAuthenticated": boot.ALL_AUTHENTICATED,
        "user.NodesGroup": boot.NODES_GROUP,
        "user.KubeControllerManager": boot.KUBE_CONTROLLER_MANAGER,
        "user.KubeScheduler": boot.KUBE_SCHEDULER,
        "serviceaccount.AllServiceAccountsGroup": boot.ALL_SERVICE_ACCOUNTS_GROUP,
        "flowcontrol.NameAll": "*",
    }
    for fs in boot.flow_schemas():
        src = by_name[fs["metadata"]["name"]]
        ours = []
        for rule in fs["spec"]["rules"]:
            for s in rule["subjects"]:
                ours.append((s["kind"], (s.get("group") or s.get("user") or s.get("serviceAccount"))["name"]))
        theirs = []
        for helper, args in re.findall(r"(groups|users|kubeSystemServiceAccount)\(([^)]*)\)", src):
            kind = {"groups": "Group", "users": "User", "kubeSystemServiceAccount": "ServiceAccount"}[helper]
            theirs += [(kind, consts[a.strip()]) for a in args.split(",") if a.strip()]
        assert ours == theirs, fs["metadata"]["name"]
        ours_rules = []
        for rule in fs["spec"]["rules"]:
            for r in rule.get("resourceRules", []):
                ours_rules.append(
                    (
                        "resource",
                        r["verbs"],
                        r["apiGroups"],
                        r["resources"],
                        r["namespaces"],
                        r.get("clusterScope", False),
                    )
                )
            for r in rule.get("nonResourceRules", []):
                ours_rules.append(("nonResource", r["verbs"], r["nonResourceURLs"]))
        assert ours_rules == _go_rules(src), fs["metadata"]["name"]


_RULE_CONSTS = {
    "flowcontrol.VerbAll": "*",
    "flowcontrol.APIGroupAll": "*",
    "flowcontrol.ResourceAll": "*",
    "flowcontrol.NamespaceEvery": "*",
    "flowcontrol.NonResourceAll": "*",
    "coordinationv1.GroupName": "coordination.k8s.io",
    "corev1.GroupName": "",
}


def _go_rules(src: str) -> list[tuple]:
    out: list[tuple] = []
    for m in re.finditer(r"\b(resourceRule|nonResourceRule)\(", src):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        body = src[m.end() : i - 1]
        lists = [
            [_RULE_CONSTS.get(x.strip(), x.strip().strip('"')) for x in items.split(",") if x.strip()]
            for items in re.findall(r"\[\]string\{([^}]*)\}", body)
        ]
        if m.group(1) == "resourceRule":
            out.append(("resource", *lists, body.rstrip().rstrip(",").split(",")[-1].strip() == "true"))
        else:
            out.append(("nonResource", *lists))
    return out
