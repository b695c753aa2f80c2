"""A container instance's log as the kubelet keeps it: one file in the CRI format
(``<RFC3339Nano> <stdout|stderr> <F|P> <text>``, one record a line; ``F`` ends a line, ``P``
is part of one), written as the process prints and read by ``kubectl logs`` (``--tail``,
``--timestamps``, ``-f``). Written on the components' loop, read on the API's: waiters on
other loops are woken with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import AsyncIterator, Callable

MAX_LINE = 16 * 1024  # containerd splits longer lines into partial records
IDLE = 1.0  # seconds a follower waits before yielding b"" (so a server notices a client that left)
MAX_SIZE = 10 * 1024 * 1024  # the kubelet's containerLogMaxSize: older output is dropped beyond it


def timestamp(t: float) -> str:
    """RFC 3339 with nanoseconds, as the CRI log carries them."""
    whole = int(t)
    ns = int(round((t - whole) * 1e9))
    if ns >= 1_000_000_000:
        whole, ns = whole + 1, ns - 1_000_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{ns:09d}Z"


class LogFile:
    def __init__(self, path: Path, clock: Callable[[], float]) -> None:
        self.path = path
        self.clock = clock
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "ab")
        self._partial = {"stdout": b"", "stderr": b""}
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self.closed = False

    # -- writing (components' loop) -------------------------------------------------------
    def write(self, stream: str, data: bytes) -> None:
        buf = self._partial[stream] + data
        ts = timestamp(self.clock())
        out = []
        lines = buf.split(b"\n")
        buf = lines.pop()
        if lines:  # one join for a whole chunk: a chatty container sends thousands of lines at once
            prefix = f"{ts} {stream} F ".encode()
            out.append(prefix + (b"\n" + prefix).join(lines) + b"\n")
        while len(buf) >= MAX_LINE:
            out.append(f"{ts} {stream} P ".encode() + buf[:MAX_LINE] + b"\n")
            buf = buf[MAX_LINE:]
        self._partial[stream] = buf
        if out:
            self._append(b"".join(out))

    def _append(self, data: bytes) -> None:
        if self._f.closed:
            return
        if self._f.tell() + len(data) > MAX_SIZE:  # rotate: keep the newer half
            self._f.close()
            old = self.path.read_bytes()
            keep = old[len(old) // 2 :]
            keep = keep[keep.find(b"\n") + 1 :]
            self.path.write_bytes(keep)
            self._f = open(self.path, "ab")
        self._f.write(data)
        self._f.flush()
        self._wake()

    def close(self) -> None:
        """The instance ended: what is left of a line is written, followers finish."""
        if self.closed:
            return
        ts = timestamp(self.clock())
        rest = b"".join(f"{ts} {s} P ".encode() + buf + b"\n" for s, buf in self._partial.items() if buf)
        self._partial = {"stdout": b"", "stderr": b""}
        if rest:
            self._append(rest)
        self.closed = True
        self._f.close()
        self._wake()

    def _wake(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, ev in waiters:
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:  # that loop is closed
                pass

    # -- reading (the API's loop) ------------------------------------------------------------
    def read(
        self, tail_lines: int | None = None, timestamps: bool = False, since: float | None = None
    ) -> tuple[str, int]:
        """The log as ``kubectl logs`` prints it (records from ``since`` on), and the offset
        read up to."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return "", 0
        end = raw.rfind(b"\n") + 1
        records = raw[:end].splitlines()
        if since is not None:
            stamp = timestamp(since).encode()  # RFC 3339 with fixed digits sorts as the time does
            records = [r for r in records if r.split(b" ", 1)[0] >= stamp]
        if tail_lines is not None and tail_lines >= 0:
            records = records[len(records) - tail_lines :] if tail_lines else []
        return render(records, timestamps), end

    async def follow(
        self, tail_lines: int | None, timestamps: bool, since: float | None = None
    ) -> AsyncIterator[bytes]:
        """What there is, then each new record until the instance ends."""
        text, offset = self.read(tail_lines, timestamps, since)
        if text:
            yield text.encode()
        loop = asyncio.get_running_loop()
        while True:
            ev = asyncio.Event()
            with self._lock:
                self._waiters.append((loop, ev))
            closed = self.closed
            try:
                with open(self.path, "rb") as f:
                    f.seek(offset)
                    raw = f.read()
            except OSError:
                return
            end = raw.rfind(b"\n") + 1
            if end:
                offset += end
                yield render(raw[:end].splitlines(), timestamps).encode()
            if closed:
                return
            try:
                await asyncio.wait_for(ev.wait(), IDLE)
            except asyncio.TimeoutError:
                yield b""  # nothing new: the reader may check that its client is still there


def render(records: list[bytes], timestamps: bool) -> str:
    out = []
    for rec in records:
        parts = rec.split(b" ", 3)
        if len(parts) < 3:
            continue
        text = (parts[3] if len(parts) > 3 else b"").decode(errors="replace")
        if parts[2] == b"F":
            text += "\n"
        out.append(f"{parts[0].decode()} {text}" if timestamps else text)
    return "".join(out)
