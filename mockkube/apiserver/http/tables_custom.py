"""Tables of custom resources: ``additionalPrinterColumns`` as upstream's tableconvertor
renders them, and the DefaultTableConvertor (Name, Created At) that CRDs themselves use.

A ``ResourceType.table`` is data: the list of printer columns of a custom resource's
version (each with ``name``, ``type``, ``jsonPath`` and optionally ``format``,
``description``, ``priority``), or ``"default"``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from mockkube.machinery.jsonpath import JSONPathError, find, parse

_NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATED_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is "
    "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
    "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
    "Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata"
)


def printer(table: Any) -> Any:
    """The printer of a ``ResourceType.table`` declaration."""
    if table == "default":
        return DefaultTable()
    return PrinterColumns(table)


class PrinterColumns:
    """A Table printer from ``additionalPrinterColumns`` (upstream's tableconvertor)."""

    def __init__(self, columns: list[dict]) -> None:
        if not columns:
            columns = [
                {"name": "Age", "type": "date", "description": _CREATED_DESC, "jsonPath": ".metadata.creationTimestamp"}
            ]
        self._defs = [{"name": "Name", "type": "string", "format": "name", "description": _NAME_DESC, "priority": 0}]
        self._paths: list[tuple[str, Any]] = []
        for c in columns:
            try:
                steps = parse(c.get("jsonPath", ""))
            except JSONPathError:
                steps = []
            self._paths.append((c.get("type", "string"), steps))
            desc = (
                c.get("description")
                or f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}"
            )
            self._defs.append(
                {
                    "name": c.get("name", ""),
                    "type": c.get("type", "string"),
                    "format": c.get("format", ""),
                    "description": desc,
                    "priority": int(c.get("priority") or 0),
                }
            )

    def columns(self) -> list[dict]:
        return [dict(c) for c in self._defs]

    def cells(self, obj: dict, now: datetime) -> list:
        from mockkube.apiserver.http.tables import since

        out: list = [(obj.get("metadata") or {}).get("name", "")]
        for typ, steps in self._paths:
            found = find(obj, steps) if steps else []
            if not found or found[0] is None:
                out.append(None)
                continue
            v = found[0]
            if typ == "date" and isinstance(v, str):
                out.append(since(v, now))
            elif isinstance(v, (dict, list)):
                out.append(json.dumps(v, separators=(",", ":")))
            else:
                out.append(v)
        return out


class DefaultTable:
    """apiserver's DefaultTableConvertor (Name, Created At), which CRDs themselves use."""

    def columns(self) -> list[dict]:
        return [
            {"name": "Name", "type": "string", "format": "name", "description": _NAME_DESC, "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": _CREATED_DESC, "priority": 0},
        ]

    def cells(self, obj: dict, now: datetime) -> list:
        m = obj.get("metadata") or {}
        return [m.get("name", ""), m.get("creationTimestamp")]
