"""node.k8s.io/v1 RuntimeClasses (stored with validation)."""

from __future__ import annotations

from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy


class RuntimeClassStrategy(Strategy):
    def validate(self, obj: dict) -> list[fe.FieldError]:
        handler = obj.get("handler")
        if not handler:
            return [fe.required("handler", "")]
        return [fe.invalid("handler", handler, m) for m in names.dns1123_label(handler)]

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = self.validate(new)
        if new.get("handler") != old.get("handler"):
            errs.append(fe.invalid("handler", new.get("handler"), "field is immutable"))
        return errs


runtimeclasses = REGISTRY.add(
    ResourceType(
        "node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False, strategy=RuntimeClassStrategy()
    )
)
