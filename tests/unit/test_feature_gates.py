"""Feature gates and runtime-config (mockkube/config/features.py) and the generator of
v1.36's gate table (scripts/gen_feature_gates.py), pinned on a small Go-like excerpt."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from mockkube.config import features
from mockkube.config.features import FeatureGateError, FeatureGates, RuntimeConfig, parse_gate_list

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("gen_feature_gates", ROOT / "scripts" / "gen_feature_gates.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# what upstream's files look like: constants naming the gates, a versioned map with
# comments, package-qualified keys, a MinCompatibilityVersion entry, client-go's
# unqualified PreRelease and component-base's version.MajorMinor
EXCERPT = """
package features

const (
	// owner: @someone
	// A gate whose constant and name differ.
	CPUCFSQuotaPeriod featuregate.Feature = "CustomCPUCFSQuotaPeriod"

	AlphaThing featuregate.Feature = "AlphaThing"
)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	AlphaThing: {
		{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Alpha},
	},

	CPUCFSQuotaPeriod: {
		{Version: version.MustParse("1.12"), Default: false, PreRelease: featuregate.Alpha},
	},

	DRAShiny: {
		{Version: version.MustParse("1.34"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.36"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.GA, LockToDefault: true}, // GA in 1.37
	},

	Locked: {
		{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.GA, LockToDefault: true}, // remove in 1.38
	},

	NotYet: {
		{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha},
	},

	Compat: {
		{Version: version.MustParse("1.36"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.36"), Default: true, PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse("1.37")},
	},

	genericfeatures.Relisted: {
		{Version: version.MustParse("1.20"), Default: false, PreRelease: featuregate.Deprecated},
	},
}

var defaultKubernetesFeatureGateDependencies = map[featuregate.Feature][]featuregate.Feature{
	AlphaThing: {DRAShiny, genericfeatures.Relisted}, // a comment

	CPUCFSQuotaPeriod: {featuregate.Feature(clientfeatures.WatchListClient)},

	Locked: {},

	NotYet: {AlphaThing},
}
"""

CLIENT_GO = """
var defaultVersionedKubernetesFeatureGates = map[Feature]VersionedSpecs{
	WatchListClient: {
		{Version: version.MustParse("1.30"), Default: false, PreRelease: Beta},
		{Version: version.MustParse("1.35"), Default: true, PreRelease: Beta},
	},
	Relisted: {
		{Version: version.MustParse("1.20"), Default: true, PreRelease: GA},
	},
}
"""

FEATUREGATE = """
	allAlphaGate Feature = "AllAlpha"
	defaultFeatures = map[Feature]VersionedSpecs{
		allAlphaGate: {{Default: false, PreRelease: Alpha, Version: version.MajorMinor(0, 0)}},
	}
"""


def test_the_script_reads_versioned_specs_at_a_version():
    gen = _script()
    doc = gen.generate([("kube", EXCERPT), ("client-go", CLIENT_GO), ("featuregate", FEATUREGATE)], (1, 36))
    assert doc["version"] == "1.36"
    assert doc["sources"] == ["kube", "client-go", "featuregate"]
    assert doc["gates"] == {
        "AllAlpha": {"default": False, "stage": "ALPHA", "lockToDefault": False},
        "AlphaThing": {"default": False, "stage": "ALPHA", "lockToDefault": False},
        "Compat": {"default": False, "stage": "BETA", "lockToDefault": False},  # the 1.37-compatible entry waits
        "CustomCPUCFSQuotaPeriod": {"default": False, "stage": "ALPHA", "lockToDefault": False},
        "DRAShiny": {"default": True, "stage": "BETA", "lockToDefault": False},  # 1.36's entry, not 1.37's
        "Locked": {"default": True, "stage": "GA", "lockToDefault": True},
        "Relisted": {"default": True, "stage": "GA", "lockToDefault": False},  # the later source wins
        "WatchListClient": {"default": True, "stage": "BETA", "lockToDefault": False},
    }  # NotYet: no entry at 1.36, so not a gate yet; the dependency map is not a spec map
    assert doc["dependencies"] == {  # names resolved through the constants; NotYet is no gate yet
        "AlphaThing": ["DRAShiny", "Relisted"],
        "CustomCPUCFSQuotaPeriod": ["WatchListClient"],
    }


def test_the_script_at_another_version():
    gen = _script()
    gates = gen.generate([("kube", EXCERPT)], (1, 37))["gates"]
    assert gates["DRAShiny"] == {"default": True, "stage": "GA", "lockToDefault": True}
    assert gates["NotYet"]["stage"] == "ALPHA"
    assert gates["Compat"]["default"] is True


def test_the_committed_table_is_what_the_script_makes_of_its_sources():
    doc = json.loads(features.SPECS_PATH.read_text())
    assert doc["version"] == "1.36" and doc["generatedBy"] == "scripts/gen_feature_gates.py"
    assert len(doc["gates"]) > 200
    g = doc["gates"]
    # spot checks against upstream's 1.36 entries
    assert g["DynamicResourceAllocation"] == {"default": True, "stage": "GA", "lockToDefault": True}
    assert g["DRAAdminAccess"] == {"default": True, "stage": "GA", "lockToDefault": True}
    assert g["DRANodeAllocatableResources"] == {"default": False, "stage": "ALPHA", "lockToDefault": False}
    assert g["DRAExtendedResource"] == {"default": True, "stage": "BETA", "lockToDefault": False}
    assert g["DRADeviceTaintRules"] == {"default": False, "stage": "BETA", "lockToDefault": False}
    assert g["GangScheduling"]["default"] is False and g["GenericWorkload"]["default"] is False
    assert g["AllAlpha"]["stage"] == "ALPHA" and g["AllBeta"]["stage"] == "BETA"
    # kube's own v1.36 entries (no longer the v1.35 line's)
    assert g["DRAResourcePoolStatus"] == {"default": False, "stage": "ALPHA", "lockToDefault": False}
    assert g["CustomCPUCFSQuotaPeriod"] == {"default": True, "stage": "GA", "lockToDefault": False}
    assert g["UserNamespacesSupport"] == {"default": True, "stage": "GA", "lockToDefault": True}
    assert g["MaxUnavailableStatefulSet"] == {"default": False, "stage": "BETA", "lockToDefault": False}
    assert "HPAGeneration" not in g and "SidecarContainers" not in g  # a 1.37 gate; one removed by 1.36
    assert doc["dependencies"]["GangScheduling"] == ["GenericWorkload"]
    assert not any("website" in s or "v1.35" in s for s in doc["sources"])
    assert {name: (s.default, s.stage, s.locked) for name, s in features.SPECS.items()} == {
        name: (v["default"], v["stage"], v["lockToDefault"]) for name, v in g.items()
    }


def test_the_example_dra_drivers_v1_36_gate_set_is_accepted():
    gates = FeatureGates(
        parse_gate_list(
            "DRAAdminAccess=true,DRAWorkloadResourceClaims=true,GangScheduling=true,GenericWorkload=true,"
            "DRAExtendedResource=true,DRADeviceBindingConditions=true,DRANodeAllocatableResources=true,"
            "DRAConsumableCapacity=true"
        )
    )
    assert all(gates.enabled(n) for n in ("GangScheduling", "DRAWorkloadResourceClaims", "DRANodeAllocatableResources"))


def test_gate_errors_are_kube_apiservers():
    with pytest.raises(FeatureGateError, match="^unrecognized feature gate: NoSuchGate$"):
        FeatureGates.parse("NoSuchGate=true")
    with pytest.raises(
        FeatureGateError,
        match="^cannot set feature gate DynamicResourceAllocation to false, feature is locked to true$",
    ):
        FeatureGates.parse("DynamicResourceAllocation=false")
    with pytest.raises(FeatureGateError, match="^missing bool value for DRAAdminAccess$"):
        FeatureGates.parse("DRAAdminAccess")
    with pytest.raises(
        FeatureGateError,
        match='^invalid value of DRAAdminAccess=yes, err: strconv.ParseBool: parsing "yes": invalid syntax$',
    ):
        FeatureGates.parse("DRAAdminAccess=yes")
    assert FeatureGates.parse(" DRANodeAllocatableResources = T , ").enabled("DRANodeAllocatableResources")


def test_defaults_overrides_and_all_alpha_all_beta():
    g = FeatureGates()
    assert not g.enabled("DRANodeAllocatableResources") and g.enabled("DRAExtendedResource")
    g = FeatureGates.parse("AllAlpha=true,DRAListTypeAttributes=false")
    assert g.enabled("DRANodeAllocatableResources")  # alpha, set by AllAlpha
    assert not g.enabled("DRAListTypeAttributes")  # named on its own: wins
    g = FeatureGates.parse("AllBeta=false,DRAConsumableCapacity=true")
    assert not g.enabled("DRAExtendedResource")  # beta, cleared by AllBeta
    assert g.enabled("DRAConsumableCapacity")
    assert g.enabled("DynamicResourceAllocation")  # GA: neither touches it
    assert g.merged({"DRAExtendedResource": True}).enabled("DRAExtendedResource")


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "GangScheduling=true",
            "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            "DRAWorkloadResourceClaims=true",
            "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            # two dependents of one beta gate: featuregate's aggregate of both errors
            "DRAResourceClaimDeviceStatus=false",
            "[DRADeviceBindingConditions is enabled, but depends on features that are disabled: "
            "[DRAResourceClaimDeviceStatus], DRAResourceClaimGranularStatusAuthorization is enabled, but depends "
            "on features that are disabled: [DRAResourceClaimDeviceStatus]]",
        ),
        (
            # AllAlpha turns on PodLevelResourceManagers, AllBeta=false turns off what it needs
            "AllAlpha=true,AllBeta=false,NodeDeclaredFeatures=true,TopologyAwareWorkloadScheduling=false",
            None,
        ),
    ],
)
def test_dependencies_between_gates_are_checked_as_featuregate_does(value, message):
    """kube's defaultKubernetesFeatureGateDependencies, checked after the gates are set."""
    if message is None:
        with pytest.raises(
            FeatureGateError,
            match="PodLevelResourceManagers is enabled, but depends on features that are disabled: \\[PodLevelResources\\]",
        ):
            FeatureGates.parse(value)
        return
    with pytest.raises(FeatureGateError) as e:
        FeatureGates.parse(value)
    assert str(e.value) == message


def test_the_dependencies_are_upstreams_declared_ones():
    deps = features.DEPENDENCIES
    assert deps["DRAWorkloadResourceClaims"] == ("DynamicResourceAllocation", "GenericWorkload")
    assert deps["GangScheduling"] == ("GenericWorkload",)
    assert deps["DRADeviceBindingConditions"] == ("DRAResourceClaimDeviceStatus", "DynamicResourceAllocation")
    assert deps["DRADeviceTaintRules"] == ("DRADeviceTaints",)
    assert "DRAResourceClaimDeviceStatus" not in deps  # upstream: a soft dependency only
    assert all(d in features.SPECS for on in deps.values() for d in on)
    # the defaults satisfy them, and so does the example DRA driver's v1.36 set
    FeatureGates()
    FeatureGates.parse("GangScheduling=true,GenericWorkload=true,DRAWorkloadResourceClaims=true")


def test_runtime_config_defaults_and_precedence():
    known = [("", "v1"), ("resource.k8s.io", "v1"), ("resource.k8s.io", "v1beta2"), ("scheduling.k8s.io", "v1")]
    rc = RuntimeConfig()
    rc.validate(known)
    assert rc.served("resource.k8s.io", "v1", "resourceclaims")
    assert not rc.served("resource.k8s.io", "v1beta2", "devicetaintrules")  # beta: off since KEP-3136
    rc = RuntimeConfig("api/beta=true,resource.k8s.io/v1beta2/devicetaintrules=false")
    rc.validate(known)
    assert rc.version_enabled("resource.k8s.io", "v1beta2")
    assert not rc.served("resource.k8s.io", "v1beta2", "devicetaintrules")
    rc = RuntimeConfig({"api/all": False, "resource.k8s.io/v1": True, "unknown.example.com/v1": True})
    rc.validate(known)  # a group this server does not have is ignored, as upstream
    assert rc.served("resource.k8s.io", "v1", "resourceslices") and not rc.served("", "v1", "pods")
    assert RuntimeConfig("resource.k8s.io/v1beta2").overrides == {"resource.k8s.io/v1beta2": ""}


@pytest.mark.parametrize(
    "value, message",
    [
        ("api/all=yes", "invalid value api/all=yes"),
        ("resource.k8s.io/v9=true", "group version resource.k8s.io/v9 that has not been registered"),
        (
            "resource.k8s.io/v1=nah",
            'invalid value of resource.k8s.io/v1: nah, err: strconv.ParseBool: parsing "nah": invalid syntax',
        ),
        (
            "resource.k8s.io/v1/ResourceSlices=false",
            'invalid key resource.k8s.io/v1/ResourceSlices: group/version/resource and resource is always lowercase plural, not "ResourceSlices"',
        ),
    ],
)
def test_runtime_config_errors(value, message):
    with pytest.raises(FeatureGateError) as e:
        RuntimeConfig(value).validate([("resource.k8s.io", "v1")])
    assert str(e.value) == message


def test_metric_stage_is_empty_for_ga():
    assert features.SPECS["DynamicResourceAllocation"].metric_stage == ""
    assert features.SPECS["DRANodeAllocatableResources"].metric_stage == "ALPHA"


def test_help_lists_alpha_and_beta_gates_as_component_base_does():
    text = features.gate_help()
    assert "DRANodeAllocatableResources=true|false (ALPHA - default=false)" in text.splitlines()
    assert "DRAExtendedResource=true|false (BETA - default=true)" in text.splitlines()
    assert "DynamicResourceAllocation" not in text  # GA gates are not listed


def test_docs_list_the_generated_gates():
    text = (ROOT / "docs" / "compatibility.md").read_text()
    table = text.split("<!-- feature-gates -->\n", 1)[1].split("\n<!-- /feature-gates -->", 1)[0]
    assert table == features.gate_table_markdown()
