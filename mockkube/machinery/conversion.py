"""Custom resource conversion: ``None`` (only apiVersion changes) and ``Webhook``
(a ``ConversionReview`` to the CRD's conversion webhook, as
``apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go`` sends it).

The webhook is called over HTTPS, trusting the CRD's ``caBundle`` (or the system roots),
with upstream's 30 s timeout; a ``url`` client config is called as is, a ``service``
reference as ``https://<name>.<namespace>.svc:<port><path>`` (simulated pods have no
network: point the name at your webhook, e.g. in /etc/hosts, or use ``url``). The
converted objects keep the original metadata except labels and annotations, and must
keep their uid, as upstream enforces.
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import urllib.error
import urllib.request
import uuid
from typing import Any

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

    def __init__(self, crd: dict) -> None:
        spec = crd.get("spec") or {}
        self.gk = f"{spec.get('group', '')}/{{}}, Kind={(spec.get('names') or {}).get('kind', '')}"
        wh = (spec.get("conversion") or {}).get("webhook") or {}
        self.review_versions = wh.get("conversionReviewVersions") or ["v1"]
        cc = wh.get("clientConfig") or {}
        self.url = cc.get("url") or ""
        svc = cc.get("service")
        if not self.url and isinstance(svc, dict):
            self.url = (f"https://{svc.get('name')}.{svc.get('namespace')}.svc:{svc.get('port', 443)}"
                        f"{svc.get('path') or ''}")
        self.ca = cc.get("caBundle") or ""
        self._ctx: ssl.SSLContext | None = None

    def _context(self) -> ssl.SSLContext:
        if self._ctx is None:
            ctx = ssl.create_default_context()
            if self.ca:
                pem = base64.b64decode(self.ca).decode()
                with tempfile.NamedTemporaryFile("w", suffix=".pem") as f:
                    f.write(pem)
                    f.flush()
                    ctx = ssl.create_default_context(cafile=f.name)
            self._ctx = ctx
        return self._ctx

    def convert(self, objs: list[dict], api_version: str) -> list[dict]:
        """Every object of ``objs`` as ``api_version``; objects already there are not sent."""
        todo = [i for i, o in enumerate(objs) if o.get("apiVersion") != api_version]
        if not todo:
            return objs
        from_version = objs[todo[0]].get("apiVersion", "").rpartition("/")[2]
        what = self.gk.format(from_version)
        review_version = "v1" if "v1" in self.review_versions else self.review_versions[0]
        req_uid = str(uuid.uuid4())
        review = {"apiVersion": f"apiextensions.k8s.io/{review_version}", "kind": "ConversionReview",
                  "request": {"uid": req_uid, "desiredAPIVersion": api_version,
                              "objects": [objs[i] for i in todo]}}
        data = json.dumps(review).encode()
        request = urllib.request.Request(self.url, data=data, method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT,
                                        context=self._context() if self.url.startswith("https") else None) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise _failed(what, f"conversion webhook for {what} returned HTTP status {e.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise _failed(what, f'conversion webhook for {what} failed: Post "{self.url}": {reason}') from None
        resp = (body or {}).get("response") or {}
        if resp.get("uid") != req_uid:
            raise _failed(what, f"conversion webhook for {what} returned invalid response: expected response uid "
                                f"{req_uid!r}, got {resp.get('uid')!r}")
        result = resp.get("result") or {}
        if result.get("status") != "Success":
            raise _failed(what, f"conversion webhook for {what} failed: {result.get('message', '')}")
        converted = resp.get("convertedObjects") or []
        if len(converted) != len(todo):
            raise _failed(what, f"conversion webhook for {what} returned {len(converted)} objects, "
                                f"expected {len(todo)}")
        out = list(objs)
        for i, new in zip(todo, converted):
            old = objs[i]
            if not isinstance(new, dict) or new.get("apiVersion") != api_version:
                raise _failed(what, f"conversion webhook for {what} returned invalid converted object: "
                                    f"expected apiVersion {api_version}")
            nm = new.get("metadata") or {}
            if nm.get("uid") != (old.get("metadata") or {}).get("uid"):
                raise _failed(what, f"conversion webhook for {what} returned invalid metadata: expected uid "
                                    f"{(old.get('metadata') or {}).get('uid')}, got {nm.get('uid')}")
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
