"""authorization.k8s.io/v1 access reviews and authentication.k8s.io/v1 SelfSubjectReview
and TokenReview: create-only kinds answered at once and never stored, so ``kubectl auth
can-i`` (also ``--list`` and ``--as``) and ``kubectl auth whoami`` work. Access reviews ask
the server's authorizer (``--authorization-mode``; AlwaysAllow allows everything); whoami
reports the request's identity (mockkube/apiserver/http/identity.py).
"""

from __future__ import annotations

from mockkube.apiserver.authz.authorizer import Authorizer
from mockkube.apiserver.authz.context import AuthContext
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

AUTHZ, AUTHN = "authorization.k8s.io", "authentication.k8s.io"


class Review(Strategy):
    """A kind whose create is answered by ``review`` instead of being stored."""

    virtual = True

    def __init__(self, kind: str, group: str) -> None:
        self.kind, self.group = kind, group

    def review(self, obj: dict, user: dict, namespace: str, ctx: AuthContext | None = None) -> dict:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        errs = self._validate(spec, obj, namespace)
        if errs:
            raise errors.invalid(self.kind, self.group, "", errs)
        out = {
            "kind": self.kind,
            "apiVersion": f"{self.group}/v1",
            "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k in ("name", "namespace")},
        }
        out["metadata"]["creationTimestamp"] = None
        if self.kind == "SelfSubjectReview":
            out["status"] = {"userInfo": user}
            return out
        authorizer = (ctx.authorizer if ctx else None) or Authorizer(["AlwaysAllow"], lambda: None)
        if self.kind == "TokenReview":
            out["spec"] = spec
            out["status"] = _token_status(spec, ctx)
            return out
        if self.kind == "SelfSubjectRulesReview":
            out["spec"] = spec
            res, nonres, errs = authorizer.rules_for(user, spec.get("namespace", ""))
            out["status"] = {"resourceRules": res, "nonResourceRules": nonres, "incomplete": bool(errs)}
            if errs:
                out["status"]["evaluationError"] = ", ".join(errs)
            return out
        if self.kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
            subject = {
                k: v
                for k, v in (
                    ("username", spec.get("user")),
                    ("uid", spec.get("uid")),
                    ("groups", spec.get("groups")),
                    ("extra", spec.get("extra")),
                )
                if v
            }
        else:  # SelfSubjectAccessReview: the caller, as the spec echoes it upstream
            subject = user
        ok, why = authorizer.authorize(_attributes(spec, subject))
        out["spec"] = spec
        out["status"] = {"allowed": ok}
        if why:
            out["status"]["reason"] = why
        return out

    def _validate(self, spec: dict, obj: dict, namespace: str) -> list[fe.FieldError]:
        if self.kind in ("SelfSubjectReview", "SelfSubjectRulesReview"):
            return []
        if self.kind == "TokenReview":
            return [] if spec.get("token") else [fe.required("spec.token", "")]
        errs: list[fe.FieldError] = []
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if ra is not None and nra is not None:
            errs.append(
                fe.invalid(
                    "spec.resourceAttributes", ra, "cannot be specified in combination with spec.nonResourceAttributes"
                )
            )
        elif ra is None and nra is None:
            errs.append(
                fe.invalid(
                    "spec.resourceAttributes",
                    None,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )
            )
        if (
            self.kind in ("SubjectAccessReview", "LocalSubjectAccessReview")
            and not spec.get("user")
            and not spec.get("groups")
        ):
            errs.append(
                fe.invalid("spec.user", spec.get("user", ""), "at least one of user or group must be specified")
            )
        if self.kind == "LocalSubjectAccessReview" and (ra or {}).get("namespace", namespace) != namespace:
            errs.append(
                fe.invalid(
                    "spec.resourceAttributes.namespace", (ra or {}).get("namespace"), "must match metadata.namespace"
                )
            )
        return errs


def _attributes(spec: dict, user: dict) -> Attributes:
    ra = spec.get("resourceAttributes")
    if ra is not None:
        return Attributes(
            user=user,
            verb=ra.get("verb", ""),
            namespace=ra.get("namespace", ""),
            api_group=ra.get("group", ""),
            api_version=ra.get("version", ""),
            resource=ra.get("resource", ""),
            subresource=ra.get("subresource", ""),
            name=ra.get("name", ""),
        )
    nra = spec.get("nonResourceAttributes") or {}
    return Attributes(user=user, verb=nra.get("verb", ""), resource_request=False, path=nra.get("path", ""))


def _token_status(spec: dict, ctx: AuthContext | None) -> dict:
    """TokenReview status: who the token names, for the audiences asked (upstream's
    tokenreview REST: errors are not returned, only ``authenticated: false``)."""
    if ctx is None or ctx.authenticate_token is None:
        return {"authenticated": False, "user": {}, "error": "authentication is not enabled"}
    user, auds = ctx.authenticate_token(spec["token"], list(spec.get("audiences") or []))
    if user is None:
        return {"authenticated": False, "user": {}, "error": "[invalid bearer token, token lookup failed]"}
    return {"authenticated": True, "user": user, "audiences": auds}


def _add(group: str, kind: str, plural: str, namespaced: bool = False) -> ResourceType:
    return REGISTRY.add(
        ResourceType(group, "v1", kind, plural, namespaced=namespaced, verbs=("create",), strategy=Review(kind, group))
    )


selfsubjectaccessreviews = _add(AUTHZ, "SelfSubjectAccessReview", "selfsubjectaccessreviews")
subjectaccessreviews = _add(AUTHZ, "SubjectAccessReview", "subjectaccessreviews")
localsubjectaccessreviews = _add(AUTHZ, "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced=True)
selfsubjectrulesreviews = _add(AUTHZ, "SelfSubjectRulesReview", "selfsubjectrulesreviews")
selfsubjectreviews = _add(AUTHN, "SelfSubjectReview", "selfsubjectreviews")
tokenreviews = _add(AUTHN, "TokenReview", "tokenreviews")
