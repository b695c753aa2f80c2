"""The kubelet's gRPC plugin API, generated from the upstream .proto files in this
directory (kubernetes/kubelet pkg/apis/pluginregistration/v1, dra/v1, dra/v1beta1,
dra-health/v1alpha1) by scripts/gen_pluginapi.py. Do not edit the *_pb2* files.

``DRA_VERSIONS`` maps the service names a plugin lists in ``supported_versions`` to the
generated (messages, stubs) modules, in the kubelet's order of preference.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

DRA_PLUGIN_TYPE = "DRAPlugin"
HEALTH_SERVICE = "v1alpha1.DRAResourceHealth"
DRA_VERSION_NAMES = ("v1.DRAPlugin", "v1beta1.DRAPlugin")  # DRA_VERSIONS' keys, without importing gRPC

# The generated modules (and grpc, protobuf) load at first use of these names: a kubelet
# whose nodes only run simulated drivers never talks gRPC, and importing it cost 0.1 s of
# every server's start.
_LAZY = ("DRA_VERSIONS", "reg_pb2", "reg_grpc", "health_pb2", "health_grpc")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mockkube.generated.pluginapi import (
        dra_health_v1alpha1_pb2,
        dra_health_v1alpha1_pb2_grpc,
        dra_v1_pb2,
        dra_v1_pb2_grpc,
        dra_v1beta1_pb2,
        dra_v1beta1_pb2_grpc,
        pluginregistration_v1_pb2,
        pluginregistration_v1_pb2_grpc,
    )

    versions: dict[str, tuple[ModuleType, ModuleType]] = {
        "v1.DRAPlugin": (dra_v1_pb2, dra_v1_pb2_grpc),
        "v1beta1.DRAPlugin": (dra_v1beta1_pb2, dra_v1beta1_pb2_grpc),
    }
    globals().update(
        DRA_VERSIONS=versions,
        reg_pb2=pluginregistration_v1_pb2,
        reg_grpc=pluginregistration_v1_pb2_grpc,
        health_pb2=dra_health_v1alpha1_pb2,
        health_grpc=dra_health_v1alpha1_pb2_grpc,
    )
    return globals()[name]


__all__ = [
    "DRA_PLUGIN_TYPE",
    "DRA_VERSIONS",
    "DRA_VERSION_NAMES",
    "HEALTH_SERVICE",
    "health_grpc",
    "health_pb2",
    "reg_grpc",
    "reg_pb2",
]
