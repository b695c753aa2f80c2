"""SPDY/3.1 framing, the server's half (what kubectl's port-forward speaks, tunnelled in
WebSocket binary messages as ``SPDY/3.1+portforward.k8s.io``).

Only what Kubernetes' httpstream uses: SYN_STREAM from the client (headers), SYN_REPLY,
DATA with FIN, RST_STREAM, PING, GOAWAY; SETTINGS and WINDOW_UPDATE are read and ignored
(spdystream does no flow control). Header blocks are zlib streams primed with the SPDY/3
dictionary, one compression context per direction for the whole session.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
VERSION = 3

# The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1):
# length-prefixed header names and values, then a run of common strings.
_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language "
    "accept-ranges age allow authorization cache-control connection content-base content-encoding "
    "content-language content-length content-location content-md5 content-range content-type date "
    "etag expect expires from host if-match if-modified-since if-none-match if-range "
    "if-unmodified-since last-modified location max-forwards pragma proxy-authenticate "
    "proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade "
    "user-agent vary via warning www-authenticate method get status |200 OK| version HTTP/1.1 url "
    "public set-cookie keep-alive origin"
)
_TAIL = (
    b"100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    b"203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    b"403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    b"Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    b"chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    b"text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


def _dictionary() -> bytes:
    words = []
    for part in _WORDS.split("|"):
        words += [part] if part == "200 OK" else part.split()
    return b"".join(struct.pack(">I", len(w)) + w.encode() for w in words) + _TAIL


DICTIONARY = _dictionary()


@dataclass
class Frame:
    control: bool
    type: int = 0  # control frame type
    stream_id: int = 0
    flags: int = 0
    data: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class Codec:
    """Parses the client's frames from a byte stream and encodes the server's."""

    def __init__(self) -> None:
        self.buf = b""
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self.buf += data
        frames = []
        while len(self.buf) >= 8:
            length = int.from_bytes(self.buf[5:8], "big")
            if len(self.buf) < 8 + length:
                break
            head, body, self.buf = self.buf[:8], self.buf[8 : 8 + length], self.buf[8 + length :]
            flags = head[4]
            if head[0] & 0x80:
                ftype = int.from_bytes(head[2:4], "big")
                f = Frame(True, ftype, flags=flags, data=body)
                if ftype in (SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE):
                    f.stream_id = int.from_bytes(body[0:4], "big") & 0x7FFFFFFF
                if ftype == SYN_STREAM:
                    f.headers = self._decode_headers(body[10:])
                elif ftype in (SYN_REPLY, HEADERS):
                    f.headers = self._decode_headers(body[4:])
                frames.append(f)
            else:
                frames.append(
                    Frame(False, stream_id=int.from_bytes(head[0:4], "big") & 0x7FFFFFFF, flags=flags, data=body)
                )
        return frames

    def _decode_headers(self, block: bytes) -> dict[str, str]:
        raw = self._inflate.decompress(block)
        out: dict[str, str] = {}
        (n,), i = struct.unpack(">I", raw[:4]), 4
        for _ in range(n):
            (ln,) = struct.unpack(">I", raw[i : i + 4])
            name = raw[i + 4 : i + 4 + ln].decode("latin-1")
            i += 4 + ln
            (lv,) = struct.unpack(">I", raw[i : i + 4])
            out[name.lower()] = raw[i + 4 : i + 4 + lv].decode("latin-1").split("\x00")[0]
            i += 4 + lv
        return out

    def _encode_headers(self, headers: dict[str, str]) -> bytes:
        raw = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.lower().encode() + struct.pack(">I", len(v)) + v.encode()
            for k, v in headers.items()
        )
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    @staticmethod
    def _control(ftype: int, flags: int, body: bytes) -> bytes:
        return struct.pack(">HHI", 0x8000 | VERSION, ftype, (flags << 24) | len(body)) + body

    def syn_reply(self, stream_id: int, headers: dict[str, str] | None = None, fin: bool = False) -> bytes:
        return self._control(
            SYN_REPLY, FLAG_FIN if fin else 0, struct.pack(">I", stream_id) + self._encode_headers(headers or {})
        )

    def rst_stream(self, stream_id: int, status: int = 1) -> bytes:
        return self._control(RST_STREAM, 0, struct.pack(">II", stream_id, status))

    def ping(self, ping_id: int) -> bytes:
        return self._control(PING, 0, struct.pack(">I", ping_id))

    def goaway(self, last_stream: int, status: int = 0) -> bytes:
        return self._control(GOAWAY, 0, struct.pack(">II", last_stream, status))

    @staticmethod
    def data(stream_id: int, data: bytes, fin: bool = False) -> bytes:
        out = b""
        chunks = [data[i : i + 0xFFFFFF] for i in range(0, len(data), 0xFFFFFF)] or [b""]
        for n, c in enumerate(chunks):
            flags = FLAG_FIN if fin and n == len(chunks) - 1 else 0
            out += struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(c)) + c
        return out
