"""The bench history: one line per run, and change points found by E-Divisive with the run
and commit where they appear (synthetic histories whose answer is known)."""

import json
from pathlib import Path

import numpy as np

from arena import history
from arena.model import InstructionCount, Run


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


def test_a_level_series_has_no_change_and_quick_runs_are_left_out():
    rng = np.random.default_rng(8)
    lines = [line(i, v, 700.0) for i, v in enumerate(rng.normal(150_000, 3_000, 20))]
    lines += [line(20 + i, 10.0, 700.0, quick=True) for i in range(5)]
    assert history.changes(lines) == []


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
