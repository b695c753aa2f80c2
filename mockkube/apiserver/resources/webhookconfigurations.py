"""admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration and
MutatingWebhookConfiguration: defaults and validation as upstream
``pkg/apis/admissionregistration`` (v1 defaults, ``ValidateValidatingWebhookConfiguration``);
the calls themselves live in ``mockkube.apiserver.admission.webhooks``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from mockkube.apiserver.resources.admissionregistration import (
    _FAILURE_POLICIES,
    _MATCH_POLICIES,
    GROUP,
    _default_rules,
    _match_condition_errors,
    _rule_errors,
)
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_REINVOCATION = ["IfNeeded", "Never"]


def _qualified_errors(path: str, name: Any) -> list[fe.FieldError]:
    if not isinstance(name, str) or not name:
        return [fe.required(path, "")]
    if len([p for p in name.split(".") if p]) < 3:
        return [fe.invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


class WebhookConfigurationStrategy(Strategy):
    def __init__(self, mutating: bool) -> None:
        self.mutating = mutating

    def default(self, obj: dict, now: str | None = None) -> None:
        for wh in obj.get("webhooks") or []:
            if not isinstance(wh, dict):
                continue
            wh.setdefault("failurePolicy", "Fail")
            wh.setdefault("matchPolicy", "Equivalent")
            wh.setdefault("namespaceSelector", {})
            wh.setdefault("objectSelector", {})
            wh.setdefault("timeoutSeconds", 10)
            if self.mutating:
                wh.setdefault("reinvocationPolicy", "Never")
            _default_rules(wh.get("rules"))
            svc = (wh.get("clientConfig") or {}).get("service")
            if isinstance(svc, dict):
                svc.setdefault("port", 443)

    def prepare_create(self, obj: dict) -> None:
        obj.setdefault("metadata", {})["generation"] = 1  # upstream PrepareForCreate

    def prepare_update(self, new: dict, old: dict) -> None:
        """upstream PrepareForUpdate: the generation counts changes of the webhooks."""
        gen = (old.get("metadata") or {}).get("generation") or 1
        new.setdefault("metadata", {})["generation"] = gen + (new.get("webhooks") != old.get("webhooks"))

    def validate(self, obj: dict) -> list[fe.FieldError]:
        errs: list[fe.FieldError] = []
        seen: set[str] = set()
        for i, wh in enumerate(obj.get("webhooks") or []):
            p = fe.Path("webhooks").index(i)
            name = wh.get("name")
            errs += _qualified_errors(str(p.child("name")), name)
            if isinstance(name, str) and name in seen:
                errs.append(fe.duplicate(str(p.child("name")), name))
            seen.add(name)
            errs += _rule_errors(wh.get("rules"), p.child("rules"), False)
            if wh.get("failurePolicy") not in _FAILURE_POLICIES:
                errs.append(fe.not_supported(str(p.child("failurePolicy")), wh.get("failurePolicy"), _FAILURE_POLICIES))
            if wh.get("matchPolicy") not in _MATCH_POLICIES:
                errs.append(fe.not_supported(str(p.child("matchPolicy")), wh.get("matchPolicy"), _MATCH_POLICIES))
            if wh.get("sideEffects") not in _SIDE_EFFECTS:
                errs.append(
                    fe.required(str(p.child("sideEffects")), "")
                    if wh.get("sideEffects") is None
                    else fe.not_supported(str(p.child("sideEffects")), wh.get("sideEffects"), _SIDE_EFFECTS)
                )
            t = wh.get("timeoutSeconds")
            if not isinstance(t, int) or not 1 <= t <= 30:
                errs.append(
                    fe.invalid(str(p.child("timeoutSeconds")), t, "the timeout value must be between 1 and 30 seconds")
                )
            versions = wh.get("admissionReviewVersions")
            if not versions:
                errs.append(fe.required(str(p.child("admissionReviewVersions")), "must specify one of v1, v1beta1"))
            elif not any(v in ("v1", "v1beta1") for v in versions):
                errs.append(
                    fe.invalid(
                        str(p.child("admissionReviewVersions")), versions, "must include at least one of v1, v1beta1"
                    )
                )
            if self.mutating and wh.get("reinvocationPolicy") not in _REINVOCATION:
                errs.append(
                    fe.not_supported(str(p.child("reinvocationPolicy")), wh.get("reinvocationPolicy"), _REINVOCATION)
                )
            errs += _client_config_errors(wh.get("clientConfig"), p.child("clientConfig"))
            errs += _match_condition_errors(wh.get("matchConditions"), p.child("matchConditions"), ())
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self.validate(new)


def _client_config_errors(cc: Any, path: fe.Path) -> list[fe.FieldError]:
    cc = cc if isinstance(cc, dict) else {}
    url, svc = cc.get("url"), cc.get("service")
    if url and svc:
        return [fe.required(str(path), "exactly one of url or service is required")]
    if not url and not svc:
        return [fe.required(str(path), "exactly one of url or service is required")]
    if url:
        u = urlparse(url)
        if u.scheme != "https":
            return [fe.invalid(str(path.child("url")), url, "'https' is the only allowed URL scheme")]
        if not u.hostname:
            return [fe.invalid(str(path.child("url")), url, "host must be specified")]
        return []
    errs = []
    for f in ("name", "namespace"):
        if not svc.get(f):
            errs.append(fe.required(str(path.child("service").child(f)), "service " + f + " is required"))
    port = svc.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(
            fe.invalid(
                str(path.child("service").child("port")),
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    return errs


validating_webhook_configurations = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        namespaced=False,
        categories=("api-extensions",),
        strategy=WebhookConfigurationStrategy(mutating=False),
    )
)
mutating_webhook_configurations = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        namespaced=False,
        categories=("api-extensions",),
        strategy=WebhookConfigurationStrategy(mutating=True),
    )
)
