"""CEL for the API: one engine (parser, checker, cost model, Kubernetes libraries)
shared by DRA selectors and any other CEL user."""

from mockkube.cel.engine import CELError, CompiledExpression, compile_expression, compile_with

__all__ = ["CELError", "CompiledExpression", "compile_expression", "compile_with"]

from mockkube.cel import authz as _authz  # noqa: E402,F401  (registers the authorizer library)
from mockkube.cel import k8slib as _k8slib  # noqa: E402,F401  (registers regex, urls, ip/cidr, optionals)
from mockkube.cel import listslib as _listslib  # noqa: E402,F401  (registers cel-go's lists and sets extensions)
from mockkube.cel import stringslib as _stringslib  # noqa: E402,F401  (registers the strings extension)
