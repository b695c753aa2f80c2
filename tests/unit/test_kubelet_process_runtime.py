"""The process runtime's pure parts: the kubelet's restart back-off, the CRI log file
(records, --tail, --timestamps, partial lines, followers on another loop) and the
sandbox's read-only root with room for mount targets."""

from __future__ import annotations

import asyncio
import threading

from mockkube.kubelet.runtime import sandbox
from mockkube.kubelet.runtime.backoff import Backoff
from mockkube.kubelet.runtime.logfile import LogFile, render, timestamp


def test_back_off_is_upstreams_10s_doubling_to_5m_and_forgotten_after_10m():
    b = Backoff()
    assert not b.in_backoff_since(100.0, 100.0)  # the first restart is at once
    b.next(100.0)
    assert b.describe() == "10s" and b.in_backoff_since(105.0, 114.9) and not b.in_backoff_since(105.0, 115.0)
    seen = []
    t = 105.0
    for _ in range(7):
        b.next(t)
        seen.append(b.describe())
        t += b.duration
    assert seen == ["20s", "40s", "1m20s", "2m40s", "5m0s", "5m0s", "5m0s"]
    b.next(t + 601)  # it ran for longer than twice the maximum: back to the start
    assert b.describe() == "10s"


def test_log_records_tail_timestamps_and_partial_lines(tmp_path):
    now = [1_700_000_000.25]
    log = LogFile(tmp_path / "0.log", lambda: now[0])
    log.write("stdout", b"one\ntw")
    log.write("stderr", b"err\n")
    log.write("stdout", b"o\nthree")
    log.close()
    raw = (tmp_path / "0.log").read_text().splitlines()
    assert raw[0] == "2023-11-14T22:13:20.250000000Z stdout F one"
    assert [r.split(" ", 1)[1] for r in raw] == ["stdout F one", "stderr F err", "stdout F two", "stdout P three"]
    assert log.read()[0] == "one\nerr\ntwo\nthree"
    assert log.read(tail_lines=2)[0] == "two\nthree" and log.read(tail_lines=0)[0] == ""
    assert log.read(tail_lines=1, timestamps=True)[0] == "2023-11-14T22:13:20.250000000Z three"
    assert timestamp(1.9999999999) == "1970-01-01T00:00:02.000000000Z"
    assert render([b"garbage"], False) == ""


def test_a_follower_on_another_loop_gets_each_line_and_ends_with_the_instance(tmp_path):
    log = LogFile(tmp_path / "0.log", lambda: 0.0)
    log.write("stdout", b"first\n")
    got: list[bytes] = []
    started = threading.Event()

    def follow() -> None:
        async def run() -> None:
            started.set()
            async for chunk in log.follow(None, False):
                got.append(chunk)

        asyncio.run(run())

    t = threading.Thread(target=follow)
    t.start()
    started.wait(5)
    log.write("stdout", b"second\n")
    log.close()
    t.join(5)
    assert not t.is_alive() and b"".join(got) == b"first\nsecond\n"


def test_the_root_is_the_hosts_with_tmpfs_directories_on_the_way_to_new_mount_targets():
    args = sandbox.root_args(["/etc/no-such-dir/cfg", "/tmp/x", "/usr/bin", "/run/secrets/x"])
    pairs = list(zip(args, args[1:]))
    assert ("--dir", "/etc") in pairs and ("--ro-bind", "/etc/passwd") in pairs  # /etc split: entries bound
    assert ("--ro-bind", "/usr") in pairs  # an existing target needs no room
    assert ("--tmpfs", "/run") in pairs  # the container's own /run
    assert ("--tmpfs", "/tmp") in pairs and ("--proc", "/proc") in pairs
    assert not any(a == "--ro-bind" and b == "/" for a, b in pairs)
    # nothing to make room for: the host's root in one read-only bind
    args = sandbox.root_args(["/tmp/x", "/usr/bin", "/run/secrets/x"])
    assert args[:3] == ["--ro-bind", "/", "/"] and "--dir" not in args
    assert sandbox.host_target("/var/run/secrets/x").endswith("/secrets/x")
