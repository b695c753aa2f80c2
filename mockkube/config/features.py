"""Feature gates and runtime-config, as kube-apiserver's ``--feature-gates`` and
``--runtime-config`` set them.

One ``FeatureGates`` per cluster: the API server (fields dropped, resources served), the
scheduler, controllers and kubelets all ask it, so a switched-off feature is off
everywhere at once. ``SPECS`` holds v1.36's gates as kube-apiserver registers them, read
from ``feature_gates_v1.36.json``, which scripts/gen_feature_gates.py generates from
upstream's versioned feature lists (never edited by hand). ``RuntimeConfig`` decides which
built-in group/versions are served. Pure: no I/O beyond reading that file at import.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from mockkube.machinery.strconv import go_quote

log = logging.getLogger("mockkube.features")

SPECS_PATH = Path(__file__).with_name("feature_gates_v1.36.json")


class FeatureGateError(ValueError):
    """A bad ``--feature-gates`` or ``--runtime-config`` value: a start-up error."""


@dataclass(frozen=True)
class FeatureSpec:
    """One gate at v1.36: its default, its stage (ALPHA, BETA, GA, DEPRECATED) and whether
    it is locked to its default."""

    default: bool
    stage: str
    locked: bool = False

    @property
    def metric_stage(self) -> str:
        """The ``stage`` label of ``kubernetes_feature_enabled``: featuregate's PreRelease
        string, which is empty for GA."""
        return "" if self.stage == "GA" else self.stage


def load_specs(path: Path = SPECS_PATH) -> dict[str, FeatureSpec]:
    doc = json.loads(path.read_text())
    return {
        name: FeatureSpec(bool(g["default"]), g["stage"], bool(g.get("lockToDefault")))
        for name, g in doc["gates"].items()
    }


def load_dependencies(path: Path = SPECS_PATH) -> dict[str, tuple[str, ...]]:
    """{gate: the gates it depends on}, as kube's ``defaultKubernetesFeatureGateDependencies``
    declares them (featuregate's AddDependencies; lists sorted as AddDependencies sorts them)."""
    doc = json.loads(path.read_text())
    return {name: tuple(sorted(on)) for name, on in doc.get("dependencies", {}).items()}


# name -> spec at v1.36 (generated; see scripts/gen_feature_gates.py)
SPECS: dict[str, FeatureSpec] = load_specs()
# name -> the gates it needs on (generated with SPECS)
DEPENDENCIES: dict[str, tuple[str, ...]] = load_dependencies()

ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"


def _parse_bool(name: str, value: str) -> bool:
    """strconv.ParseBool, as featuregate's Set reads a value."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise FeatureGateError(
        f"invalid value of {name}={value}, err: strconv.ParseBool: parsing {go_quote(value)}: invalid syntax"
    )


def parse_gate_list(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as component-base's flag reads it (spaces around items allowed)."""
    out: dict[str, bool] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        out[name] = _parse_bool(name, value)
    return out


def gate_overrides(value: "Mapping[str, bool | str] | str | None") -> dict[str, bool]:
    """A ``--feature-gates`` string or a mapping (profile, marker) as {name: bool}."""
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_gate_list(value)
    out = {}
    for name, v in value.items():
        out[str(name)] = v if isinstance(v, bool) else _parse_bool(str(name), str(v))
    return out


class FeatureGates:
    """The cluster's gates: v1.36's defaults with the user's overrides on top. ``AllAlpha``
    and ``AllBeta`` set every alpha (beta) gate not named on its own, as upstream's do."""

    def __init__(
        self,
        overrides: Mapping[str, bool] | None = None,
        specs: Mapping[str, FeatureSpec] = SPECS,
        dependencies: Mapping[str, tuple[str, ...]] = DEPENDENCIES,
    ) -> None:
        self.specs = specs
        self.dependencies = dependencies
        self.overrides: dict[str, bool] = {}
        for name, value in (overrides or {}).items():
            spec = specs.get(name)
            if spec is None:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if spec.locked and bool(value) != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {str(bool(value)).lower()}, feature is locked to {str(spec.default).lower()}"
                )
            if spec.stage == "DEPRECATED":
                log.warning(
                    "Setting deprecated feature gate %s=%s. It will be removed in a future release.",
                    name,
                    str(bool(value)).lower(),
                )
            elif spec.stage == "GA":
                log.warning(
                    "Setting GA feature gate %s=%s. It will be removed in a future release.",
                    name,
                    str(bool(value)).lower(),
                )
            self.overrides[name] = bool(value)
        self._check_dependencies()

    def _check_dependencies(self) -> None:
        """featuregate's check after a Set: every enabled gate's dependencies must be enabled
        too (``X is enabled, but depends on features that are disabled: [A B]``; several
        such errors aggregated as ``[e1, e2]``, here in name order)."""
        errs = []
        for name in sorted(self.dependencies):
            if name not in self.specs or not self.enabled(name):
                continue
            off = [dep for dep in self.dependencies[name] if dep in self.specs and not self.enabled(dep)]
            if off:
                errs.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
        if len(errs) == 1:
            raise FeatureGateError(errs[0])
        if errs:
            raise FeatureGateError("[" + ", ".join(errs) + "]")

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        return cls(parse_gate_list(text))

    def enabled(self, name: str) -> bool:
        """Whether ``name`` is on; an unknown name is a programming error (KeyError)."""
        if name in self.overrides:
            return self.overrides[name]
        spec = self.specs[name]
        if spec.stage == "ALPHA" and ALL_ALPHA in self.overrides:
            return self.overrides[ALL_ALPHA]
        if spec.stage == "BETA" and ALL_BETA in self.overrides:
            return self.overrides[ALL_BETA]
        return spec.default

    def merged(self, overrides: Mapping[str, bool]) -> FeatureGates:
        """These gates with more overrides on top (later settings win)."""
        return FeatureGates({**self.overrides, **overrides}, self.specs, self.dependencies)

    def items(self) -> Iterable[tuple[str, bool]]:
        return ((name, self.enabled(name)) for name in sorted(self.specs))

    def __repr__(self) -> str:
        return f"FeatureGates({self.overrides!r})"


