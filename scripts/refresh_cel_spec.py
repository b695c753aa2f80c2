#!/usr/bin/env python3
"""Refresh the cel-spec conformance data the CEL conformance runner reads
(tests/conformance/cel/testdata/) from a local copy of google/cel-spec: a checkout
(a directory with tests/simple/testdata/) or a git directory (bare or .git; files are
read from REF, HEAD by default). Copies the files the runner runs, cel-spec's LICENSE
(Apache-2.0) beside them, and writes CEL_SPEC_COMMIT with the commit they came from when
it is known. Nothing is fetched: the tests read only the local copy.

    python scripts/refresh_cel_spec.py ~/src/cel-spec
    python scripts/refresh_cel_spec.py /path/to/cel-spec.git --ref v0.24.0
    python -m tests.conformance.cel.run --write-floors   # then review the new floors

The file list: cel-spec's core files minus the ones that are about protobuf messages
(proto2, proto3, proto2_ext, dynamic, enums, wrappers; single proto tests in the others
are skipped by the runner), plus the extension files for what Kubernetes' CEL
environment enables (strings, optionals, two-variable comprehensions = macros2, IP/CIDR
= network_ext) and bindings (mockkube's engine implements cel.bind). Not copied:
math_ext, encoders_ext, block_ext (not in Kubernetes), unknowns (no tests).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "tests" / "conformance" / "cel" / "testdata"
SRC = "tests/simple/testdata"

FILES = [
    # core
    "basic",
    "comparisons",
    "conversions",
    "fields",
    "fp_math",
    "integer_math",
    "lists",
    "logic",
    "macros",
    "namespace",
    "parse",
    "plumbing",
    "string",
    "timestamps",
    "type_deduction",
    # extensions Kubernetes enables (and cel.bind)
    "macros2",
    "string_ext",
    "optionals",
    "network_ext",
    "bindings_ext",
]


def _git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True).stdout


def _git_dir(source: Path) -> Path | None:
    if (source / ".git").exists():
        return source / ".git"
    if (source / "HEAD").is_file() and (source / "objects").is_dir():
        return source
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="a cel-spec checkout or git directory")
    ap.add_argument(
        "--ref",
        default=None,
        help="read from this commit/tag of a git directory "
        "(default: the checkout's files, or HEAD of a bare git directory)",
    )
    ap.add_argument("--dest", type=Path, default=DEST)
    args = ap.parse_args(argv)

    gitdir = _git_dir(args.source)
    worktree = args.source if (args.source / SRC).is_dir() and args.ref is None else None
    if worktree is None and gitdir is None:
        print(f"{args.source}: neither a cel-spec checkout nor a git directory", file=sys.stderr)
        return 2

    def read(path: str) -> bytes:
        if worktree is not None:
            return (worktree / path).read_bytes()
        assert gitdir is not None
        return _git(gitdir, "show", f"{args.ref or 'HEAD'}:{path}")

    args.dest.mkdir(parents=True, exist_ok=True)
    for stale in args.dest.glob("*.textproto"):
        stale.unlink()
    for name in FILES:
        (args.dest / f"{name}.textproto").write_bytes(read(f"{SRC}/{name}.textproto"))
    (args.dest / "LICENSE").write_bytes(read("LICENSE"))
    commit = ""
    if gitdir is not None:
        commit = _git(gitdir, "rev-parse", args.ref or "HEAD").decode().strip()
    (args.dest / "CEL_SPEC_COMMIT").write_text((commit or "unknown (copied from a checkout)") + "\n")
    print(f"copied {len(FILES)} files and LICENSE to {args.dest} (cel-spec {commit or 'checkout'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
