"""A secured cluster (RBAC with authentication) through kubectl, helm and the Python client:
403s as a real cluster prints them, a chart's ServiceAccount doing exactly what its
ClusterRole grants, `kubectl auth can-i --list` and `whoami` for users and ServiceAccounts."""

from __future__ import annotations

import textwrap

import pytest

pytestmark = pytest.mark.e2e

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: cm-operator\nversion: 0.1.0\n",
    "templates/rbac.yaml": textwrap.dedent("""\
        apiVersion: v1
        kind: ServiceAccount
        metadata:
          name: cm-operator
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: cm-operator
        rules:
        - apiGroups: [""]
          resources: ["configmaps"]
          verbs: ["get", "list", "watch", "create", "update"]
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata:
          name: cm-operator
        roleRef:
          apiGroup: rbac.authorization.k8s.io
          kind: ClusterRole
          name: cm-operator
        subjects:
        - kind: ServiceAccount
          name: cm-operator
          namespace: {{ .Release.Namespace }}
        """),
}


@pytest.mark.mockkube(auth=True, profile={"nodes": [], "deviceClasses": False})
def test_chart_service_account_can_do_what_its_cluster_role_grants(mockkube, tmp_path):
    c = mockkube
    chart = tmp_path / "chart"
    for name, text in CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    c.helm("install", "op", str(chart), "--namespace", "default")
    sa = c.kubeconfig_for(service_account="default/cm-operator")
    c.kubectl("--kubeconfig", sa, "create", "configmap", "made-by-sa", "-n", "kube-public")
    assert "made-by-sa" in c.kubectl("--kubeconfig", sa, "get", "configmaps", "-A").stdout
    r = c.kubectl("--kubeconfig", sa, "delete", "configmap", "made-by-sa", "-n", "kube-public", check=False)
    assert r.returncode == 1 and r.stderr.strip() == (
        'Error from server (Forbidden): configmaps "made-by-sa" is forbidden: User '
        '"system:serviceaccount:default:cm-operator" cannot delete resource "configmaps" in API group "" '
        'in the namespace "kube-public"'
    )
    r = c.kubectl("--kubeconfig", sa, "get", "secrets", check=False)
    assert r.returncode == 1 and 'cannot list resource "secrets"' in r.stderr
    assert c.kubectl("--kubeconfig", sa, "auth", "can-i", "update", "configmaps").stdout.strip() == "yes"
    r = c.kubectl("--kubeconfig", sa, "auth", "can-i", "delete", "configmaps", check=False)
    assert r.returncode == 1 and r.stdout.strip() == "no"
    rules = c.kubectl("--kubeconfig", sa, "auth", "can-i", "--list").stdout.splitlines()
    assert rules[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert any(line.split()[0] == "configmaps" and "[get list watch create update]" in line for line in rules)
    who = c.kubectl("--kubeconfig", sa, "auth", "whoami").stdout
    assert "system:serviceaccount:default:cm-operator" in who and "authentication.kubernetes.io/credential-id" in who
    # the Python client with the same ServiceAccount
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = client.CoreV1Api(config.new_client_from_config(config_file=sa))
    assert "made-by-sa" in [m.metadata.name for m in api.list_namespaced_config_map("kube-public").items]
    with pytest.raises(ApiException) as e:
        api.list_namespaced_secret("default")
    assert e.value.status == 403


@pytest.mark.mockkube(auth=True, profile={"nodes": [], "deviceClasses": False})
def test_users_tokens_and_impersonation(mockkube):
    c = mockkube
    bob = c.kubeconfig_for(user="bob", groups=["devs"])
    r = c.kubectl("--kubeconfig", bob, "get", "pods", check=False)
    assert r.returncode == 1 and r.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    )
    c.kubectl("create", "rolebinding", "devs-view", "--clusterrole=view", "--group=devs")
    assert c.kubectl("--kubeconfig", bob, "get", "pods").returncode == 0
    assert "bob" in c.kubectl("--kubeconfig", bob, "auth", "whoami").stdout
    # impersonation needs the impersonate verb: the admin has it, bob has not
    assert c.kubectl("--as=bob", "--as-group=devs", "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    r = c.kubectl("--as=bob", "auth", "can-i", "list", "pods", check=False)  # not in devs without --as-group
    assert r.returncode == 1 and r.stdout.strip() == "no"
    r = c.kubectl("--kubeconfig", bob, "--as=alice", "get", "pods", check=False)
    assert r.returncode == 1 and r.stderr.strip() == (
        'Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot impersonate resource "users" '
        'in API group "" at the cluster scope'
    )
    bad = c.kubeconfig_for(user="bob")
    text = open(bad).read()
    token = text.split("token: ")[1].split()[0]
    open(bad, "w").write(text.replace(token, token[:-2] + "xx"))
    r = c.kubectl("--kubeconfig", bad, "get", "pods", check=False)
    assert r.returncode == 1 and "error: You must be logged in to the server (Unauthorized)" in r.stderr
