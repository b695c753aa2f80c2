"""tests/procs: the /proc walk the benchmarks and the soak sample every 10 s must survive a
process ending under it (the soak's CI run once died of that)."""

from __future__ import annotations

import subprocess
import sys

from tests.procs import child_processes, descendants


def test_a_process_that_ended_has_no_children():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert child_processes(p.pid) == {} and descendants(p.pid) == {}
