"""What ``kubectl exec`` runs in a simulated container: a small POSIX-like shell over the
container's simulated state (its environment, hostname, the files mockkube knows), since
there is no process to run. Enough for the commands tests send: ``sh -c`` scripts with
``;``, ``&&``, ``||``, pipes, ``>&2``, ``$VAR``, ``$(...)``, ``for ... do ... done``, and
the builtins below; an interactive ``sh`` reading stdin line by line. Anything else
answers as a shell does: ``sh: <cmd>: not found``, exit 127.
"""

from __future__ import annotations

import gzip
import re
import shlex
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

Write = Callable[[int, bytes], Awaitable[None]]  # (1 stdout | 2 stderr, data)
STDOUT, STDERR = 1, 2


class Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@dataclass
class Container:
    """The simulated container an exec runs in."""

    hostname: str
    env: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)  # path -> content
    started: float = field(default_factory=time.time)
    now: Callable[[], float] = time.time
    answers: dict[str, dict] = field(default_factory=dict)  # command line -> {stdout, stderr, exitCode}


class Shell:
    def __init__(self, c: Container, write: Write) -> None:
        self.c = c
        self.vars = dict(c.env)
        self.write = write
        self.status = 0
        self.exited = False  # an ``exit`` ran (an interactive shell ends there)

    # -- entry points -------------------------------------------------------------------
    async def exec(self, argv: list[str], stdin: bytes | None = None) -> int:
        """Run ``argv`` as the container runtime would (no shell unless argv asks for one)."""
        try:
            self.status = await self._command(argv, stdin, STDOUT, STDERR)
        except Exit as e:
            self.status = e.code
        return self.status

    async def script(self, text: str, stdin: bytes | None = None) -> int:
        try:
            await self._run_list(text, stdin)
        except Exit as e:
            self.status = e.code
            self.exited = True
        return self.status

    # -- parsing ------------------------------------------------------------------------
    async def _run_list(self, text: str, stdin: bytes | None) -> None:
        for stmt in _split_statements(text):
            stmt = stmt.strip()
            if not stmt:
                continue
            m = re.match(r"for\s+(\w+)\s+in\s+(.*?);\s*do\s+(.*);\s*done$", stmt, re.S)
            if m:
                for item in self._words(m.group(2)):
                    self.vars[m.group(1)] = item
                    await self._run_list(m.group(3), stdin)
                continue
            await self._and_or(stmt, stdin)

    async def _and_or(self, stmt: str, stdin: bytes | None) -> None:
        parts = re.split(r"(\&\&|\|\|)", stmt)
        run = True
        for i in range(0, len(parts), 2):
            if run:
                self.status = await self._pipeline(parts[i].strip(), stdin)
            op = parts[i + 1] if i + 1 < len(parts) else None
            if op == "&&":
                run = self.status == 0
            elif op == "||":
                run = self.status != 0

    async def _pipeline(self, text: str, stdin: bytes | None) -> int:
        stages = [s.strip() for s in _split_top(text, "|")]
        data = stdin
        code = 0
        for i, stage in enumerate(stages):
            last = i == len(stages) - 1
            buf: list[bytes] = []
            out, err = STDOUT, STDERR
            words = self._words(stage)
            clean: list[str] = []
            for w in words:
                if w in (">&2", "1>&2"):
                    out = STDERR
                elif w in ("2>&1",):
                    err = out
                elif w in (">/dev/null", "2>/dev/null"):
                    if w.startswith("2"):
                        err = 0
                    else:
                        out = 0
                else:
                    clean.append(w)
            if not clean:
                continue
            if not last:
                saved = self.write

                async def capture(ch: int, b: bytes, _buf=buf, _saved=saved) -> None:
                    if ch == STDOUT:
                        _buf.append(b)
                    else:
                        await _saved(ch, b)

                self.write = capture
                try:
                    code = await self._command(clean, data, out, err)
                finally:
                    self.write = saved
                data = b"".join(buf)
            else:
                code = await self._command(clean, data, out, err)
        return code

    def _words(self, text: str) -> list[str]:
        text = re.sub(r"\$\(([^()]*)\)", lambda m: self._subst(m.group(1)), text)
        text = re.sub(r"\$\{(\w+)\}|\$(\w+|\?)", lambda m: shlex.quote(self._var(m.group(1) or m.group(2))), text)
        try:
            return shlex.split(text, posix=True)
        except ValueError:
            return text.split()

    def _var(self, name: str) -> str:
        return str(self.status) if name == "?" else self.vars.get(name, "")

    def _subst(self, cmd: str) -> str:
        out: list[bytes] = []

        async def capture(ch: int, b: bytes) -> None:
            if ch == STDOUT:
                out.append(b)

        sub = Shell(self.c, capture)
        sub.vars = self.vars
        coro = sub.script(cmd)
        try:  # command substitution runs synchronously: builtins never wait
            coro.send(None)
        except StopIteration:
            pass
        else:  # pragma: no cover - a builtin that awaited something other than writes
            coro.close()
        # unquoted substitution is split into words, as the shell does
        return " ".join(shlex.quote(w) for w in b"".join(out).decode(errors="replace").split())

    # -- commands -------------------------------------------------------------------------
    async def _command(self, argv: list[str], stdin: bytes | None, out: int, err: int) -> int:
        while argv and re.match(r"^\w+=", argv[0]):
            k, _, v = argv.pop(0).partition("=")
            self.vars[k] = v
        if not argv:
            return 0
        name = argv[0].rsplit("/", 1)[-1]
        args = argv[1:]

        async def w(text: str | bytes, ch: int = out) -> None:
            if ch:
                await self.write(ch, text.encode() if isinstance(text, str) else text)

        canned = self.c.answers.get(" ".join(argv))
        if canned is not None:  # the user's own answer (mockkube.io/exec annotation) comes first
            if canned["stdout"]:
                await w(canned["stdout"])
            if canned["stderr"]:
                await w(canned["stderr"], err)
            return canned["exitCode"]

        if name in ("sh", "bash", "ash", "dash"):
            if args[:1] == ["-c"] and len(args) > 1:
                return await Shell(self.c, self.write).script(args[1], stdin)
            if stdin is not None:
                return await Shell(self.c, self.write).script(stdin.decode(errors="replace"))
            return 0
        if name == "echo":
            newline = True
            while args and args[0] in ("-n", "-e"):
                newline = newline and args.pop(0) != "-n"
            await w(" ".join(args) + ("\n" if newline else ""))
            return 0
        if name == "printf":
            fmt = args[0] if args else ""
            try:
                text = fmt.replace("\\n", "\n") % tuple(args[1:]) if "%" in fmt else fmt.replace("\\n", "\n")
            except TypeError:
                text = fmt
            await w(text)
            return 0
        if name in ("true", ":"):
            return 0
        if name == "false":
            return 1
        if name == "exit":
            raise Exit(int(args[0]) if args and args[0].lstrip("-").isdigit() else self.status)
        if name in ("cd", "sleep", "sync", "export", "set", "trap"):
            for a in args:
                if name == "export" and "=" in a:
                    k, _, v = a.partition("=")
                    self.vars[k] = v
            return 0
        if name == "pwd":
            await w("/\n")
            return 0
        if name in ("env", "printenv"):
            if name == "printenv" and args:
                if args[0] not in self.vars:
                    return 1
                await w(self.vars[args[0]] + "\n")
                return 0
            await w("".join(f"{k}={v}\n" for k, v in self.vars.items()))
            return 0
        if name == "hostname":
            await w(self.c.hostname + "\n")
            return 0
        if name == "whoami":
            await w("root\n")
            return 0
        if name == "id":
            await w("uid=0(root) gid=0(root) groups=0(root)\n")
            return 0
        if name == "uname":
            await w("Linux mockkube 6.1.0 #1 SMP x86_64 GNU/Linux\n" if "-a" in args else "Linux\n")
            return 0
        if name == "date":
            await w(time.strftime("%a %b %d %H:%M:%S UTC %Y\n", time.gmtime(self.c.now())))
            return 0
        if name == "uptime":
            up = int(self.c.now() - self.c.started)
            await w(
                time.strftime(" %H:%M:%S", time.gmtime(self.c.now()))
                + f" up {up // 60} min,  0 users,  load average: 0.00, 0.00, 0.00\n"
            )
            return 0
        if name == "seq":
            nums = [int(a) for a in args if a.lstrip("-").isdigit()]
            first, last = (nums[0], nums[1]) if len(nums) > 1 else (1, nums[0] if nums else 0)
            await w("".join(f"{i}\n" for i in range(first, last + 1)))
            return 0
        if name == "cat":
            if not args or args == ["-"]:
                await w(stdin or b"")
                return 0
            code = 0
            for path in args:
                if path in self.c.files:
                    await w(self.c.files[path])
                else:
                    await w(f"cat: {path}: No such file or directory\n", err)
                    code = 1
            return code
        if name == "ls":
            path = (args[-1] if args and not args[-1].startswith("-") else "/").rstrip("/") + "/"
            names = sorted({p[len(path) :].split("/", 1)[0] for p in self.c.files if p.startswith(path)})
            if not names and path != "/":
                await w(f"ls: {path.rstrip('/')}: No such file or directory\n", err)
                return 1
            await w("".join(n + "\n" for n in names))
            return 0
        if name == "gzip":
            await w(gzip.compress(stdin or b"", mtime=0))
            return 0
        if name == "wc" and "-l" in args:
            await w(f"{(stdin or b'').count(bytes([10]))}\n")
            return 0
        if name in ("head", "tail"):
            n = 10
            if "-n" in args:
                n = int(args[args.index("-n") + 1])
            lines = (stdin or b"").splitlines(keepends=True)
            await w(b"".join(lines[:n] if name == "head" else lines[-n:]))
            return 0
        await w(f"sh: {argv[0]}: not found\n", err)
        return 127


def _split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside quotes and $( ) (a single character separator, not ||)."""
    out, cur, depth, quote = [], [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif text.startswith("$(", i):
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == sep and not depth and not (sep == "|" and (text[i + 1 : i + 2] == "|" or text[i - 1 : i] == "|")):
            out.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _split_statements(text: str) -> list[str]:
    """Statements separated by ``;`` or newlines, keeping ``for ...; do ...; done`` whole."""
    out: list[str] = []
    for p in (p for line in text.split("\n") for p in _split_top(line, ";")):
        if out and re.match(r"\s*for\s+\w+\s+in\s", out[-1]) and not re.search(r"\bdone\s*$", out[-1]):
            out[-1] += ";" + p
        else:
            out.append(p)
    return out
