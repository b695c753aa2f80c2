"""The clusterrole-aggregation controller keeps aggregated ClusterRoles' rules in step."""

from __future__ import annotations

from _lifecycle import eventually

from mockkube.client.client import Client
from mockkube.testing.cluster import running_server

SEL = {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate-to-monitoring": "true"}}]}
PODS = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
NODES = {"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]}


async def test_aggregated_rules_follow_the_selected_roles():
    async with running_server(components=True, cluster="nodes: []\ndeviceClasses: false\n") as server:
        c = Client(server.resources, manager="test")
        rt = c.rt("clusterroles", "rbac.authorization.k8s.io")
        c.create(rt, {"metadata": {"name": "monitoring"}, "aggregationRule": SEL, "rules": []})
        label = {"example.com/aggregate-to-monitoring": "true"}
        c.create(rt, {"metadata": {"name": "b-nodes", "labels": label}, "rules": [NODES]})
        c.create(rt, {"metadata": {"name": "a-pods", "labels": label}, "rules": [PODS, NODES]})
        c.create(
            rt, {"metadata": {"name": "unrelated"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}
        )
        await eventually(lambda: c.get(rt, "", "monitoring")["rules"] == [PODS, NODES])
        c.delete(rt, "", "a-pods")
        await eventually(lambda: c.get(rt, "", "monitoring")["rules"] == [NODES])
        # the bootstrap roles aggregate as upstream's: view's rules are part of edit's and admin's
        view = c.get(rt, "", "view")["rules"]
        assert all(r in c.get(rt, "", "admin")["rules"] for r in view)
