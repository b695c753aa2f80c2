"""Custom resource conversion: ``None`` (only apiVersion changes) and ``Webhook``
(a ``ConversionReview`` to the CRD's conversion webhook, as
``apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go`` sends it).

The webhook is called through ``mockkube.apiserver.webhookclient`` (HTTPS trusting the
CRD's ``caBundle``, ``url`` or a ``service`` reference resolved through the server's
service map) with upstream's 30 s timeout. The
converted objects keep the original metadata except labels and annotations, and must
keep their uid, as upstream enforces.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkube.apiserver.webhookclient import CallError, ServiceMap, WebhookClient
from mockkube.machinery import errors
from mockkube.machinery.meta import clone

TIMEOUT = 30.0  # seconds, upstream's fixed conversion webhook timeout


def convert_none(obj: dict, api_version: str) -> dict:
    if obj.get("apiVersion") == api_version:
        return obj
    out = clone(obj)
    out["apiVersion"] = api_version
    return out


class WebhookConverter:
    """Converts through one CRD's conversion webhook."""

    def __init__(self, crd: dict, services: ServiceMap | None = None) -> None:
        spec = crd.get("spec") or {}
        self.gk = f"{spec.get('group', '')}/{{}}, Kind={(spec.get('names') or {}).get('kind', '')}"
        wh = (spec.get("conversion") or {}).get("webhook") or {}
        self.review_versions = wh.get("conversionReviewVersions") or ["v1"]
        self.client = WebhookClient(wh.get("clientConfig") or {}, services)

    def convert(self, objs: list[dict], api_version: str) -> list[dict]:
        """Every object of ``objs`` as ``api_version``; objects already there are not sent."""
        todo = [i for i, o in enumerate(objs) if o.get("apiVersion") != api_version]
        if not todo:
            return objs
        from_version = objs[todo[0]].get("apiVersion", "").rpartition("/")[2]
        what = self.gk.format(from_version)
        review_version = "v1" if "v1" in self.review_versions else self.review_versions[0]
        req_uid = str(uuid.uuid4())
        review = {
            "apiVersion": f"apiextensions.k8s.io/{review_version}",
            "kind": "ConversionReview",
            "request": {"uid": req_uid, "desiredAPIVersion": api_version, "objects": [objs[i] for i in todo]},
        }
        try:
            body = self.client.post(review, TIMEOUT, f"timeout={int(TIMEOUT)}s")
        except CallError as e:
            raise _failed(
                what, f"conversion webhook for {what} failed: {str(e).removeprefix('failed to call webhook: ')}"
            ) from None
        resp = (body or {}).get("response") or {}
        if resp.get("uid") != req_uid:
            raise _failed(
                what,
                f"conversion webhook for {what} returned invalid response: expected response uid "
                f"{req_uid!r}, got {resp.get('uid')!r}",
            )
        result = resp.get("result") or {}
        if result.get("status") != "Success":
            raise _failed(what, f"conversion webhook for {what} failed: {result.get('message', '')}")
        converted = resp.get("convertedObjects") or []
        if len(converted) != len(todo):
            raise _failed(
                what, f"conversion webhook for {what} returned {len(converted)} objects, expected {len(todo)}"
            )
        out = list(objs)
        for i, new in zip(todo, converted):
            old = objs[i]
            if not isinstance(new, dict) or new.get("apiVersion") != api_version:
                raise _failed(
                    what,
                    f"conversion webhook for {what} returned invalid converted object: "
                    f"expected apiVersion {api_version}",
                )
            nm = new.get("metadata") or {}
            if nm.get("uid") != (old.get("metadata") or {}).get("uid"):
                raise _failed(
                    what,
                    f"conversion webhook for {what} returned invalid metadata: expected uid "
                    f"{(old.get('metadata') or {}).get('uid')}, got {nm.get('uid')}",
                )
            meta = clone(old.get("metadata") or {})
            for key in ("labels", "annotations"):  # the only metadata a webhook may change
                if key in nm:
                    meta[key] = nm[key]
                else:
                    meta.pop(key, None)
            fixed = dict(new)
            fixed["metadata"] = meta
            fixed["kind"] = old.get("kind")
            out[i] = fixed
        return out


def _failed(what: str, message: str) -> errors.APIError:
    return errors.internal(message)


def converter_for(crd: dict) -> Any:
    """A WebhookConverter for a CRD with ``conversion.strategy: Webhook``, else None."""
    strategy = ((crd.get("spec") or {}).get("conversion") or {}).get("strategy", "None")
    return WebhookConverter(crd) if strategy == "Webhook" else None
