"""`arena compare`: runs from two machines read against their own floor, on the server's CPU per
request where every sample has it, else on requests/s; the order of each later run set against
the first's (rank correlation, pairs swapped beyond both ranges); a run without a floor is
refused rather than ranked on absolute figures."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import FIXTURE, with_floor, with_uring_floor

from arena.core.model import Run
from arena.workflows import crossrun


def without_cpu(doc: dict) -> dict:
    """A run from before the CPU counters: its modes compare on requests/s."""
    for s in doc["samples"]:
        s["cpu_us_per_req"] = None
        s.pop("cgroup_cpu_s", None)
    return doc


def synthetic(scale: float, run_id: str, cpu: str) -> dict:
    """The report's fixture with a floor, every requests/s multiplied by scale, on another CPU;
    without CPU figures (requests/s compared)."""
    doc = without_cpu(with_floor(json.loads(FIXTURE.read_text(encoding="utf-8"))))
    doc = copy.deepcopy(doc)
    doc["run_id"] = run_id
    doc["machine"]["cpu_model"] = cpu
    doc["machine"]["tools"]["wrk"] = "4.2.0" if scale > 1 else "4.1.0"
    for s in doc["samples"]:
        s["rps"] = s["rps"] * scale
    return doc


def write(tmp_path: Path, doc: dict) -> Path:
    folder = tmp_path / doc["run_id"]
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(doc))
    return folder


def test_two_machines_twice_apart_agree_on_every_ratio_to_their_floor():
    slow = Run.load(synthetic(1.0, "20261101-000000", "AMD EPYC 7B13"))
    fast = Run.load(synthetic(2.0, "20261102-000000", "Apple M9"))
    comparison = crossrun.compare([slow, fast])
    assert comparison.modes == ["keepalive", "pipeline16", "close"]
    for mode_name in comparison.modes:
        for line in comparison.lines[mode_name]:
            a, b = line.cells
            assert b.rps == pytest.approx(2 * a.rps)
            assert b.of_floor == pytest.approx(a.of_floor) and line.agree, line
            assert line.verdict().startswith("agree")
    assert any(
        d.startswith("cpu model: 20261101-000000 AMD EPYC 7B13; 20261102-000000 Apple M9")
        for d in comparison.differences
    )
    assert any(d.startswith("wrk: ") for d in comparison.differences)
    ranks = [line.entry for line in comparison.lines["keepalive"]]
    assert ranks[0] == max(ranks, key=lambda name: slow_rps(slow, name))


def slow_rps(run: Run, name: str) -> float:
    values = [s.rps for s in run.samples if s.entry == name and s.mode == "keepalive"]
    return sorted(values)[len(values) // 2] if values else 0.0


def test_a_ratio_that_moves_is_said_to_differ():
    a = synthetic(1.0, "20261101-000000", "x")
    b = synthetic(1.0, "20261102-000000", "x")
    for s in b["samples"]:
        if s["entry"] == "rust":
            s["rps"] *= 1.5
    comparison = crossrun.compare([Run.load(a), Run.load(b)])
    rust = next(line for line in comparison.lines["keepalive"] if line.entry == "rust")
    assert not rust.agree and rust.verdict() == "differ: 1.50× apart"


def test_a_run_without_a_floor_is_refused():
    with_one = Run.load(synthetic(1.0, "20261101-000000", "x"))
    without = json.loads(FIXTURE.read_text(encoding="utf-8"))
    with pytest.raises(crossrun.CompareError, match="has no floor"):
        crossrun.compare([with_one, Run.load(without)])


def test_arena_compare_reads_two_run_directories(tmp_path):
    one = write(tmp_path, synthetic(1.0, "20261101-000000", "AMD EPYC 7B13"))
    two = write(tmp_path, synthetic(2.0, "20261102-000000", "Apple M9"))
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "compare", str(one), str(two), "--markdown", str(tmp_path / "c.md")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    written = (tmp_path / "c.md").read_text()
    assert "## keepalive" in written and "| 1 | " in written and "agree (within 0%)" in written
    assert "cpu model: 20261101-000000 AMD EPYC 7B13; 20261102-000000 Apple M9" in p.stdout
    assert "keepalive rust: agree" in p.stdout and "differ:" not in p.stdout
    assert "the runs agree: every ratio to the floor within 10%" in p.stdout


def test_arena_compare_refuses_a_run_without_a_floor_with_one_line(tmp_path):
    one = write(tmp_path, synthetic(1.0, "20261101-000000", "x"))
    bare = json.loads(FIXTURE.read_text(encoding="utf-8"))
    bare["run_id"] = "20261103-000000"
    two = write(tmp_path, bare)
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "compare", str(one), str(two)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 1 and p.stderr.startswith("Error: run 20261103-000000 has no floor")


def test_each_entry_is_read_against_the_floor_of_its_mechanism_in_each_run():
    runs = []
    for scale, run_id in ((1.0, "20261101-000000"), (2.0, "20261102-000000")):
        doc = without_cpu(with_uring_floor(json.loads(FIXTURE.read_text(encoding="utf-8"))))
        doc["run_id"] = run_id
        for s in doc["samples"]:
            s["rps"] *= scale
        runs.append(Run.load(doc))
    comparison = crossrun.compare(runs)
    lines = {line.entry: line for line in comparison.lines["keepalive"]}
    assert "floor-uring" not in lines and "floor" not in lines  # floors are divisors, not rows
    rust = lines["rust"].cells[0]
    assert (rust.floor, rust.of_floor) == ("floor-uring", pytest.approx(1 / 1.6))
    assert lines["nginx-lua"].cells[1].floor == "floor"
    rows = {row[1]: row for row in crossrun.table(comparison, "keepalive").rows}
    assert f"{rust.of_floor:.3f} floor-uring" in rows["rust"] and "0.731 floor" in rows["nginx-lua"]


def cpu_run(run_id: str, cpu_us: dict[str, list[float]]) -> Run:
    """The fixture with a floor, each entry's CPU µs per request per repetition as given."""
    doc = with_floor(json.loads(FIXTURE.read_text(encoding="utf-8")))
    doc["run_id"] = run_id
    rust = [s for s in doc["samples"] if s["mode"] == "keepalive" and s["entry"] == "rust"]
    doc["samples"] = [dict(s, entry=name, cpu_us_per_req=cpu_us[name][s["rep"]]) for name in cpu_us for s in rust]
    known = {e["name"] for e in doc["entries"]}
    model = next(e for e in doc["entries"] if e["name"] == "rust")
    doc["entries"] += [dict(model, name=name) for name in cpu_us if name not in known]
    doc["config"]["modes"] = ["keepalive"]
    return Run.load(doc)


