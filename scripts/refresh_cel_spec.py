#!/usr/bin/env python3
"""Fill the cel-spec conformance data the CEL conformance runner reads
(tests/conformance/cel/testdata/, not committed) from one of two sources:

- ``--npm`` (what CI does): the npm package @bufbuild/cel-spec, which ships cel-spec's
  simple conformance tests (cel-spec v0.25.1 in 0.6.1) as protobuf messages. The pinned
  versions in scripts/cel_spec_npm/package.json (and its lock) are installed with
  ``npm ci`` into ~/.cache/mockkube/cel-spec-npm (MOCKKUBE_CEL_SPEC_NPM_DIR moves it;
  nothing is installed again while that copy matches), and
  scripts/cel_spec_npm/to_textproto.cjs writes the tests back as text format, the
  shape of cel-spec's own files.
- a local copy of google/cel-spec: a checkout (a directory with tests/simple/testdata/)
  or a git directory (bare or .git; files are read from REF, HEAD by default).

Either way the directory gets the files the runner runs, a LICENSE, CEL_SPEC_COMMIT (the
cel-spec commit or tag the data is from, which --write-floors records) and SOURCE (where
it came from). The tests read only this local copy.

    python scripts/refresh_cel_spec.py --npm
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
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "tests" / "conformance" / "cel" / "testdata"
SRC = "tests/simple/testdata"
NPM_SRC = ROOT / "scripts" / "cel_spec_npm"
NPM_CACHE = Path(os.environ.get("MOCKKUBE_CEL_SPEC_NPM_DIR") or Path.home() / ".cache" / "mockkube" / "cel-spec-npm")
# a file whose SimpleTestFile name differs from its file name (the npm suites are named by
# the former)
SUITE_NAMES = {"type_deduction": "type_deductions"}
NPM_LICENSE = """\
The files beside this one are google/cel-spec's simple conformance tests
(tests/simple/testdata), Copyright Google LLC and others, licensed under the Apache
License, Version 2.0: http://www.apache.org/licenses/LICENSE-2.0

They were taken from the npm package {package}@{version} (Apache-2.0, Buf Technologies),
which ships cel-spec {cel_spec}'s tests as protobuf messages, and written back as text
format by mockkube's scripts/cel_spec_npm/to_textproto.cjs. The package does not ship
the licence text; cel-spec's LICENSE is the Apache License 2.0 at the address above.
"""

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


def _clear(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for stale in [*dest.glob("*.textproto"), dest / "CEL_SPEC_COMMIT", dest / "SOURCE", dest / "ABSENT"]:
        stale.unlink(missing_ok=True)


def _npm_install() -> Path:
    """node_modules with the pinned packages, installed once into NPM_CACHE."""
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    with open(NPM_CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two refreshes at once install one at a time
        names = ("package.json", "package-lock.json")
        if not (NPM_CACHE / "node_modules" / "@bufbuild" / "cel-spec").is_dir() or any(
            not (NPM_CACHE / n).exists() or (NPM_CACHE / n).read_bytes() != (NPM_SRC / n).read_bytes() for n in names
        ):
            for n in names:
                shutil.copyfile(NPM_SRC / n, NPM_CACHE / n)
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=NPM_CACHE,
                check=True,
                stdout=subprocess.DEVNULL,
                timeout=300,
            )
        shutil.copyfile(NPM_SRC / "to_textproto.cjs", NPM_CACHE / "to_textproto.cjs")
    return NPM_CACHE


def from_npm(dest: Path) -> int:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed (apt-get install nodejs npm)", file=sys.stderr)
            return 1
    try:
        cache = _npm_install()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(f"npm ci of {NPM_SRC / 'package.json'} failed: {exc}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["node", str(cache / "to_textproto.cjs"), tmp], check=True, capture_output=True, text=True
        ).stdout
        info = json.loads(out)
        present = [n for n in FILES if (Path(tmp) / f"{SUITE_NAMES.get(n, n)}.textproto").exists()]
        absent = [n for n in FILES if n not in present]
        _clear(dest)
        for name in present:
            shutil.copyfile(Path(tmp) / f"{SUITE_NAMES.get(name, name)}.textproto", dest / f"{name}.textproto")
    if absent:
        # files newer than the cel-spec release the package holds: recorded, so that the
        # ratchet test skips them by name instead of failing
        (dest / "ABSENT").write_text("".join(f"{n}\n" for n in absent))
        print(
            f"warning: cel-spec {info['celSpec']} in {info['package']}@{info['version']} has no "
            f"{', '.join(absent)}; those files are not run (a cel-spec checkout has them)",
            file=sys.stderr,
        )
    (dest / "LICENSE").write_text(
        NPM_LICENSE.format(package=info["package"], version=info["version"], cel_spec=info["celSpec"])
    )
    (dest / "CEL_SPEC_COMMIT").write_text(f"{info['celSpec']}\n")
    (dest / "SOURCE").write_text(f"npm {info['package']}@{info['version']} (cel-spec {info['celSpec']})\n")
    print(
        f"wrote {len(present)} files and LICENSE to {dest} "
        f"(npm {info['package']}@{info['version']}, cel-spec {info['celSpec']})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, nargs="?", help="a cel-spec checkout or git directory")
    ap.add_argument("--npm", action="store_true", help="take the tests from the npm package @bufbuild/cel-spec instead")
    ap.add_argument(
        "--ref",
        default=None,
        help="read from this commit/tag of a git directory "
        "(default: the checkout's files, or HEAD of a bare git directory)",
    )
    ap.add_argument("--dest", type=Path, default=DEST)
    args = ap.parse_args(argv)
    if args.npm == (args.source is not None):
        ap.error("give a cel-spec checkout or git directory, or --npm")
    if args.npm:
        return from_npm(args.dest)

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

    _clear(args.dest)
    for name in FILES:
        (args.dest / f"{name}.textproto").write_bytes(read(f"{SRC}/{name}.textproto"))
    (args.dest / "LICENSE").write_bytes(read("LICENSE"))
    commit = ""
    if gitdir is not None:
        commit = _git(gitdir, "rev-parse", args.ref or "HEAD").decode().strip()
    (args.dest / "CEL_SPEC_COMMIT").write_text((commit or "unknown (copied from a checkout)") + "\n")
    kind = "checkout" if worktree is not None else "git directory"
    (args.dest / "SOURCE").write_text(f"cel-spec {kind} {args.source.resolve()} ({commit or 'commit unknown'})\n")
    print(f"copied {len(FILES)} files and LICENSE to {args.dest} (cel-spec {commit or 'checkout'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