# -- --runtime-config ---------------------------------------------------------------

_MATCHERS = {
    "api/all": lambda v: True,
    "api/ga": lambda v: re.fullmatch(r"v\d+", v) is not None,
    "api/beta": lambda v: re.fullmatch(r"v\d+beta\d+", v) is not None,
    "api/alpha": lambda v: re.fullmatch(r"v\d+alpha\d+", v) is not None,
}


# The group/versions of k8s.io/api at kubernetes-1.36 that kube-apiserver's scheme knows: a
# --runtime-config key naming one of them is accepted even where mockkube does not serve it
# (yet); another version of a known group is a start-up error, as upstream.
UPSTREAM_GROUP_VERSIONS: frozenset[tuple[str, str]] = frozenset(
    (group, version)
    for group, versions in {
        "": "v1",
        "admissionregistration.k8s.io": "v1 v1alpha1 v1beta1",
        "internal.apiserver.k8s.io": "v1alpha1",
        "apps": "v1 v1beta1 v1beta2",
        "authentication.k8s.io": "v1 v1alpha1 v1beta1",
        "authorization.k8s.io": "v1 v1beta1",
        "autoscaling": "v1 v2",
        "batch": "v1 v1beta1",
        "certificates.k8s.io": "v1 v1alpha1 v1beta1",
        "coordination.k8s.io": "v1 v1alpha2 v1beta1",
        "discovery.k8s.io": "v1 v1beta1",
        "events.k8s.io": "v1 v1beta1",
        "extensions": "v1beta1",
        "flowcontrol.apiserver.k8s.io": "v1 v1beta1 v1beta2 v1beta3",
        "networking.k8s.io": "v1 v1beta1",
        "node.k8s.io": "v1 v1alpha1 v1beta1",
        "policy": "v1 v1beta1",
        "rbac.authorization.k8s.io": "v1 v1alpha1 v1beta1",
        "resource.k8s.io": "v1 v1alpha3 v1beta1 v1beta2",
        "scheduling.k8s.io": "v1 v1alpha2 v1beta1",
        "storage.k8s.io": "v1 v1alpha1 v1beta1",
        "storagemigration.k8s.io": "v1beta1",
    }.items()
    for version in versions.split()
)


def parse_runtime_config(value: "Mapping[str, bool | str] | str | None") -> dict[str, str]:
    """``--runtime-config`` as cliflag's ConfigurationMap reads it: ``key=value`` pairs split
    on commas, a bare ``key`` meaning an empty value (true). A mapping's bools become
    "true"/"false"."""
    if value is None:
        return {}
    if not isinstance(value, str):
        return {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()}
    out: dict[str, str] = {}
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        key, _, val = item.partition("=")
        out[key.strip()] = val.strip()
    return out


