"""The in-tree plugins mockkube runs, in upstream's default order."""
