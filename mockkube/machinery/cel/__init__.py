"""CEL for the API: one engine (parser, checker, cost model, Kubernetes libraries)
shared by DRA selectors and any other CEL user."""

from mockkube.machinery.cel.engine import CELError, CompiledExpression, compile_expression

__all__ = ["CELError", "CompiledExpression", "compile_expression"]
