"""Authorization: who may do what (kube-apiserver's request info, RBAC and Node authorizers)."""
