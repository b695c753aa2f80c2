#!/usr/bin/env python3
"""Regenerate the kubelet plugin gRPC stubs in mockkube/generated/pluginapi from the upstream .proto
files committed beside them (copied from kubernetes/kubelet, pkg/apis/..., with their
license headers). Needs grpcio-tools: ``pip install grpcio-tools``.

The .proto files are renamed flat (dra_v1.proto ...) because Python module names cannot
carry the upstream directory names (``dra-health``); the proto packages, and therefore
the gRPC service names on the wire, are unchanged.

    python scripts/gen_pluginapi.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "mockkube" / "generated" / "pluginapi"

# flat name -> upstream path in kubernetes/kubelet (for the record and for refreshing)
PROTOS = {
    "pluginregistration_v1.proto": "pkg/apis/pluginregistration/v1/api.proto",
    "dra_v1.proto": "pkg/apis/dra/v1/api.proto",
    "dra_v1beta1.proto": "pkg/apis/dra/v1beta1/api.proto",
    "dra_health_v1alpha1.proto": "pkg/apis/dra-health/v1alpha1/api.proto",
}


def main() -> int:
    from grpc_tools import protoc

    for name in PROTOS:
        rc = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{ROOT}",
                f"--python_out={ROOT}",
                f"--pyi_out={ROOT}",
                f"--grpc_python_out={ROOT}",
                str((PKG / name).relative_to(ROOT)),
            ]
        )
        if rc != 0:
            print(f"protoc failed for {name}", file=sys.stderr)
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
