"""pods/exec and pods/attach over a raw WebSocket (aiohttp client): the channel protocol,
the error channel's Status, v5's CLOSE signal and upstream's 400s before the upgrade."""

from __future__ import annotations

import json

import aiohttp
import pytest

PODS = "/api/v1/namespaces/default/pods"


async def running_pod(api, name: str, annotations: dict | None = None, **spec) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "app", "image": "busybox", "env": [{"name": "GREETING", "value": "hello"}]}],
            **spec,
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
                        "name": c["name"],
                        "image": "busybox",
                        "imageID": "",
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                    }
                    for c in body["spec"]["containers"]
                ],
            }
        },
    )
    assert st == 200, out


async def session(
    api,
    name: str,
    command: list[str],
    proto: str = "v4.channel.k8s.io",
    sub: str = "exec",
    stdin: bool = False,
    tty: bool = False,
    send: list[bytes] = (),
) -> dict[int, bytes]:
    params = [("stdout", "true"), ("stderr", "true")] + [("command", c) for c in command]
    if stdin:
        params.append(("stdin", "true"))
    if tty:
        params.append(("tty", "true"))
    got: dict[int, bytes] = {}
    url = api.url + f"{PODS}/{name}/{sub}"
    async with api.s.ws_connect(url, params=params, protocols=[proto]) as ws:
        assert ws.protocol == proto
        for frame in send:
            await ws.send_bytes(frame)
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                got[msg.data[0]] = got.get(msg.data[0], b"") + msg.data[1:]
    return got


async def test_exec_echo_and_status(api):
    await running_pod(api, "e1")
    got = await session(api, "e1", ["echo", "hi"])
    assert got[1] == b"hi\n"
    assert json.loads(got[3]) == {"metadata": {}, "status": "Success"}


async def test_exec_non_zero_exit_code_in_the_status(api):
    await running_pod(api, "e2")
    got = await session(api, "e2", ["sh", "-c", "echo $GREETING; echo oops >&2; exit 3"])
    assert got[1] == b"hello\n" and got[2] == b"oops\n"
    status = json.loads(got[3])
    assert status["status"] == "Failure" and status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]


async def test_unknown_command_exits_127(api):
    await running_pod(api, "e3")
    got = await session(api, "e3", ["nvidia-smi"])
    assert got[2] == b"sh: nvidia-smi: not found\n"
    assert json.loads(got[3])["details"]["causes"][0]["message"] == "127"
    got = await session(api, "e3", ["sh", "-c", "nope"])
    assert got[2] == b"sh: nope: not found\n"


async def test_v5_stdin_until_close_signal(api):
    await running_pod(api, "e4")
    got = await session(
        api, "e4", ["cat"], proto="v5.channel.k8s.io", stdin=True, send=[b"\x00line 1\n", b"\x00line 2\n", b"\xff\x00"]
    )
    assert got[1] == b"line 1\nline 2\n"
    assert json.loads(got[3])["status"] == "Success"


async def test_interactive_shell_runs_each_line(api):
    await running_pod(api, "e5")
    got = await session(
        api,
        "e5",
        ["/bin/sh"],
        stdin=True,
        send=[b"\x00echo test string 1\n", b"\x00echo test string 2 >&2\n", b"\x00exit 1\n"],
    )
    assert got[1] == b"test string 1\n" and got[2] == b"test string 2\n"
    assert json.loads(got[3])["details"]["causes"][0]["message"] == "1"


async def test_configmap_volume_and_env_from(api):
    await api.post(
        "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "cfg"}, "data": {"mode": "fast", "level": "3"}}
    )
    await running_pod(
        api,
        "e6",
        volumes=[{"name": "c", "configMap": {"name": "cfg"}}],
        containers=[
            {
                "name": "app",
                "image": "x",
                "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
                "volumeMounts": [{"name": "c", "mountPath": "/etc/cfg"}],
            }
        ],
    )
    got = await session(api, "e6", ["sh", "-c", "cat /etc/cfg/mode; ls /etc/cfg; printenv CFG_level; hostname"])
    assert got[1] == b"fastlevel\nmode\n3\ne6\n"  # a value without a newline stays so


async def test_canned_answers_from_the_annotation(api):
    await running_pod(
        api, "e7", annotations={"mockkube.io/exec": "nvidia-smi -L: 'GPU 0: A100'\ncheck: {stderr: bad, exitCode: 2}\n"}
    )
    got = await session(api, "e7", ["nvidia-smi", "-L"])
    assert got[1] == b"GPU 0: A100"
    got = await session(api, "e7", ["check"])
    assert got[2] == b"bad" and json.loads(got[3])["details"]["causes"][0]["message"] == "2"


async def test_v1_protocols_send_plain_text_errors(api):
    await running_pod(api, "e8")
    got = await session(api, "e8", ["false"], proto="channel.k8s.io")
    assert got[3].startswith(b"command terminated with non-zero exit code")
    got = await session(api, "e8", ["true"], proto="v3.channel.k8s.io")
    assert 3 not in got


async def test_attach_streams_what_the_container_printed(api):
    await running_pod(api, "a1", annotations={"mockkube.io/log": "started\n"})
    url = api.url + f"{PODS}/a1/attach"
    async with api.s.ws_connect(url, params={"stdout": "true"}, protocols=["v5.channel.k8s.io"]) as ws:
        out = b""
        while b"started" not in out:
            msg = await ws.receive(timeout=10)
            assert msg.type == aiohttp.WSMsgType.BINARY
            out += msg.data[1:]
    assert out == b"started\n"  # then attach stays open until the client leaves, as it did here


@pytest.mark.parametrize(
    "query,message",
    [
        ("command=echo&stdout=true&container=nope", "container nope is not valid for pod bad"),
        ("stdout=true", "you must specify at least one command for the container"),
        ("command=echo&stdout=true", "Upgrade request required"),
    ],
)
async def test_errors_before_the_upgrade(api, query, message):
    await running_pod(api, "bad")
    st, out, _ = await api.post(f"{PODS}/bad/exec?{query}", None)
    assert st == 400 and out["message"] == message and out["reason"] == "BadRequest"


async def test_exec_into_a_pod_not_running(api):
    await api.post(PODS, {"metadata": {"name": "idle"}, "spec": {"containers": [{"name": "app", "image": "x"}]}})
    st, out, _ = await api.post(f"{PODS}/idle/exec?command=echo&stdout=true", None)
    assert st == 400 and out["message"] == 'unable to upgrade connection: container not found ("app")'
    st, out, _ = await api.post(f"{PODS}/missing/exec?command=echo&stdout=true", None)
    assert st == 404
