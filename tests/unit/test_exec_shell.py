"""The simulated container's shell (what kubectl exec runs)."""

from __future__ import annotations

import asyncio
import gzip

from mockkube.kubelet.shell import Container, Shell


def run(argv: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    out: dict[int, list[bytes]] = {1: [], 2: []}

    async def write(ch: int, b: bytes) -> None:
        out[ch].append(b)

    c = Container(
        hostname="web-0",
        env={"PATH": "/usr/bin", "GREETING": "hi"},
        files={"/etc/hostname": "web-0\n", "/dev/null": "", "/dev/nvidia0": ""},
    )
    code = asyncio.run(Shell(c, write).exec(argv, stdin))
    return code, b"".join(out[1]).decode(errors="replace"), b"".join(out[2]).decode(errors="replace")


def test_scripts_as_tests_send_them():
    assert run(["echo", "hi", "there"]) == (0, "hi there\n", "")
    assert run(["sh", "-c", "for i in $(seq 1 3); do echo $i; done"]) == (0, "1\n2\n3\n", "")
    assert run(["sh", "-c", "echo $GREETING && false || echo fallback; echo done >&2"]) == (
        0,
        "hi\nfallback\n",
        "done\n",
    )
    assert run(["sh", "-c", "exit 3"])[0] == 3
    assert run(["printenv", "GREETING"]) == (0, "hi\n", "")
    assert run(["hostname"]) == (0, "web-0\n", "")
    assert run(["cat", "/etc/hostname"]) == (0, "web-0\n", "")
    assert run(["ls", "/dev"])[1] == "null\nnvidia0\n"
    code, out, _ = run(["sh", "-c", "echo -n 'This is a test string' | gzip"])
    assert code == 0


def test_binary_pipes_and_unknown_commands():
    out: list[bytes] = []

    async def write(ch: int, b: bytes) -> None:
        out.append(b)

    c = Container(hostname="h", env={})
    asyncio.run(Shell(c, write).exec(["sh", "-c", "echo -n 'This is a test string' | gzip"]))
    assert gzip.decompress(b"".join(out)) == b"This is a test string"
    assert run(["frobnicate", "x"]) == (127, "", "sh: frobnicate: not found\n")
    assert run(["sh"], b"echo one\necho two >&2\nexit 4\necho never\n") == (4, "one\n", "two\n")
    assert run(["cat"], b"piped") == (0, "piped", "")
