"""Container runtimes of the simulated kubelets, chosen per cluster and per node in the
cluster profile (``kubelet: {runtime: simulated|process}``, ``nodes[].kubelet.runtime``):

- ``simulated`` (the default): containers run nothing; their lifecycle is a function of
  time and annotations (mockkube/kubelet/lifecycle.py);
- ``process``: a container's command runs as a host process in a bubblewrap sandbox
  (process.py, sandbox.py, volumes.py), its output is its log (logfile.py), its exits
  drive the pod as the kubelet's restart rules and back-off do (backoff.py).
"""

from __future__ import annotations

RUNTIMES = ("simulated", "process")
