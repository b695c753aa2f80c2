"""Which commands of the simulated shell wait for the client's stdin (kubelet/streaming.py)."""

from __future__ import annotations

import pytest

from mockkube.kubelet.streaming import reads_stdin


@pytest.mark.parametrize(
    "argv, reads",
    [
        (["echo", "hi"], False),
        (["cat"], True),
        (["cat", "/etc/hosts"], False),
        (["cat", "-"], True),
        (["/bin/sh"], True),
        (["sh", "-c", "echo hi; date"], False),
        (["sh", "-c", "cat > /tmp/x"], True),
        (["sh", "-c", "while read l; do echo $l; done"], True),
        (["wc", "-l"], True),
        (["date"], False),
    ],
)
def test_reads_stdin(argv, reads):
    assert reads_stdin(argv) is reads
