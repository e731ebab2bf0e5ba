"""The bench history: one line per run, and change points found by E-Divisive with the run
and commit where they appear (synthetic histories whose answer is known)."""

import json
from pathlib import Path

import numpy as np

from arena.analysis import history
from arena.core.model import InstructionCount, Run


def line(i: int, rps: float, instructions: float, quick: bool = False) -> dict:
    return {
        "run_id": f"run{i:02d}",
        "finished": "2026-11-22T00:00:00Z",
        "commit": f"c{i:02d}",
        "dirty": False,
        "quick": quick,
        "entries": {"rust": {"keepalive": {"rps": rps, "instructions": instructions}}},
    }


def test_a_twenty_percent_drop_is_found_at_its_commit():
    rng = np.random.default_rng(7)
    values = list(rng.normal(150_000, 3_000, 12)) + list(rng.normal(120_000, 3_000, 12))
    lines = [line(i, v, 700.0) for i, v in enumerate(values)]
    found = history.changes(lines)
    assert [(c.metric, c.commit) for c in found] == [("rps", "c12")]
    assert "worse" in found[0].words() and "commit c12" in found[0].words()


def test_level_series_rarely_show_a_change():
    """20 histories of 16 runs drawn from one distribution: E-Divisive at p < 0.01 flags a
    change in a few at most (each has 15 places a change could be)."""
    rng = np.random.default_rng(8)
    flagged = sum(bool(history.change_points(list(rng.normal(150_000, 3_000, 16)))) for _ in range(20))
    assert flagged <= 2


def test_quick_runs_are_left_out():
    lines = [line(i, 150_000.0, 700.0) for i in range(10)] + [line(10 + i, 10.0, 700.0, quick=True) for i in range(5)]
    assert history.changes(lines) == []
    assert [c.run_id for c in history.changes(lines, include_quick=True)] == ["run10"]


def test_a_bench_appends_one_line_with_its_figures(tmp_path):
    doc = json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text())
    run = Run.load(doc)
    run.entries[0].instructions = [InstructionCount("keepalive", 320, 690.0, 1, 2)]
    path = history.append(run, tmp_path, tmp_path)
    history.append(run, tmp_path, tmp_path)
    lines = history.read(path)
    assert len(lines) == 2 and lines[0]["run_id"] == run.run_id and lines[0]["commit"] is None
    assert lines[0]["entries"]["rust"]["keepalive"]["instructions"] == 690.0
    assert lines[0]["entries"]["rust"]["keepalive"]["rps"] > 0
