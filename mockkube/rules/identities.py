"""Who the in-process components act as, by upstream's names: kube-controller-manager's
controllers as their ServiceAccounts in kube-system (kubeadm runs it with
``--use-service-account-credentials``), the scheduler as ``system:kube-scheduler``, a
kubelet as ``system:node:<name>``, the built-in DRA drivers as ServiceAccounts of their own.
Admission (``request.userInfo`` in policies and webhooks) sees these identities, and with an
enforcing ``--authorization-mode`` their writes are authorized as theirs
(mockkube/apiserver/authz/components.py) against upstream's bootstrap roles for them."""

from __future__ import annotations

AUTHENTICATED = "system:authenticated"
SCHEDULER = {"username": "system:kube-scheduler", "groups": [AUTHENTICATED]}
CONTROLLER_MANAGER = {"username": "system:kube-controller-manager", "groups": [AUTHENTICATED]}
# kube-apiserver's own loopback client (its post-start hooks, the master endpoints reconciler)
APISERVER = {"username": "system:apiserver", "groups": ["system:masters", AUTHENTICATED]}

# mockkube controller name -> its ServiceAccount upstream (where the two differ)
_SERVICE_ACCOUNTS = {
    "serviceaccount-controller": "service-account-controller",
    "persistentvolume-controller": "persistent-volume-binder",
    "node-lifecycle": "node-controller",
    "garbage-collector": "generic-garbage-collector",
    "resourceclaim-controller": "resource-claim-controller",
    "csrsigning-controller": "certificate-controller",
    "horizontal-pod-autoscaler-controller": "horizontal-pod-autoscaler",
}
# controllers kube-controller-manager runs with its own credentials
_OWN_CREDENTIALS = {"serviceaccount-token-controller"}


def service_account_user(namespace: str, name: str) -> dict:
    return {
        "username": f"system:serviceaccount:{namespace}:{name}",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED],
    }


def controller_user(name: str) -> dict:
    """The identity a controller named ``name`` writes as."""
    if name in _OWN_CREDENTIALS:
        return CONTROLLER_MANAGER
    return service_account_user("kube-system", _SERVICE_ACCOUNTS.get(name, name))


def node_user(node: str) -> dict:
    return {"username": f"system:node:{node}", "groups": ["system:nodes", AUTHENTICATED]}


# the controllers mockkube runs, by their names (their ServiceAccounts exist in kube-system,
# as kube-controller-manager creates them with --use-service-account-credentials)
CONTROLLERS = (
    "clusterrole-aggregation-controller",
    "cronjob-controller",
    "csrsigning-controller",
    "daemon-set-controller",
    "deployment-controller",
    "device-taint-eviction-controller",
    "disruption-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "garbage-collector",
    "horizontal-pod-autoscaler-controller",
    "job-controller",
    "namespace-controller",
    "node-lifecycle",
    "persistentvolume-controller",
    "replicaset-controller",
    "replication-controller",
    "resourceclaim-controller",
    "resourcepoolstatusrequest-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "serviceaccount-controller",
    "service-cidrs-controller",
    "statefulset-controller",
    "ttl-after-finished-controller",
)


def controller_service_accounts() -> list[str]:
    """Names of the kube-system ServiceAccounts the controllers act as."""
    return sorted({controller_user(c)["username"].rpartition(":")[2] for c in CONTROLLERS if c not in _OWN_CREDENTIALS})


# -- the built-in simulated DRA drivers -----------------------------------------------------
# Each acts as a real driver deployed by its Helm chart would: under its own ServiceAccount
# (mockkube/apiserver/resources/rbac_bootstrap.py grants it what such a chart grants). Its kubelet
# plugin on a node holds a token bound to its pod, which names the node
# (ServiceAccountTokenPodNodeInfo), so its ``status.devices`` writes are checked as
# ``associated-node``; a driver with a controller for devices of many nodes (the FPGA fabric)
# also holds ``arbitrary-node``.
DRIVER_NAMESPACE = "kube-system"
# the built-in drivers by name (mockkube/drivers keeps their classes; a unit test keeps the two equal)
BUILTIN_DRIVERS = ("cpu.example.com", "fpga.example.com", "gpu.example.com")
MULTI_NODE_DRIVERS = frozenset({"fpga.example.com"})
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"


def driver_service_account(driver: str) -> str:
    """``gpu.example.com`` -> ``gpu-example-com-driver``."""
    return f"{driver.replace('.', '-')}-driver"


def driver_user(driver: str, node: str = "") -> dict:
    """The identity of ``driver``'s kubelet plugin on ``node`` (its controller without one)."""
    user = service_account_user(DRIVER_NAMESPACE, driver_service_account(driver))
    if node:
        user["extra"] = {NODE_NAME_EXTRA: [node]}
    return user


def driver_service_accounts() -> list[str]:
    return sorted(driver_service_account(d) for d in BUILTIN_DRIVERS)
