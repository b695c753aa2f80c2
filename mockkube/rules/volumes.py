"""Finalizers that protect volumes in use (kubernetes.io/pvc-protection and pv-protection):
the API server adds them, the storage controller removes them once a volume is free."""

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
