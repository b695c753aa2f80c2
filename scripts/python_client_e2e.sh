#!/usr/bin/env bash
# Run the official Python client's own e2e suite (kubernetes-client/python,
# kubernetes/e2e_test) against a fresh `mockkube serve` with the demo cluster.
#
#   scripts/python_client_e2e.sh /path/to/kubernetes-client-python [pytest args...]
#
# The suite is not on PyPI, so bring a checkout of the client's repository (only
# kubernetes/e2e_test is used). It runs from the checkout (its tests open files by relative
# paths) against the client installed in this venv, which it extends with the suite.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$1" && pwd)"; shift
py="${PYTHON:-$here/.venv/bin/python}"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
# the demo cluster (its process runtime runs the suite's port-forward echo server from a
# ConfigMap for real), whose kubelets keep restartPolicy Never pods without a command running
"$py" - "$work/profile.yaml" <<'PY'
import sys, yaml
from mockkube.config.profile import DEMO_PROFILE
profile = dict(DEMO_PROFILE, kubelet={**DEMO_PROFILE.get("kubelet", {}), "runToCompletion": "1h"})
open(sys.argv[1], "w").write(yaml.safe_dump(profile))
PY
"$py" -m mockkube serve --port 0 --kubeconfig "$work/kubeconfig" --cluster "$work/profile.yaml" > "$work/server.out" 2>&1 &
server=$!
for _ in $(seq 120); do grep -q "ready at" "$work/server.out" && break; sleep 0.5; done
grep "ready at" "$work/server.out"
cd "$repo"
KUBECONFIG="$work/kubeconfig" "$py" -c '
import sys, kubernetes, pytest
kubernetes.__path__.append("kubernetes")  # kubernetes.e2e_test from the checkout
sys.exit(pytest.main(["-p", "no:cacheprovider", "-p", "no:mockkube", "--rootdir", ".", "-c", "/dev/null",
                      "kubernetes/e2e_test"] + sys.argv[1:]))' "$@"
