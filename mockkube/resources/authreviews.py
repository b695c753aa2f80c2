"""authorization.k8s.io/v1 access reviews and authentication.k8s.io/v1 SelfSubjectReview:
create-only kinds answered at once and never stored, so ``kubectl auth can-i`` (also
``--list`` and ``--as``) and ``kubectl auth whoami`` work. Requests are not authorized
(kube-apiserver's AlwaysAllow mode): every review is allowed; whoami reports the request's
identity (mockkube/api/identity.py: the default admin, or whom ``--as`` names).
"""

from __future__ import annotations

from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

AUTHZ, AUTHN = "authorization.k8s.io", "authentication.k8s.io"


class Review(Strategy):
    """A kind whose create is answered by ``review`` instead of being stored."""

    virtual = True

    def __init__(self, kind: str, group: str) -> None:
        self.kind, self.group = kind, group

    def review(self, obj: dict, user: dict, namespace: str) -> dict:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        errs = self._validate(spec, obj, namespace)
        if errs:
            raise errors.invalid(self.kind, self.group, "", errs)
        out = {"kind": self.kind, "apiVersion": f"{self.group}/v1",
               "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k in ("name", "namespace")}}
        out["metadata"]["creationTimestamp"] = None
        if self.kind == "SelfSubjectReview":
            out["status"] = {"userInfo": user}
            return out
        out["spec"] = spec
        if self.kind == "SelfSubjectRulesReview":
            out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                             "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
        else:
            out["status"] = {"allowed": True}
        return out

    def _validate(self, spec: dict, obj: dict, namespace: str) -> list[fe.FieldError]:
        if self.kind in ("SelfSubjectReview", "SelfSubjectRulesReview"):
            return []
        errs: list[fe.FieldError] = []
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if ra is not None and nra is not None:
            errs.append(fe.invalid("spec.resourceAttributes", ra,
                                   "cannot be specified in combination with spec.nonResourceAttributes"))
        elif ra is None and nra is None:
            errs.append(fe.invalid("spec.resourceAttributes", None,
                                   "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
        if self.kind in ("SubjectAccessReview", "LocalSubjectAccessReview") and not spec.get("user") \
                and not spec.get("groups"):
            errs.append(fe.invalid("spec.user", spec.get("user", ""), "at least one of user or group must be specified"))
        if self.kind == "LocalSubjectAccessReview" and (ra or {}).get("namespace", namespace) != namespace:
            errs.append(fe.invalid("spec.resourceAttributes.namespace", (ra or {}).get("namespace"),
                                   "must match metadata.namespace"))
        return errs


def _add(group: str, kind: str, plural: str, namespaced: bool = False) -> ResourceType:
    return REGISTRY.add(ResourceType(group, "v1", kind, plural, namespaced=namespaced, verbs=("create",),
                                     strategy=Review(kind, group)))


selfsubjectaccessreviews = _add(AUTHZ, "SelfSubjectAccessReview", "selfsubjectaccessreviews")
subjectaccessreviews = _add(AUTHZ, "SubjectAccessReview", "subjectaccessreviews")
localsubjectaccessreviews = _add(AUTHZ, "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced=True)
selfsubjectrulesreviews = _add(AUTHZ, "SelfSubjectRulesReview", "selfsubjectrulesreviews")
selfsubjectreviews = _add(AUTHN, "SelfSubjectReview", "selfsubjectreviews")
