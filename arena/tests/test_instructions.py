"""Instructions per request under callgrind: the count repeats, the floor costs
less than the flagship, and the record goes through run.json and into the report."""

from pathlib import Path

import pytest

from arena.core.model import InstructionCount, Run
from arena.counts import instructions
from arena.entries.build import build, needs_build
from arena.entries.manifest import discover, select

REPO = Path(__file__).resolve().parents[2]
REQUESTS = 320  # N: the runs serve 320 and 3 200 requests, a few seconds under callgrind


def test_the_count_is_the_difference_of_two_runs_over_nine_n(monkeypatch, tmp_path):
    totals = iter([1_000_000, 1_000_000 + 9 * 320 * 700])
    monkeypatch.setattr(instructions, "callgrind_run", lambda *args: next(totals))
    entry = select(discover(REPO), ["floor"])[0]
    count = instructions.count(entry, "pipeline16", REQUESTS)
    assert count.per_request == 700 and count.requests == REQUESTS and count.annotation is None


def test_a_count_goes_through_run_json(run_doc):
    run = Run.load(run_doc)
    run.entries[0].instructions = [InstructionCount("keepalive", 320, 690.5, 10, 20, "profiles/x.txt")]
    again = Run.load(run.to_json())
    assert again.entries[0].instructions == run.entries[0].instructions


@pytest.fixture
def run_doc() -> dict:
    import json

    return json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text())


def built(name: str):
    entry = select(discover(REPO), [name])[0]
    if not entry.available:
        pytest.skip(f"{name}: {entry.reason}")
    if needs_build(entry) and not build(entry, None).ok:
        pytest.fail(f"{name} does not build")
    return entry


@pytest.fixture(scope="module")
def native():
    if instructions.available():
        pytest.skip(instructions.available())
    return {name: built(name) for name in ("floor", "rust")}


@pytest.mark.parametrize("mode", ["pipeline16", "keepalive"])
def test_counts_repeat_within_half_a_percent_and_the_floor_costs_less_than_the_flagship(native, mode, tmp_path):
    floor = [instructions.count(native["floor"], mode, REQUESTS).per_request for _ in range(2)]
    rust = [instructions.count(native["rust"], mode, REQUESTS, keep=tmp_path).per_request for _ in range(2)]
    for counts in (floor, rust):
        assert abs(counts[0] - counts[1]) <= 0.005 * min(counts), counts
    assert max(floor) < min(rust)
    assert "PROGRAM TOTALS" in (tmp_path / f"rust.{mode}.callgrind.txt").read_text()


def test_the_report_shows_the_count_and_its_ratio_to_the_floor(run_doc):
    from arena.report import build as build_view
    from arena.report import markdown

    run = Run.load(run_doc)
    floor = run.entries[0]
    floor.kind = "floor"
    floor.instructions = [InstructionCount("keepalive", 320, 500.0, 1, 2, "profiles/floor.keepalive.callgrind.txt")]
    run.entries[1].instructions = [InstructionCount("keepalive", 320, 750.0, 1, 2)]
    text = markdown.render(build_view(run))
    assert "## Instructions per request" in text
    assert f"| 750 | 1.50× {floor.name} |" in text  # the ratio names the floor it divides by
    assert "(profiles/floor.keepalive.callgrind.txt)" in text
