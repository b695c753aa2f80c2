"""The TokenRequest subresource (``serviceaccounts/token``, ``kubectl create token``) and the
authenticator for the tokens it and the legacy token Secrets hand out, over the store.

As upstream ``pkg/registry/core/serviceaccount/storage/token.go`` (request) and
``pkg/serviceaccount`` (validation): a token stays valid only while its ServiceAccount, and
the Pod, Secret or Node it is bound to, exist with the UIDs it names.
"""

from __future__ import annotations

import base64

from mockkube.apiserver.rest import Resources
from mockkube.machinery import errors, meta
from mockkube.machinery import fielderrors as fe
from mockkube.rules.satoken import ISSUER, MIN_EXPIRATION, Bound, Signer, bound_claims, user_info

DEFAULT_EXPIRATION = 3600
LEGACY_TYPE = "kubernetes.io/service-account-token"


class ServiceAccountTokens:
    """One server's issuer and validator of ServiceAccount tokens."""

    def __init__(self, resources: Resources, signer: Signer, audiences: list[str] | None = None) -> None:
        self.res = resources
        self.signer = signer
        self.audiences = audiences or [signer.issuer]

    def _obj(self, plural: str, ns: str, name: str) -> dict | None:
        e = self.res.store.get(self.res.registry.get("", "v1", plural), ns, name)
        return e.obj if e is not None else None

    # -- TokenRequest ----------------------------------------------------------
    def request(self, namespace: str, sa_name: str, body: dict) -> dict:
        sa = self._obj("serviceaccounts", namespace, sa_name)
        if sa is None:
            raise errors.not_found("serviceaccounts", "", sa_name)
        spec = dict(body.get("spec") or {}) if isinstance(body, dict) else {}
        exp = spec.get("expirationSeconds")
        exp = DEFAULT_EXPIRATION if exp is None else exp
        if not isinstance(exp, int) or exp < MIN_EXPIRATION:
            raise errors.invalid(
                "TokenRequest",
                "authentication.k8s.io",
                sa_name,
                [fe.invalid("spec.expirationSeconds", exp, "may not specify a duration less than 10 minutes")],
            )
        if exp > 1 << 32:
            raise errors.invalid(
                "TokenRequest",
                "authentication.k8s.io",
                sa_name,
                [fe.invalid("spec.expirationSeconds", exp, "may not specify a duration larger than 2^32 seconds")],
            )
        spec["expirationSeconds"] = exp
        spec["audiences"] = list(spec.get("audiences") or self.audiences)
        bound = self._bound(namespace, sa_name, spec.get("boundObjectRef"))
        now = self.res.clock()
        claims = bound_claims(
            self.signer.issuer, namespace, (sa_name, sa["metadata"]["uid"]), spec["audiences"], exp, bound, now
        )
        meta_in = (body.get("metadata") or {}) if isinstance(body, dict) else {}
        return {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {
                "name": sa_name,
                "namespace": namespace,
                "creationTimestamp": meta.rfc3339(now),
                **({} if not meta_in.get("uid") else {"uid": meta_in["uid"]}),
            },
            "spec": spec,
            "status": {"token": self.signer.sign(claims), "expirationTimestamp": meta.rfc3339(claims["exp"])},
        }

    def _bound(self, namespace: str, sa_name: str, ref: dict | None) -> Bound:
        if not ref:
            return Bound()
        kind, name, uid = ref.get("kind", ""), ref.get("name", ""), ref.get("uid", "")
        api = ref.get("apiVersion", "v1")
        plural = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}.get(kind) if api == "v1" else None
        if plural is None:
            group, _, version = api.rpartition("/")
            raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
        obj = self._obj(plural, "" if kind == "Node" else namespace, name)
        if obj is None:
            raise errors.not_found(plural, "", name)
        if uid and uid != obj["metadata"]["uid"]:
            raise errors.conflict(
                kind,
                "",
                name,
                f"the UID in the bound object reference ({uid}) does not match the UID in record. "
                "The object might have been deleted and then recreated",
            )
        me = (name, obj["metadata"]["uid"])
        if kind == "Pod":
            if (obj.get("spec") or {}).get("serviceAccountName", "default") != sa_name:
                raise errors.bad_request(
                    f'cannot bind token for serviceaccount "{sa_name}" to pod running with '
                    "different serviceaccount name."
                )
            node_name = (obj.get("spec") or {}).get("nodeName")
            node = self._obj("nodes", "", node_name) if node_name else None
            return Bound(pod=me, node=(node_name, node["metadata"]["uid"]) if node else None)
        if kind == "Secret":
            return Bound(secret=me)
        return Bound(node=me)

    # -- authentication ------------------------------------------------------------
    def authenticate(self, token: str, audiences: list[str] | None = None) -> tuple[dict | None, list[str]]:
        """(userInfo, audiences it is valid for) of a bearer token, or (None, [])."""
        claims = self.signer.verify(token, self.res.clock())
        if claims is None:
            return None, []
        if "kubernetes.io" in claims:
            wanted = audiences or self.audiences
            aud = claims.get("aud") or []
            aud = [aud] if isinstance(aud, str) else aud
            matched = [a for a in wanted if a in aud]
            if not matched or not self._bound_valid(claims["kubernetes.io"]):
                return None, []
            return user_info(claims), matched
        if not self._legacy_valid(token, claims):
            return None, []
        return user_info(claims), list(audiences or self.audiences)

    def _exists(self, plural: str, ns: str, ref: dict) -> bool:
        obj = self._obj(plural, ns, ref.get("name", ""))
        return (
            obj is not None
            and obj["metadata"].get("uid") == ref.get("uid")
            and not obj["metadata"].get("deletionTimestamp")
        )

    def _bound_valid(self, k: dict) -> bool:
        ns = k.get("namespace", "")
        if not self._exists("serviceaccounts", ns, k.get("serviceaccount") or {}):
            return False
        if k.get("pod") and not self._exists("pods", ns, k["pod"]):
            return False
        if k.get("secret") and not self._exists("secrets", ns, k["secret"]):
            return False
        return not (k.get("node") and not k.get("pod") and not self._exists("nodes", "", k["node"]))

    def _legacy_valid(self, token: str, claims: dict) -> bool:
        ns = claims.get("kubernetes.io/serviceaccount/namespace", "")
        sa = self._obj("serviceaccounts", ns, claims.get("kubernetes.io/serviceaccount/service-account.name", ""))
        if sa is None or sa["metadata"].get("uid") != claims.get("kubernetes.io/serviceaccount/service-account.uid"):
            return False
        secret = self._obj("secrets", ns, claims.get("kubernetes.io/serviceaccount/secret.name", ""))
        if secret is None or secret["metadata"].get("deletionTimestamp"):
            return False
        stored = (secret.get("data") or {}).get("token", "")
        try:
            return base64.b64decode(stored).decode() == token
        except ValueError:
            return False


__all__ = ["ServiceAccountTokens", "ISSUER", "LEGACY_TYPE"]
