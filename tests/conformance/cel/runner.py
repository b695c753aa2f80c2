"""Runs cel-spec's simple conformance tests (``testdata/*.textproto``) against a backend,
with cel-go's rules:

- a parse error fails the test; a check error fails it unless the test sets
  ``disable_check`` (then the error stands for the evaluation error it would become);
- ``value``: the result must equal the expected value exactly, types included (1, 1u and
  1.0 differ); no result matcher means ``value: {bool_value: true}``;
- ``typed_result``: the checker's type must be the deduced type (when the backend
  reports one), and the value must match unless the test is ``check_only``;
- ``eval_error`` / ``any_eval_errors``: evaluation must fail (the message is recorded,
  not required: cel-go's runner does not compare it either);
- variables: ``type_env`` declares them for the checker, ``bindings`` give their values.

Tests that need protobuf message types (TestAllTypes, proto2/proto3 containers, enums,
google.protobuf wrappers/Struct/Any) are skipped, counted and named; Timestamp and
Duration are CEL types and run.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import textproto
from .values import (
    ProtoRequired,
    Unsupported,
    equal,
    from_type,
    from_value,
    same_but_type,
    show,
    spell,
)

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / "testdata"
# the data directory; CEL_SPEC_TESTDATA overrides it (a checkout's tests/simple/testdata)
DATA_ENV = "CEL_SPEC_TESTDATA"

_PROTO_RE = re.compile(
    r"TestAllTypes|NestedMessage|NestedEnum|GlobalEnum|cel\.expr\.conformance|\bproto[23]\b"
    r"|google\.protobuf\.(?!Timestamp\b|Duration\b)\w+"
)


def data_dir() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


@dataclass
class Case:
    file: str
    section: str
    name: str
    expr: str
    disable_check: bool = False
    disable_macros: bool = False
    check_only: bool = False
    container: str = ""
    decls: dict[str, Any] = field(default_factory=dict)  # variable -> type (from_type)
    functions: list[str] = field(default_factory=list)  # declared functions (not modelled)
    bindings: dict[str, Any] = field(default_factory=dict)
    matcher: str = "value"  # value | typed_result | eval_error | unknown
    expected: Any = True
    expected_type: Any = None
    expected_errors: list[str] = field(default_factory=list)
    skip: str = ""  # why the test needs protobuf message types
    unsupported: str = ""  # a part of the format the runner does not model

    @property
    def id(self) -> str:
        return f"{self.file}/{self.section}/{self.name}"


@dataclass
class Outcome:
    """What a backend did: stage is ok | parse | check | eval | crash | unsupported."""

    stage: str
    value: Any = None
    error: str = ""
    type: str | None = None  # the checker's type, spelled as cel-go does, when known


class Backend(Protocol):
    name: str
    reports_types: bool

    def run(self, case: Case) -> Outcome: ...


@dataclass
class Result:
    case: Case
    status: str  # pass | fail | skip
    kind: str = ""  # failure kind (grouping key)
    detail: str = ""
    message_differs: bool = False  # an expected error came, in other words than cel-spec's


# ---------------------------------------------------------------- loading


def load_file(path: Path) -> list[Case]:
    doc = textproto.parse(path.read_text(encoding="utf-8"))
    stem = path.name.removesuffix(".textproto")
    cases = []
    for section in doc.all("section"):
        for t in section.all("test"):
            cases.append(_case(stem, section.str("name"), t))
    return cases


def _case(file: str, section: str, t: textproto.Message) -> Case:
    c = Case(
        file,
        section,
        t.str("name"),
        t.str("expr"),
        disable_check=str(t.get("disable_check", "false")) == "true",
        disable_macros=str(t.get("disable_macros", "false")) == "true",
        check_only=str(t.get("check_only", "false")) == "true",
        container=t.str("container"),
    )
    try:
        for text in (c.expr, c.container):
            m = _PROTO_RE.search(text)
            if m:
                raise ProtoRequired(m.group())
        for d in t.all("type_env"):
            if d.has("ident"):
                c.decls[d.str("name")] = from_type(d.get("ident").get("type"))
            elif d.has("function"):
                c.functions.append(d.str("name"))
                for o in d.get("function").all("overloads"):
                    for p in [*o.all("params"), *o.all("result_type")]:
                        from_type(p)
        for b in t.all("bindings"):
            ev = b.get("value")
            if ev.has("value"):
                c.bindings[b.str("key")] = from_value(ev.get("value"))
            else:
                raise Unsupported(f"binding {b.str('key')} is not a value ({sorted(ev.fields)})")
        if t.has("value"):
            c.expected = from_value(t.get("value"))
        elif t.has("typed_result"):
            tr = t.get("typed_result")
            c.matcher = "typed_result"
            c.expected = from_value(tr.get("result")) if tr.has("result") else None
            c.expected_type = from_type(tr.get("deduced_type")) if tr.has("deduced_type") else None
        elif t.has("eval_error") or t.has("any_eval_errors"):
            c.matcher = "eval_error"
            sets = [t.get("eval_error")] if t.has("eval_error") else t.get("any_eval_errors").all("errors")
            c.expected_errors = [e.str("message") for s in sets for e in s.all("errors")]
        elif t.has("unknown") or t.has("any_unknowns"):
            c.matcher = "unknown"
            raise Unsupported("unknown-set results")
    except ProtoRequired as exc:
        c.skip = str(exc)
    except Unsupported as exc:
        c.unsupported = str(exc)
    return c


def absent(directory: Path | None = None) -> list[str]:
    """Files the data's source does not have (a cel-spec release older than the file),
    as scripts/refresh_cel_spec.py records them in ABSENT."""
    path = (directory or data_dir()) / "ABSENT"
    return path.read_text().split() if path.exists() else []


def source(directory: Path | None = None) -> str:
    """Where the data came from (SOURCE, written by scripts/refresh_cel_spec.py)."""
    path = (directory or data_dir()) / "SOURCE"
    return path.read_text().strip() if path.exists() else "unknown source"


def load_all(directory: Path | None = None) -> dict[str, list[Case]]:
    directory = directory or data_dir()
    return {p.name.removesuffix(".textproto"): load_file(p) for p in sorted(directory.glob("*.textproto"))}


# ---------------------------------------------------------------- judging


def _first_line(msg: str) -> str:
    msg = re.sub(r"^compilation failed: ", "", msg.strip())
    msg = re.sub(r"^ERROR: <input>:\d+:\d+: ", "", msg)
    return msg.splitlines()[0] if msg else ""


def error_kind(msg: str) -> str:
    """A grouping key for an error message: function names kept, argument types and
    literals dropped."""
    line = _first_line(msg)
    line = re.sub(r" applied to '.*", "", line)
    line = line.replace(" (in container '')", "")
    line = re.sub(r"(no such overload)(:.*)?", r"\1", line)
    line = re.sub(r"\b\d+\b", "N", line)
    return line[:100]


def judge(case: Case, backend: Backend) -> Result:
    if case.skip:
        return Result(case, "skip", "proto", case.skip)
    if case.unsupported:
        return Result(case, "fail", "runner: " + case.unsupported)
    out = backend.run(case)
    if out.stage == "unsupported":
        return Result(case, "fail", "unsupported: " + out.error, out.error)
    if out.stage == "crash":
        return Result(case, "fail", "crash: " + error_kind(out.error), out.error)
    if out.stage == "parse":
        return Result(case, "fail", "parse error: " + error_kind(out.error), out.error)
    if out.stage == "check" and not case.disable_check:
        return Result(case, "fail", "check error: " + error_kind(out.error), out.error)
    if (
        case.matcher == "typed_result"
        and case.expected_type is not None
        and out.type is not None
        and backend.reports_types
        and out.stage != "check"
    ):
        want = spell(case.expected_type)
        if out.type != want:
            return Result(case, "fail", "deduced type differs", f"checker says {out.type}, want {want}")
    if case.check_only:
        return Result(case, "pass")
    if case.matcher == "eval_error":
        if out.stage in ("eval", "check"):
            got = _first_line(out.error)
            differs = bool(case.expected_errors) and not any(m and m in got for m in case.expected_errors)
            return Result(case, "pass", detail=got if differs else "", message_differs=differs)
        return Result(
            case, "fail", "no error", f"got {show(out.value)}, want an error ({'; '.join(case.expected_errors)})"
        )
    if out.stage == "check":  # disable_check: the checker's error stands for the evaluation's
        return Result(case, "fail", "check error (disable_check): " + error_kind(out.error), out.error)
    if out.stage == "eval":
        return Result(case, "fail", "eval error: " + error_kind(out.error), out.error)
    if case.matcher == "typed_result" and case.expected is None:
        return Result(case, "pass")
    if equal(out.value, case.expected):
        return Result(case, "pass")
    if same_but_type(out.value, case.expected):
        return Result(case, "fail", "wrong numeric type", f"got {show(out.value)}, want {show(case.expected)}")
    return Result(case, "fail", "wrong value", f"got {show(out.value)}, want {show(case.expected)}")


def run(cases: Iterable[Case], backend: Backend) -> list[Result]:
    return [judge(c, backend) for c in cases]


# ---------------------------------------------------------------- reporting


@dataclass
class FileSummary:
    file: str
    tests: int
    passed: int
    failed: int
    skipped: int

    @property
    def run(self) -> int:
        return self.tests - self.skipped

    @property
    def rate(self) -> float:
        return self.passed / self.run if self.run else 1.0


def summarize(results_by_file: dict[str, list[Result]]) -> list[FileSummary]:
    out = []
    for f, results in results_by_file.items():
        n = Counter(r.status for r in results)
        out.append(FileSummary(f, len(results), n["pass"], n["fail"], n["skip"]))
    return out


def table(summaries: list[FileSummary], title: str = "") -> str:
    lines = []
    if title:
        lines.append(title)
    lines.append(f"{'file':<18} {'tests':>6} {'passed':>7} {'failed':>7} {'skip-proto':>10} {'pass %':>7}")
    for s in summaries:
        lines.append(f"{s.file:<18} {s.tests:>6} {s.passed:>7} {s.failed:>7} {s.skipped:>10} {100 * s.rate:>6.1f}%")
    t = FileSummary("TOTAL", *(sum(getattr(s, a) for s in summaries) for a in ("tests", "passed", "failed", "skipped")))
    lines.append(f"{t.file:<18} {t.tests:>6} {t.passed:>7} {t.failed:>7} {t.skipped:>10} {100 * t.rate:>6.1f}%")
    lines.append(
        f"passed {100 * t.rate:.1f}% of the {t.run} tests run "
        f"({100 * t.passed / t.tests if t.tests else 0:.1f}% of all {t.tests}); "
        f"{t.skipped} skipped as needing protobuf message types "
        f"({100 * t.skipped / t.tests if t.tests else 0:.1f}%)"
    )
    return "\n".join(lines)


def message_differences(results: Iterable[Result]) -> list[Result]:
    """Passed error tests whose error message does not contain cel-spec's expected one."""
    return [r for r in results if r.message_differs]


def failures_by_kind(results: Iterable[Result]) -> dict[str, list[Result]]:
    groups: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        if r.status == "fail":
            groups[r.kind].append(r)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))
