"""pods/portforward over a raw WebSocket (aiohttp client): the v4 channel protocol (port
prefix on each channel, data on 2i, errors on 2i+1), the SPDY/3.1 tunnel, and upstream's
400s before the upgrade."""

from __future__ import annotations

import zlib

import aiohttp
import pytest

from mockkube.kubelet import spdy

PODS = "/api/v1/namespaces/default/pods"


async def running_pod(api, name: str, annotations: dict | None = None) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80}]}],
        },
    }
    st, out, _ = await api.post(PODS, body)
    assert st == 201, out
    st, out, _ = await api.patch(
        f"{PODS}/{name}/status",
        {
            "status": {
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "app",
                        "image": "nginx",
                        "imageID": "",
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                    }
                ],
            }
        },
    )
    assert st == 200, out


async def test_channel_protocol_http_responder_and_refused_port(api):
    await running_pod(api, "pf", {"mockkube.io/http-response": "ok"})
    got: dict[int, bytes] = {}
    async with api.s.ws_connect(
        api.url + f"{PODS}/pf/portforward", params={"ports": "80,81"}, protocols=["v4.channel.k8s.io"]
    ) as ws:
        assert ws.protocol == "v4.channel.k8s.io"
        await ws.send_bytes(b"\x00" + (80).to_bytes(2, "little") + b"GET / HTTP/1.0\r\n\r\n")
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                got[msg.data[0]] = got.get(msg.data[0], b"") + msg.data[1:]
    assert got[0].startswith((80).to_bytes(2, "little") + b"HTTP/1.0 200 OK") and got[0].endswith(b"\r\n\r\nok")
    assert got[1] == (80).to_bytes(2, "little")  # no error for port 80
    assert got[2] == (81).to_bytes(2, "little")
    assert got[3].startswith((81).to_bytes(2, "little") + b"error forwarding port 81 to pod ")
    assert b"connect: connection refused" in got[3]


async def test_spdy_tunnel(api):
    await running_pod(api, "tun", {"mockkube.io/http-response.80": "tunnelled"})
    deflate = zlib.compressobj(zdict=spdy.DICTIONARY)

    def syn(stream_id: int, headers: dict) -> bytes:
        import struct

        raw = struct.pack(">I", len(headers)) + b"".join(
            struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode() for k, v in headers.items()
        )
        block = deflate.compress(raw) + deflate.flush(zlib.Z_SYNC_FLUSH)
        body = struct.pack(">IIH", stream_id, 0, 0) + block
        return struct.pack(">HHI", 0x8003, spdy.SYN_STREAM, len(body)) + body

    client = spdy.Codec()  # parses the server's frames (its zlib context mirrors ours)
    frames: list[spdy.Frame] = []
    async with api.s.ws_connect(api.url + f"{PODS}/tun/portforward", protocols=["SPDY/3.1+portforward.k8s.io"]) as ws:
        assert ws.protocol == "SPDY/3.1+portforward.k8s.io"
        await ws.send_bytes(syn(1, {"streamtype": "error", "port": "80", "requestid": "0"}))
        await ws.send_bytes(syn(3, {"streamtype": "data", "port": "80", "requestid": "0"}))
        await ws.send_bytes(spdy.Codec.data(3, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"))
        async for msg in ws:
            frames += client.feed(msg.data)
            if any(not f.control and f.stream_id == 1 and f.flags & spdy.FLAG_FIN for f in frames):
                break
    assert [f.stream_id for f in frames if f.control and f.type == spdy.SYN_REPLY] == [1, 3]
    body = b"".join(f.data for f in frames if not f.control and f.stream_id == 3)
    assert body.startswith(b"HTTP/1.1 200 OK") and body.endswith(b"tunnelled")
    assert b"".join(f.data for f in frames if not f.control and f.stream_id == 1) == b""


@pytest.mark.parametrize(
    "query,message",
    [
        ("", 'query parameter "port" is required'),
        ("ports=abc", 'unable to parse "abc" as a port: strconv.ParseUint: parsing "abc": invalid syntax'),
        ("ports=0", 'port "0" must be > 0'),
    ],
)
async def test_port_errors(api, query, message):
    await running_pod(api, "bad")
    async with api.s.get(
        api.url + f"{PODS}/bad/portforward?{query}",
        headers={
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Protocol": "v4.channel.k8s.io",
        },
    ) as r:
        out = await r.json()
    assert r.status == 400 and out["message"] == message


async def test_not_a_websocket_and_not_running(api):
    await running_pod(api, "plain")
    st, out, _ = await api.get(f"{PODS}/plain/portforward?ports=80")
    assert st == 400 and out["message"] == "Upgrade request required"
    await api.post(PODS, {"metadata": {"name": "idle"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    st, out, _ = await api.get(f"{PODS}/idle/portforward?ports=80")
    assert st == 400 and out["message"] == "pod idle does not have a host assigned"


async def test_a_session_the_client_ends_logs_no_error(api):
    """The client closing (or vanishing) while the target is idle ends the session: its
    streams are cancelled, which is no error (the soak benchmark's stderr once held a
    "_GatheringFuture exception was never retrieved ... CancelledError" traceback for every
    port-forward session it dropped)."""
    import asyncio
    import gc

    await running_pod(api, "quiet", {"mockkube.io/http-response": "ok"})
    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    before = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        for _ in range(3):
            async with api.s.ws_connect(
                api.url + f"{PODS}/quiet/portforward", params={"ports": "80"}, protocols=["v4.channel.k8s.io"]
            ) as ws:
                for _ in range(2):  # the port on the data and the error channel
                    msg = await ws.receive()
                    assert msg.data[0] in (0, 1) and msg.data[1:] == (80).to_bytes(2, "little")
            # the server's session ends with the client's close
        for _ in range(20):
            await asyncio.sleep(0.05)
            gc.collect()  # an unretrieved exception is reported when its future is collected
        st, _, _ = await api.get(f"{PODS}/quiet")
        assert st == 200
    finally:
        loop.set_exception_handler(before)
    assert [c.get("message") for c in reported] == []
