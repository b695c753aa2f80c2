"""The ``mockkube`` and ``kubectl-mockkube`` executables (and ``python -m mockkube``): a
command's process holds the garbage collector from its first import (``gctuning.hold``);
``main`` lets it run again for every command but those that settle it after their start."""

from mockkube.server import gctuning

gctuning.hold()

from mockkube.cli.main import main, plugin  # noqa: E402  (imported with collections held)

__all__ = ["main", "plugin"]