class RuntimeConfig:
    """Which built-in group/versions (and resources) are served: v1.36's defaults (every GA
    version on; beta and alpha versions off, as KEP-3136 has had new betas since v1.24), then
    ``api/all``, ``api/ga``, ``api/beta``, ``api/alpha``, then ``group/version`` and finally
    ``group/version/resource`` settings, as kube-apiserver's MergeAPIResourceConfigs applies
    them. Custom resources are not affected."""

    def __init__(self, overrides: "Mapping[str, bool | str] | str | None" = None) -> None:
        self.overrides = parse_runtime_config(overrides)
        self._all: list[tuple[str, bool]] = []
        self._versions: dict[tuple[str, str], bool] = {}
        self._resources: dict[tuple[str, str, str], bool] = {}
        for key in ("api/all", "api/ga", "api/beta", "api/alpha"):
            if key in self.overrides:
                value = self.overrides[key]
                if value not in ("true", "false"):
                    raise FeatureGateError(f"invalid value {key}={value}")
                self._all.append((key, value == "true"))

    def validate(self, group_versions: Iterable[tuple[str, str]]) -> None:
        """Check the group/version keys against what this server can serve, as
        kube-apiserver does at start: a group it does not know is ignored, a version of a
        known group that does not exist is an error."""
        known = set(group_versions) | UPSTREAM_GROUP_VERSIONS
        groups = {g for g, _ in known}
        for key, value in self.overrides.items():
            if key in _MATCHERS:
                continue
            tokens = key.split("/")
            if len(tokens) < 2 or len(tokens) > 3:
                continue
            group, version = tokens[0], tokens[1]
            if group not in groups:  # ignored, as upstream does ("api/v1" too: the core group is "")
                continue
            if (group, version) not in known:
                raise FeatureGateError(f"group version {group}/{version} that has not been registered")
            if value == "":
                enabled = True
            else:
                try:
                    enabled = _parse_bool(key, value)
                except FeatureGateError:
                    raise FeatureGateError(
                        f"invalid value of {key}: {value}, err: strconv.ParseBool: parsing {go_quote(value)}: invalid syntax"
                    ) from None
            if len(tokens) == 2:
                self._versions[(group, version)] = enabled
            else:
                if tokens[2].lower() != tokens[2]:
                    raise FeatureGateError(
                        f"invalid key {key}: group/version/resource and resource is always lowercase plural, not {go_quote(tokens[2])}"
                    )
                self._resources[(group, version, tokens[2])] = enabled

    def version_enabled(self, group: str, version: str) -> bool:
        on = re.fullmatch(r"v\d+", version) is not None  # v1.36's defaults
        for key, value in self._all:
            if _MATCHERS[key](version):
                on = value
        return self._versions.get((group, version), on)

    def served(self, group: str, version: str, plural: str) -> bool:
        key = (group, version, plural)
        if key in self._resources:
            return self._resources[key]
        return self.version_enabled(group, version)


def resource_served(rt, gates: FeatureGates, runtime: RuntimeConfig) -> bool:
    """Whether a built-in resource type is served: its group/version enabled and its
    ``feature_gate`` (if any) on."""
    if rt.feature_gate and not gates.enabled(rt.feature_gate):
        return False
    return runtime.served(rt.group, rt.version, rt.plural)


def served_registry(registry, gates: FeatureGates, runtime: RuntimeConfig):
    """A child of ``registry`` without the resource types this configuration does not serve."""
    out = registry.child()
    for rt in out.all():
        if not resource_served(rt, gates, runtime):
            out.remove(rt)
    return out


def gate_table_markdown(specs: Mapping[str, FeatureSpec] = SPECS) -> str:
    """The gates and their v1.36 defaults as a Markdown table (docs/compatibility.md)."""
    lines = ["| gate | stage | default | locked |", "| --- | --- | --- | --- |"]
    for name in sorted(specs):
        s = specs[name]
        lines.append(f"| {name} | {s.stage} | {str(s.default).lower()} | {'yes' if s.locked else ''} |")
    return "\n".join(lines)


def gate_help(specs: Mapping[str, FeatureSpec] = SPECS) -> str:
    """The list ``--feature-gates`` help shows, as component-base's KnownFeatures has it
    (GA and deprecated gates hidden)."""
    out = []
    for name in sorted(specs):
        s = specs[name]
        if s.stage in ("GA", "DEPRECATED"):
            continue
        out.append(f"{name}=true|false ({s.stage} - default={str(s.default).lower()})")
    return "\n".join(out)
