"""cel-spec's simple conformance tests against mockkube's CEL engine, as a ratchet: each
file's pass rate must stay at or above the floor recorded in floors.json (raise the
floors with ``python -m tests.conformance.cel.run --write-floors`` when the engine gets
better). Skipped when the cel-spec data is not present (testdata/README.md); a file that
the data's source lacks (recorded in its ABSENT, e.g. network_ext before cel-spec v0.25.2)
is skipped by name."""

from __future__ import annotations

import json
import math

import pytest

from . import runner
from .mockkube_backend import MockkubeBackend
from .run import FLOORS


@pytest.fixture(scope="module")
def summaries() -> dict[str, runner.FileSummary]:
    data = runner.data_dir()
    cases = runner.load_all(data)
    if not cases:
        pytest.skip(f"no cel-spec data in {data} (see tests/conformance/cel/testdata/README.md)")
    b = MockkubeBackend()
    return {s.file: s for s in runner.summarize({f: runner.run(cs, b) for f, cs in cases.items()})}


def _floors() -> dict[str, dict]:
    return json.loads(FLOORS.read_text())["files"]


def test_every_file_has_a_floor(summaries: dict[str, runner.FileSummary]) -> None:
    floors = _floors()
    assert sorted(summaries) == sorted(set(floors) - set(runner.absent())), (
        "the data files and floors.json disagree; run python -m tests.conformance.cel.run --write-floors"
    )


@pytest.mark.parametrize("file", sorted(_floors()))
def test_pass_rate_does_not_regress(summaries: dict[str, runner.FileSummary], file: str) -> None:
    if file not in summaries and file in runner.absent():
        pytest.skip(f"{file}.textproto is not in the data ({runner.source()}); a cel-spec checkout has it")
    if file not in summaries:
        pytest.fail(f"{file}.textproto is missing from the data")
    floor = _floors()[file]
    floor_run = floor["tests"] - floor["skipped"]
    floor_rate = floor["passed"] / floor_run if floor_run else 1.0
    s = summaries[file]
    assert s.rate >= floor_rate - 1e-9, (
        f"{file}: {s.passed}/{s.run} passed ({100 * s.rate:.1f}%), below the floor "
        f"{floor['passed']}/{floor_run} ({100 * floor_rate:.1f}%); "
        f"see python -m tests.conformance.cel.run -v --file {file}"
    )
    assert not math.isnan(s.rate)
