"""policy/v1 PodDisruptionBudgets (status kept by the disruption controller; the pods/eviction
subresource honours them)."""

from __future__ import annotations

import re

from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource

_PERCENT = re.compile(r"^[0-9]+%$")
_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]


def _int_or_percent(value, path: str) -> list[fe.FieldError]:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [fe.invalid(path, value, "must be an integer or percentage (e.g '5%')")]
    if isinstance(value, int):
        return [fe.invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    if not _PERCENT.match(value):
        return [
            fe.invalid(
                path,
                value,
                "a valid percent string must be a numeric string followed by an ending "
                "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )
        ]
    if int(value[:-1]) > 100:
        return [fe.invalid(path, value, "must not be greater than 100%")]
    return []


def validate_pdb(obj: dict) -> list[fe.FieldError]:
    spec = obj.get("spec") or {}
    errs: list[fe.FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(fe.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for k in ("minAvailable", "maxUnavailable"):
        if spec.get(k) is not None:
            errs += _int_or_percent(spec[k], f"spec.{k}")
    p = spec.get("unhealthyPodEvictionPolicy")
    if p is not None and p not in _POLICIES:
        errs.append(fe.not_supported("spec.unhealthyPodEvictionPolicy", p, _POLICIES))
    return errs


class PDBStrategy(SpecStatusStrategy):
    def initial_status(self, obj: dict) -> dict:
        return {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return validate_pdb(obj)


poddisruptionbudgets = REGISTRY.add(
    ResourceType(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        namespaced=True,
        short_names=("pdb",),
        subresources=(Subresource("status", "PodDisruptionBudget"),),
        strategy=PDBStrategy(),
    )
)
