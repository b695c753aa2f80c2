"""Admission webhooks (ValidatingWebhookConfiguration, MutatingWebhookConfiguration) as
kube-apiserver's ``admission/plugin/webhook`` dispatchers call them: matched by rules,
namespace and object selectors and matchConditions, sent an AdmissionReview v1, answers
applied (JSONPatch for mutating webhooks, with IfNeeded reinvocation), failures handled by
failurePolicy, warnings passed on, dry runs refused to webhooks with side effects.

Calls are synchronous: while webhooks are configured, HTTP writes run off the API's event
loop (``mockkube.apiserver.http.handlers`` moves them to a thread) and the store's write lock is let go
during each call (``Resources.unlocked``), so reads, lists and other writes go on while a
webhook is slow; the write's commit still checks the resourceVersion it started from.
"""

from __future__ import annotations

import base64
import concurrent.futures
import dataclasses
import logging
import uuid
from typing import TYPE_CHECKING

from mockkube.apiserver.admission.matching import (
    Attributes,
    namespace_selector_matches,
    object_selector_matches,
    rule_matches,
)
from mockkube.apiserver.admission.policy import activation, match_conditions_pass
from mockkube.apiserver.webhookclient import CallError, ServiceMap, WebhookClient
from mockkube.machinery import errors
from mockkube.machinery.meta import clone

if TYPE_CHECKING:
    from mockkube.apiserver.rest import Resources

log = logging.getLogger("mockkube.admission")
GROUP = "admissionregistration.k8s.io"


def review_request(a: Attributes, uid: str) -> dict:
    r = a.request()
    req = {
        "uid": uid,
        "kind": r["kind"],
        "resource": r["resource"],
        "requestKind": r["requestKind"],
        "requestResource": r["requestResource"],
        "name": a.name,
        "operation": a.operation,
        "userInfo": {k: v for k, v in (a.user or {}).items() if v},
        "object": a.obj,
        "oldObject": a.old,
        "dryRun": a.dry_run,
        "options": a.options,
    }
    if a.subresource:
        req["subResource"] = req["requestSubResource"] = a.subresource
    if a.namespace:
        req["namespace"] = a.namespace
    return req


def denied(name: str, status: dict | None) -> errors.APIError:
    """upstream webhookerrors.ToStatusErr."""
    status = dict(status or {})
    code = status.get("code") or 0
    code = code if isinstance(code, int) and code >= 400 else 400
    by = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{by}: {status['message']}"
    elif status.get("reason"):
        message = f"{by}: {status['reason']}"
    else:
        message = f"{by} without explanation"
    err = errors.APIError(code, status.get("reason") or "", message, status.get("details"))
    return err


def call_failed(name: str, reason: str) -> errors.APIError:
    msg = f'failed calling webhook "{name}": {reason}'
    return errors.APIError(500, "InternalError", f"Internal error occurred: {msg}", {"causes": [{"message": msg}]})


