"""events.k8s.io/v1 Events (stored apart from core/v1 events; see docs/compatibility.md)."""

from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy


class EventStrategy(Strategy):
    allow_create_on_update = True


def _get(o: dict, *path: str) -> str:
    cur = o
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


events = REGISTRY.add(
    ResourceType(
        "events.k8s.io",
        "v1",
        "Event",
        "events",
        namespaced=True,
        short_names=("ev",),
        storage_key="events.k8s.io/events",
        strategy=EventStrategy(),
        selectable_fields={
            "regarding.kind": lambda o: _get(o, "regarding", "kind"),
            "regarding.namespace": lambda o: _get(o, "regarding", "namespace"),
            "regarding.name": lambda o: _get(o, "regarding", "name"),
            "regarding.uid": lambda o: _get(o, "regarding", "uid"),
            "reason": lambda o: _get(o, "reason"),
            "reportingController": lambda o: _get(o, "reportingController"),
            "type": lambda o: _get(o, "type"),
        },
    )
)