def test_modes_with_the_servers_cpu_compare_on_it_fewer_microseconds_better():
    one = cpu_run("20261101-000000", {"floor": [4.0, 4.0, 4.0], "rust": [5.0, 5.0, 5.0], "nginx-lua": [8.0] * 3})
    two = cpu_run("20261102-000000", {"floor": [2.0, 2.0, 2.0], "rust": [2.5, 2.5, 2.5], "nginx-lua": [4.0] * 3})
    comparison = crossrun.compare([one, two])
    assert comparison.figure["keepalive"] == crossrun.CPU
    lines = {line.entry: line for line in comparison.lines["keepalive"]}
    assert [c.of_floor for c in lines["rust"].cells] == [pytest.approx(0.8), pytest.approx(0.8)]
    assert lines["rust"].cells[1].of_reference == pytest.approx(4.0 / 2.5) and lines["rust"].agree
    assert [line.entry for line in comparison.lines["keepalive"]] == ["rust", "nginx-lua"]


def test_order_is_compared_by_rank_correlation_and_pairs_swapped_beyond_both_ranges():
    units = {"floor": [4.0, 4.0, 4.0], "nginx-lua": [9.0] * 3}  # the same in both runs
    one = cpu_run("20261101-000000", units | {"rust": [5.0, 5.1, 5.2], "java": [6.0, 6.1, 6.2], "go": [7.0, 7.1, 7.2]})
    # java and go swap beyond both ranges; rust and java come close (their ranges overlap)
    two = cpu_run("20261102-000000", units | {"rust": [5.0, 5.1, 5.9], "java": [5.8, 5.9, 6.0], "go": [5.2, 5.3, 5.4]})
    comparison = crossrun.compare([one, two])
    (rho, n), swaps = comparison.correlation["keepalive"][0], comparison.swaps["keepalive"][0]
    assert n == 4 and rho == pytest.approx(0.8)  # rust java go nginx-lua, then rust go java nginx-lua
    assert swaps == ["java/go"]
    text = crossrun.markdown(comparison)
    assert "rank correlation (Spearman) 0.80 over 4 entries; order changed beyond both runs' ranges: java/go" in text
