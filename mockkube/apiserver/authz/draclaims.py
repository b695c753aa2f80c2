"""DRAResourceClaimGranularStatusAuthorization (beta, on in v1.36): who may change which
part of a ResourceClaim's status, checked on the synthetic subresources as upstream's
``pkg/registry/resource`` does it:

- ``status.allocation`` / ``status.reservedFor``: the request's verb on ``resourceclaims/binding``
  (cluster-wide);
- ``status.devices``: per changed driver, ``associated-node:<verb>`` (a ServiceAccount whose
  token names the claim's node) or ``arbitrary-node:<verb>`` on ``resourceclaims/driver``
  with the driver as the resource name.
"""

from __future__ import annotations

from typing import Callable

from mockkube.apiserver.admission.matching import Attributes as Admission
from mockkube.apiserver.authz.authorizer import Authorizer, forbidden
from mockkube.apiserver.authz.rbac import SA_PREFIX
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.requestcontext import current_request_verb

GROUP = "resource.k8s.io"
NODE_NAME = "authentication.kubernetes.io/node-name"


def _device_key(d: dict) -> tuple:
    return d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID") or ""


def modified_drivers(new: dict, old: dict) -> list[str]:
    """Drivers whose status.devices entries were added, removed or changed."""
    olds = {_device_key(d): d for d in old.get("devices") or []}
    out: set[str] = set()
    for d in new.get("devices") or []:
        prev = olds.pop(_device_key(d), None)
        if prev != d:
            out.add(d.get("driver", ""))
    out.update(d.get("driver", "") for d in olds.values())
    return sorted(out)


def allocated_node(allocation: dict | None) -> str:
    terms = ((allocation or {}).get("nodeSelector") or {}).get("nodeSelectorTerms") or []
    if len(terms) != 1 or terms[0].get("matchExpressions") or len(terms[0].get("matchFields") or []) != 1:
        return ""
    f = terms[0]["matchFields"][0]
    if f.get("key") != "metadata.name" or f.get("operator") != "In" or len(f.get("values") or []) != 1:
        return ""
    return f["values"][0]


def _sa_on_node(user: dict, node: str) -> bool:
    if not node or not user.get("username", "").startswith(SA_PREFIX) or user["username"].count(":") != 3:
        return False
    names = (user.get("extra") or {}).get(NODE_NAME) or []
    return len(names) == 1 and names[0] == node


def _why(az: Authorizer, attrs: Attributes) -> str | None:
    ok, reason = az.authorize(attrs)
    return None if ok else forbidden(attrs, reason).message


class ClaimStatusAuthorization:
    """A validating admission step on ``resourceclaims/status`` updates made over HTTP."""

    def __init__(self, authorizer: Callable[[], Authorizer | None]) -> None:
        self.authorizer = authorizer

    def validate(self, a: Admission, warnings: list[str]) -> None:
        az = self.authorizer()
        verb = current_request_verb()
        if (
            az is None
            or not az.enforcing
            or not verb
            or a.group != GROUP
            or a.resource != "resourceclaims"
            or a.subresource != "status"
            or a.operation != "UPDATE"
            or a.obj is None
            or a.old is None
        ):
            return
        new, old = a.obj.get("status") or {}, a.old.get("status") or {}
        errs: list[fe.FieldError] = []
        if new.get("allocation") != old.get("allocation") or new.get("reservedFor") != old.get("reservedFor"):
            attrs = Attributes(
                user=a.user,
                verb=verb,
                api_group=GROUP,
                api_version=a.version,
                resource="resourceclaims",
                subresource="binding",
            )
            why = _why(az, attrs)
            if why is not None:
                errs.append(
                    fe.forbidden(
                        "status",
                        "changing status.allocation or status.reservedFor requires "
                        f'resource="resourceclaims/binding", verb="{verb}" permission: '
                        f"{why}",
                    )
                )
        drivers = modified_drivers(new, old)
        if drivers:
            node = allocated_node(new.get("allocation"))
            verbs = ([f"associated-node:{verb}"] if _sa_on_node(a.user, node) else []) + [f"arbitrary-node:{verb}"]
            for driver in drivers:
                first = None
                for v in verbs:
                    why = _why(
                        az,
                        Attributes(
                            user=a.user,
                            verb=v,
                            api_group=GROUP,
                            api_version=a.version,
                            namespace=a.namespace,
                            resource="resourceclaims",
                            subresource="driver",
                            name=driver,
                        ),
                    )
                    if why is None:
                        break
                    first = first or why
                else:
                    errs.append(
                        fe.forbidden(
                            "status.devices",
                            "changing status.devices requires "
                            f'resource="resourceclaims/driver", '
                            f'verb="[{" ".join(verbs)}]" permission: {first}',
                        )
                    )
        if errs:
            raise errors.invalid(a.kind, a.group, a.name, errs)