class Webhooks:
    """The webhook admission of one server; ``services`` maps service references."""

    def __init__(self, resources: "Resources", services: ServiceMap | None = None) -> None:
        self.res = resources
        self.services = services
        reg = resources.registry
        self._vrt = reg.get(GROUP, "v1", "validatingwebhookconfigurations")
        self._mrt = reg.get(GROUP, "v1", "mutatingwebhookconfigurations")

    def _configs(self, rt) -> list[dict]:
        return sorted(
            (e.obj for e in list(self.res.store.cache(rt).entries.values())), key=lambda o: o["metadata"]["name"]
        )

    def active(self) -> bool:
        """Whether any webhook is configured (writes then leave the event loop)."""
        return bool(len(self.res.store.cache(self._vrt)) or len(self.res.store.cache(self._mrt)))

    def _matching(self, rt, a: Attributes) -> list[tuple[dict, dict]]:
        if a.group == GROUP and a.resource in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
            return []  # upstream never calls webhooks for their own configurations
        out = []
        equivalent: list[Attributes] | None = None
        for cfg in self._configs(rt):
            for wh in cfg.get("webhooks") or []:
                rules = wh.get("rules") or []
                if not any(rule_matches(r, a) for r in rules):
                    if wh.get("matchPolicy", "Equivalent") == "Exact":
                        continue
                    if equivalent is None:
                        equivalent = self._equivalent(a)
                    if not any(rule_matches(r, e) for e in equivalent for r in rules):
                        continue
                if not namespace_selector_matches(wh.get("namespaceSelector"), a):
                    continue
                if not object_selector_matches(wh.get("objectSelector"), a):
                    continue
                out.append((cfg, wh))
        return out

    def _equivalent(self, a: Attributes) -> list[Attributes]:
        """The request at the other served versions of its resource (matchPolicy Equivalent).
        Upstream also converts the object to the matched version; here it is sent as requested."""
        reg = self.res.registry
        return [
            dataclasses.replace(a, version=v)
            for g, v in reg.group_versions()
            if g == a.group and v != a.version and reg.get(g, v, a.resource) is not None
        ]

    def _conditions_pass(self, wh: dict, a: Attributes) -> bool:
        conds = wh.get("matchConditions")
        if not conds:
            return True
        ok, err = match_conditions_pass(conds, activation(a, None, {}))
        if err:
            if wh.get("failurePolicy", "Fail") == "Fail":
                raise errors.forbidden(
                    a.resource,
                    a.group,
                    a.name or "Unknown",
                    f'admission webhook "{wh["name"]}" failed to evaluate match condition: {err}',
                )
            return False
        return ok

    def _call(self, wh: dict, a: Attributes, warnings: list[str]) -> dict | None:
        """The AdmissionResponse, or None when a failure is ignored (failurePolicy Ignore)."""
        name = wh["name"]
        if a.dry_run and wh.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{name}" does not support dry run')
        uid = str(uuid.uuid4())
        version = "v1" if "v1" in (wh.get("admissionReviewVersions") or ["v1"]) else "v1beta1"
        review = {
            "apiVersion": f"admission.k8s.io/{version}",
            "kind": "AdmissionReview",
            "request": review_request(a, uid),
        }
        timeout = wh.get("timeoutSeconds") or 10
        try:
            with self.res.unlocked():  # lists and other writes go on while the webhook thinks
                body = WebhookClient(wh.get("clientConfig") or {}, self.services).post(
                    review, timeout, f"timeout={timeout}s"
                )
            resp = (body or {}).get("response")
            if not isinstance(resp, dict):
                raise CallError("expected response in AdmissionReview")
            if resp.get("uid") != uid:
                raise CallError(f"expected response.uid={uid!r}, got {resp.get('uid')!r}")
        except CallError as e:
            if wh.get("failurePolicy", "Fail") == "Ignore":
                log.warning("failed calling webhook %r, failing open: %s", name, e)
                return None
            raise call_failed(name, str(e)) from None
        for w in resp.get("warnings") or []:
            if isinstance(w, str) and w and w not in warnings:
                warnings.append(w)
        if not resp.get("allowed"):
            raise denied(name, resp.get("status"))
        return resp

    # -- mutating ------------------------------------------------------------------
    def mutate(self, a: Attributes, warnings: list[str]) -> dict | None:
        """The object after every matching mutating webhook (None: nothing matched)."""
        if a.operation == "DELETE":  # called as upstream calls it; nothing to patch
            for _cfg, wh in self._matching(self._mrt, a):
                if self._conditions_pass(wh, a):
                    self._call(wh, a, warnings)
            return None
        if a.obj is None or a.operation not in ("CREATE", "UPDATE", "CONNECT"):
            return None
        hooks = self._matching(self._mrt, a)
        if not hooks:
            return None
        obj = a.obj
        reinvoke: list[dict] = []
        changed_by_any = False
        for _cfg, wh in hooks:
            changed = self._mutate_one(wh, a, warnings)
            changed_by_any = changed_by_any or changed
            if wh.get("reinvocationPolicy") == "IfNeeded":
                reinvoke.append(wh)
        if changed_by_any:
            # upstream reinvokes IfNeeded webhooks once when a later webhook changed the object
            for wh in reinvoke:
                self._mutate_one(wh, a, warnings)
        return a.obj if a.obj is not obj or changed_by_any else None

    def _mutate_one(self, wh: dict, a: Attributes, warnings: list[str]) -> bool:
        if not self._conditions_pass(wh, a):
            return False
        resp = self._call(wh, a, warnings)
        if resp is None or not resp.get("patch"):
            return False
        if resp.get("patchType") != "JSONPatch":
            raise call_failed(wh["name"], f"unsupported patch type {resp.get('patchType')!r}")
        from mockkube.machinery.patch import apply_json_patch

        try:
            import json

            ops = json.loads(base64.b64decode(resp["patch"]))
            new = apply_json_patch(clone(a.obj), ops)
        except errors.APIError as e:
            raise call_failed(wh["name"], f"JSON Patch: {e.message}") from None
        except ValueError as e:
            raise call_failed(wh["name"], f"invalid patch: {e}") from None
        if new == a.obj:
            return False
        a.obj = new
        return True

    # -- validating -------------------------------------------------------------------
    def validate(self, a: Attributes, warnings: list[str]) -> None:
        if not self.active():
            return
        hooks = [wh for _cfg, wh in self._matching(self._vrt, a) if self._conditions_pass(wh, a)]
        if len(hooks) <= 1:
            for wh in hooks:
                self._call(wh, a, warnings)
            return
        # upstream calls validating webhooks in parallel; the first failure in order wins
        own = [list(warnings) for _ in hooks]
        with self.res.unlocked(), concurrent.futures.ThreadPoolExecutor(len(hooks)) as pool:
            futures = [pool.submit(self._call, wh, a, w) for wh, w in zip(hooks, own)]
            concurrent.futures.wait(futures)
        for w in own:
            warnings.extend(x for x in w if x not in warnings)
        for f in futures:
            if f.exception() is not None:
                raise f.exception()


__all__ = ["Webhooks", "review_request", "denied"]
