"""Run cel-spec's conformance tests against mockkube's CEL engine (and, for comparison,
cel-expr-python when it is installed) and print a per-file table.

    python -m tests.conformance.cel.run                  # mockkube: table + failure kinds
    python -m tests.conformance.cel.run -v               # ... and every failure, by kind
    python -m tests.conformance.cel.run --skipped        # the tests skipped as proto
    python -m tests.conformance.cel.run --backend all    # mockkube and cel-expr-python
    python -m tests.conformance.cel.run --bench          # one DRA selector, both engines
    python -m tests.conformance.cel.run --write-floors   # record mockkube's figures as floors

The data comes from tests/conformance/cel/testdata (see its README; CEL_SPEC_TESTDATA
overrides the directory).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import runner

FLOORS = Path(__file__).resolve().parent / "floors.json"


def backend(name: str) -> runner.Backend:
    if name == "mockkube":
        from .mockkube_backend import MockkubeBackend

        return MockkubeBackend()
    if name == "cel-expr-python":
        from .celexpr_backend import CelExprPythonBackend

        return CelExprPythonBackend()
    raise SystemExit(f"unknown backend {name!r}")


def run_backend(b: runner.Backend, cases: dict[str, list[runner.Case]]) -> dict[str, list[runner.Result]]:
    return {f: runner.run(cs, b) for f, cs in cases.items()}


def write_floors(summaries: list[runner.FileSummary], data: Path) -> None:
    commit_file = data / "CEL_SPEC_COMMIT"
    commit = commit_file.read_text().strip() if commit_file.exists() else "unknown"
    old = json.loads(FLOORS.read_text()) if FLOORS.exists() else {}
    doc = {
        "about": "mockkube's CEL engine on cel-spec's simple conformance tests: per file, the "
        "tests, those skipped as needing protobuf message types, and those passed when "
        "the floor was recorded. The ratchet test fails if a file's pass rate "
        "(passed / (tests - skipped)) drops below passed / (tests - skipped) here. "
        "Regenerate with: python -m tests.conformance.cel.run --write-floors "
        "(then check the notes: CI runs cel-spec v0.25.1 from npm, a checkout may be newer)",
        "cel_spec_commit": commit,
    }
    if old.get("notes"):
        doc["notes"] = old["notes"]
    # a file the data's source lacks keeps its old floor
    kept = {f: v for f, v in old.get("files", {}).items() if f in runner.absent(data)}
    rows = ",\n".join(
        f'    {json.dumps(f)}: {{"tests": {v["tests"]}, "skipped": {v["skipped"]}, "passed": {v["passed"]}}}'
        for f, v in sorted(
            [
                *kept.items(),
                *((s.file, {"tests": s.tests, "skipped": s.skipped, "passed": s.passed}) for s in summaries),
            ]
        )
    )
    head = json.dumps(doc, indent=2)[:-2]  # without the closing brace
    FLOORS.write_text(f'{head},\n  "files": {{\n{rows}\n  }}\n}}\n')
    json.loads(FLOORS.read_text())
    print(f"wrote {FLOORS}")


def print_failures(results: list[runner.Result], verbose: bool) -> None:
    groups = runner.failures_by_kind(results)
    print(f"\nfailures by kind ({sum(len(v) for v in groups.values())}):")
    for kind, rs in groups.items():
        print(f"{len(rs):5}  {kind}")
        if verbose:
            for r in rs:
                expr = r.case.expr.replace("\n", "\\n")
                detail = r.detail.splitlines()[0] if r.detail else ""
                print(f"         {r.case.id}: {expr[:100]}" + (f"  -> {detail[:160]}" if detail else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="mockkube", choices=["mockkube", "cel-expr-python", "all"])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every failure under its kind")
    ap.add_argument("--skipped", action="store_true", help="list the tests skipped as proto")
    ap.add_argument("--file", action="append", help="run only this file (repeatable)")
    ap.add_argument("--data", type=Path, help="the directory of .textproto files")
    ap.add_argument("--write-floors", action="store_true", help="record mockkube's figures as floors")
    ap.add_argument("--bench", action="store_true", help="time one DRA selector evaluation")
    args = ap.parse_args(argv)

    if args.bench:
        from .bench import main as bench_main

        return bench_main()

    data = args.data or runner.data_dir()
    cases = runner.load_all(data)
    if not cases:
        print(f"no .textproto files in {data}; see tests/conformance/cel/testdata/README.md", file=sys.stderr)
        return 2
    if args.file:
        cases = {f: cs for f, cs in cases.items() if f in args.file}
    names = ["mockkube", "cel-expr-python"] if args.backend == "all" else [args.backend]
    all_results: dict[str, list[runner.FileSummary]] = {}
    for i, name in enumerate(names):
        try:
            b = backend(name)
        except ImportError as exc:
            print(f"\n{name}: not installed ({exc})")
            continue
        results = run_backend(b, cases)
        summaries = runner.summarize(results)
        title = f"== {name} on cel-spec {data} ({runner.source(data)})"
        if runner.absent(data):
            title += f"\nnot in this data: {', '.join(runner.absent(data))}"
        print(("\n" if i else "") + runner.table(summaries, title))
        flat = [r for rs in results.values() for r in rs]
        print_failures(flat, args.verbose)
        differ = runner.message_differences(flat)
        print(
            f"\nerror tests passed whose message does not contain cel-spec's: {len(differ)} of "
            f"{sum(1 for r in flat if r.status == 'pass' and r.case.matcher == 'eval_error')} "
            f"(informational: cel-spec's messages are often descriptions, and cel-go's runner "
            f"does not compare them)"
        )
        if args.verbose:
            for r in differ:
                print(
                    f"         {r.case.id}: got {r.detail[:100]!r}, cel-spec: "
                    f"{'; '.join(r.case.expected_errors)[:100]!r}"
                )
        all_results[name] = summaries
        if args.skipped and i == 0:
            skipped = [r for r in flat if r.status == "skip"]
            print(f"\nskipped as needing protobuf message types ({len(skipped)}):")
            for r in skipped:
                print(f"    {r.case.id} [{r.detail}]")
        if args.write_floors and name == "mockkube" and not args.file:
            write_floors(summaries, data)
    if len(all_results) > 1:
        print("\n" + comparison(all_results))
    return 0


def comparison(by_backend: dict[str, list[runner.FileSummary]]) -> str:
    """One row a file: tests, skipped, then passed and pass % per backend."""
    names = list(by_backend)
    first = by_backend[names[0]]
    head = f"{'file':<18} {'tests':>6} {'skip':>5}" + "".join(f" {n:>22}" for n in names)
    lines = [head]
    rows = [[s] + [next(x for x in by_backend[n] if x.file == s.file) for n in names[1:]] for s in first]
    total = [
        runner.FileSummary(
            "TOTAL", *(sum(getattr(s, a) for s in col) for a in ("tests", "passed", "failed", "skipped"))
        )
        for col in zip(*rows)
    ]
    for row in [*rows, total]:
        s = row[0]
        lines.append(
            f"{s.file:<18} {s.tests:>6} {s.skipped:>5}"
            + "".join(f" {f'{x.passed}/{x.run}':>14} {100 * x.rate:>6.1f}%" for x in row)
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
