"""kubectl and helm with CustomResourceDefinitions: apply a CRD, wait for Established,
create, get (printer columns), explain, patch, status subresource, rejected objects, delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

MANIFESTS = Path(__file__).parent / "manifests"
CRD = str(MANIFESTS / "crontab-crd.yaml")
CHART = str(MANIFESTS / "crdchart")

TAB = """
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: {name}
  namespace: default
spec:
  cronSpec: "{cron}"
  image: my-image
{extra}
"""


def _tab(name: str = "tab", cron: str = "* * * * */5", extra: str = "") -> str:
    return TAB.format(name=name, cron=cron, extra=extra)


def test_crd_lifecycle_with_kubectl(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", CRD)
    k("wait", "--for", "condition=established", "--timeout=10s", "crd/crontabs.stable.example.com")
    crds = k("get", "crds").stdout.splitlines()
    assert crds[0].split() == ["NAME", "CREATED", "AT"] and crds[1].startswith("crontabs.stable.example.com ")
    resources = k("api-resources", "--api-group=stable.example.com").stdout.splitlines()
    assert resources[1].split() == ["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"]
    out = k("apply", "-f", "-", input=_tab()).stdout
    assert "crontab.stable.example.com/tab created" in out
    table = k("get", "crontabs").stdout.splitlines()
    assert table[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["tab", "*", "*", "*", "*", "*/5", "1"]
    assert k("get", "ct", "-o", "name").stdout.strip() == "crontab.stable.example.com/tab"
    assert "crontab.stable.example.com/tab" in k("get", "all", "-o", "name").stdout
    obj = json.loads(k("get", "crontab", "tab", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 1 and obj["spec"]["maxReplicas"] == 5  # defaulted

    explained = k("explain", "crontab.spec").stdout
    assert "The desired schedule." in explained and "cronSpec" in explained

    k("patch", "crontab", "tab", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    k("patch", "crontab", "tab", "--subresource=status", "--type=merge", "-p", '{"status":{"phase":"Running"}}')
    obj = json.loads(k("get", "crontab", "tab", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 3 and obj["status"] == {"phase": "Running"}
    assert obj["metadata"]["generation"] == 2

    bad = k("apply", "-f", "-", check=False, input=_tab("bad", cron="every minute"))
    assert bad.returncode == 1
    assert (
        'The CronTab "bad" is invalid: spec.cronSpec: Invalid value: "every minute": spec.cronSpec in body '
        "should match" in bad.stderr
    )
    rule = k("apply", "-f", "-", check=False, input=_tab("toomany", extra="  replicas: 9"))
    assert rule.returncode == 1
    assert 'spec: Invalid value: "object": replicas must not exceed maxReplicas' in rule.stderr
    typo = k("apply", "-f", "-", check=False, input=_tab("typo", extra="  imagee: x"))
    assert typo.returncode == 1
    assert 'unknown field "spec.imagee"' in typo.stderr

    k("delete", "crd", "crontabs.stable.example.com")
    gone = k("get", "crontabs", check=False)
    assert gone.returncode != 0
    # kubectl's discovery cache may still know the type: then the list itself is refused
    assert (
        'the server doesn\'t have a resource type "crontabs"' in gone.stderr
        or 'Unable to list "stable.example.com/v1, Resource=crontabs": the server could not find the requested resource'
        in gone.stderr
    )


def test_helm_chart_with_crds(mockkube_fresh):
    c = mockkube_fresh
    c.helm("install", "rel", CHART)
    obj = json.loads(c.kubectl("get", "crontab", "rel-tab", "-o", "json").stdout)
    assert obj["spec"]["cronSpec"] == "*/5 * * * *" and obj["spec"]["replicas"] == 1
    c.helm("uninstall", "rel")
    assert c.kubectl("get", "crontab", "rel-tab", check=False).returncode != 0
    c.kubectl("get", "crd", "crontabs.stable.example.com")  # helm leaves CRDs installed


def test_install_crds_helper(mockkube_fresh, tmp_path):
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "all.yaml").write_text(
        open(CRD).read() + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-crd\n"
    )
    installed = mockkube_fresh.install_crds(str(tmp_path / "crds"))
    assert [c["metadata"]["name"] for c in installed] == ["crontabs.stable.example.com"]
    mockkube_fresh.kubectl("apply", "-f", "-", input=_tab("after-install"))
    assert mockkube_fresh.install_crds(CRD)[0]["metadata"]["generation"] == 1  # unchanged: no new generation
