"""``mockkube serve --event-ttl`` reaches the server (kube-apiserver's flag, default 1h)."""

from __future__ import annotations

import pytest

from mockkube.cli.main import build_parser, server_of


@pytest.mark.parametrize(("flag", "want"), [([], 3600.0), (["--event-ttl", "5m"], 300.0), (["--event-ttl", "0"], 0.0)])
def test_serve_passes_the_event_ttl(flag, want):
    server = server_of(build_parser().parse_args(["serve", *flag]))
    assert server.event_ttl == want
