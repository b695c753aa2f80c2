"""Table columns and cells (printers.go) for admissionregistration.k8s.io kinds.
Registered into ``mockkube.apiserver.http.tables``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

Obj = dict[str, Any]
G = "admissionregistration.k8s.io"


def _columns(t) -> dict[tuple[str, str], list[dict]]:
    col, name, age = t._col, t._name_col, t._age_col
    return {
        (G, "validatingadmissionpolicies"): [
            name(),
            col(
                "Validations",
                "Validations indicates the number of validation rules defined in this configuration",
                type="integer",
            ),
            col("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy"),
            age(),
        ],
        (G, "validatingadmissionpolicybindings"): [
            name(),
            col("PolicyName", "PolicyName indicates the policy definition which the policy binding binded to"),
            col("ParamRef", "ParamRef indicates the param resource which sets the configration param"),
            age(),
        ],
        (G, "mutatingadmissionpolicies"): [
            name(),
            col(
                "Mutations",
                "Mutations indicates the number of mutations rules defined in this configuration",
                type="integer",
            ),
            col("ParamKind", "ParamKind specifies the kind of resources used to parameterize this policy"),
            age(),
        ],
        (G, "mutatingadmissionpolicybindings"): [
            name(),
            col("PolicyName", "PolicyName indicates the policy definition which the policy binding binded to"),
            col("ParamRef", "ParamRef indicates the param resource which sets the configration param"),
            age(),
        ],
        (G, "validatingwebhookconfigurations"): [
            name(),
            col("Webhooks", "Webhooks indicates the number of webhooks in this configuration", type="integer"),
            age(),
        ],
        (G, "mutatingwebhookconfigurations"): [
            name(),
            col("Webhooks", "Webhooks indicates the number of webhooks in this configuration", type="integer"),
            age(),
        ],
    }


def _param_kind(o: Obj) -> str:
    pk = (o.get("spec") or {}).get("paramKind")
    return f"{pk.get('apiVersion', '')}/{pk.get('kind', '')}" if pk else "<unset>"


def _param_ref(t, o: Obj) -> str:
    pr = (o.get("spec") or {}).get("paramRef")
    if not pr:
        return "<unset>"
    if pr.get("name"):
        return f"{pr['namespace']}/{pr['name']}" if pr.get("namespace") else f"*/{pr['name']}"
    return t._format_label_selector(pr.get("selector")) or "<none>"


def _cells(t) -> dict[tuple[str, str], Callable[[Obj, datetime], list]]:
    meta, age = t._meta, t._age
    return {
        (G, "validatingadmissionpolicies"): lambda o, now: [
            meta(o).get("name", ""),
            len((o.get("spec") or {}).get("validations") or ()),
            _param_kind(o),
            age(o, now),
        ],
        (G, "validatingadmissionpolicybindings"): lambda o, now: [
            meta(o).get("name", ""),
            (o.get("spec") or {}).get("policyName", ""),
            _param_ref(t, o),
            age(o, now),
        ],
        (G, "mutatingadmissionpolicies"): lambda o, now: [
            meta(o).get("name", ""),
            len((o.get("spec") or {}).get("mutations") or ()),
            _param_kind(o),
            age(o, now),
        ],
        (G, "mutatingadmissionpolicybindings"): lambda o, now: [
            meta(o).get("name", ""),
            (o.get("spec") or {}).get("policyName", ""),
            _param_ref(t, o),
            age(o, now),
        ],
        (G, "validatingwebhookconfigurations"): lambda o, now: [
            meta(o).get("name", ""),
            len(o.get("webhooks") or ()),
            age(o, now),
        ],
        (G, "mutatingwebhookconfigurations"): lambda o, now: [
            meta(o).get("name", ""),
            len(o.get("webhooks") or ()),
            age(o, now),
        ],
    }


def register(t) -> None:
    """Add these kinds' columns and cells to the tables module ``t``."""
    t.COLUMNS.update(_columns(t))
    t._CELLS.update(_cells(t))
