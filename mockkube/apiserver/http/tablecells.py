"""Cell helpers the table printers share (kubectl's printers: ages, labels, selectors,
container lists), and the column declarations built from the OpenAPI descriptions."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from mockkube.machinery.errors import APIError
from mockkube.machinery.selectors import label_selector_from_object

Obj = dict[str, Any]


def _doc(definition: str, field: str) -> str:
    """The upstream field documentation (what SwaggerDoc() gives printers.go)."""
    try:
        from mockkube.machinery.schema import definitions

        return definitions()[definition]["properties"][field].get("description", "")
    except Exception:  # schemas not built: descriptions are cosmetic
        return ""


def _col(name: str, description: str = "", type: str = "string", priority: int = 0, format: str = "") -> dict:
    return {"name": name, "type": type, "format": format, "description": description, "priority": priority}


_CORE = "io.k8s.api.core.v1."


_APPS = "io.k8s.api.apps.v1."


_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _name_col(priority: int = 0) -> dict:
    return _col("Name", _doc(_META, "name"), priority=priority, format="name")


def _age_col() -> dict:
    return _col("Age", _doc(_META, "creationTimestamp"))


_NS = 1_000_000_000


def parse_time(value: str | None) -> datetime | None:
    """An RFC 3339 metav1.Time / MicroTime, or None when unset or unparsable."""
    if not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def human_duration(seconds_ns: int) -> str:
    """duration.HumanDuration for a duration in nanoseconds."""
    seconds = int(seconds_ns / _NS)  # Go's int(d.Seconds()) truncates toward zero
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds_ns // (60 * _NS)
    if minutes < 10:
        s = (seconds_ns // _NS) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds_ns // (3600 * _NS)
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _aware(now: datetime) -> datetime:
    return now if now.tzinfo else now.replace(tzinfo=timezone.utc)


def since(timestamp: str | None, now: datetime) -> str:
    """translateTimestampSince: "<unknown>" when unset."""
    t = parse_time(timestamp)
    if t is None:
        return "<unknown>"
    delta = _aware(now) - t
    ns = (delta.days * 86400 + delta.seconds) * _NS + delta.microseconds * 1000
    return human_duration(ns)


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _age(obj: Obj, now: datetime) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


def _format_labels(labels: dict | None) -> str:
    """labels.FormatLabels: sorted k=v pairs, "<none>" when empty."""
    s = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return s or "<none>"


def _selector_string(sel: dict | None) -> str | None:
    """LabelSelectorAsSelector(sel).String(); None when the selector is invalid."""
    try:
        return str(label_selector_from_object(sel))
    except APIError:
        return None


def _format_label_selector(sel: dict | None) -> str:
    """metav1.FormatLabelSelector."""
    s = _selector_string(sel)
    if s is None:
        return "<error>"
    return s or "<none>"


def _layout_containers(containers: list | None) -> tuple[str, str]:
    cs = containers or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _template_containers(obj: Obj) -> list:
    return (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
