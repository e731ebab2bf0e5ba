"""The bench history: one line per run with each figure beside its ratio to the floor of the
same run, and change points found by E-Divisive with the commits where they appear and their
size with its interval; arena history --check exits 1 on a change the latest run makes appear
(synthetic histories whose answer is known); a server the arena did not build (--cmd, --url)
in a series of its own stamped with its own commit, or left out without one."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.analysis import history
from arena.core.model import InstructionCount, Run
from arena.entries.outside import outside_entry
from arena.entries.remote import remote_entry
from arena.report.trend import page
from arena.workflows.bench import Version, append_history


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
    found = history.changes(lines, absolute=True)
    assert [(c.metric, c.commit) for c in found] == [("rps", "c12")]
    assert "worse" in found[0].words() and "in commits c11..c12" in found[0].words()
    assert found[0].words().startswith("rust keepalive requests/s: 149,591 → 117,918 (-21.2%, 95% CI -2")


def test_level_series_rarely_show_a_change():
    """20 histories of 16 runs drawn from one distribution: E-Divisive at p < 0.01 flags a
    change in a few at most (each has 15 places a change could be)."""
    rng = np.random.default_rng(8)
    flagged = sum(bool(history.change_points(list(rng.normal(150_000, 3_000, 16)))) for _ in range(20))
    assert flagged <= 2


def test_quick_runs_are_left_out():
    lines = [line(i, 150_000.0, 700.0) for i in range(10)] + [line(10 + i, 10.0, 700.0, quick=True) for i in range(5)]
    assert history.changes(lines, absolute=True) == []
    assert [c.run_id for c in history.changes(lines, include_quick=True, absolute=True)] == ["run10"]


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


FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


def with_floor(doc: dict, floor_rps_factor: float) -> Run:
    """The fixture run with a floor: nginx-lua's record and samples again as entry "floor",
    kind floor, its requests/s multiplied by floor_rps_factor."""
    doc = copy.deepcopy(doc)
    peer = next(e for e in doc["entries"] if e["name"] == "nginx-lua")
    doc["entries"].append(dict(copy.deepcopy(peer), name="floor", kind="floor", tier=None))
    for s in [s for s in doc["samples"] if s["entry"] == "nginx-lua"]:
        doc["samples"].append(dict(copy.deepcopy(s), entry="floor", rps=s["rps"] * floor_rps_factor))
    return Run.load(doc)


def test_each_figure_is_written_beside_its_ratio_to_the_floor_of_the_same_run(tmp_path):
    run = with_floor(json.loads(FIXTURE.read_text()), 2.0)
    figures = history.summary(run, "c0", False)["entries"]
    rust, floor = figures["rust"]["keepalive"], figures["floor"]["keepalive"]
    assert rust["rps_of_floor"] == pytest.approx(rust["rps"] / floor["rps"])
    assert rust["cpu_of_floor"] == pytest.approx(rust["cpu_us_per_req"] / floor["cpu_us_per_req"])
    assert "rps_of_floor" not in floor  # the floor is its own: no ratio
    assert rust["cpu_of_floor_lo"] < rust["cpu_of_floor"] < rust["cpu_of_floor_hi"]  # its 3 repetitions, paired
    assert history.summary(run, "c0", False)["tiers"]["floor"] == "floor"


def ratio_line(i: int, machine: float, cost: float, quick: bool = False) -> dict:
    """A run on a machine `machine` times slower than the first, the entry `cost` times the floor."""
    return {
        "run_id": f"run{i:02d}",
        "commit": f"c{i:02d}",
        "quick": quick,
        "entries": {"rust": {"keepalive": {"cpu_us_per_req": 5.0 * machine * cost, "cpu_of_floor": cost}}},
    }


def test_a_new_runner_moves_the_absolute_figures_not_the_ratio_and_the_code_moves_the_ratio():
    rng = np.random.default_rng(3)
    machines = [1.0] * 12 + [1.6] * 12  # the CI's runner changed at run 12
    costs = [1.3] * 18 + [1.0] * 6  # the code got cheaper at run 18
    lines = [ratio_line(i, m, c * rng.normal(1, 0.01)) for i, (m, c) in enumerate(zip(machines, costs, strict=True))]
    (found,) = history.changes(lines)
    assert (found.metric, found.commits, found.better) == ("cpu_of_floor", "c17..c18", True)
    assert found.lo <= found.ratio <= found.hi < 0.8 and found.absolute[1] == pytest.approx(8.0, rel=0.05)
    assert "in commits c17..c18" in found.words() and "95% CI -2" in found.words()
    assert [c.commit for c in history.changes(lines, absolute=True)] == ["c12", "c18"]  # the runner too


def arena_history(path: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "arena.cli", "history", "--file", str(path), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_check_exits_1_when_the_latest_run_makes_a_change_appear_and_0_when_it_was_known(tmp_path):
    rng = np.random.default_rng(4)
    costs = [1.0] * 12 + [1.3, 1.3]  # worse from run 12: the latest run (13) makes it show
    lines = [ratio_line(i, 1.0, c * rng.normal(1, 0.01)) for i, c in enumerate(costs)]
    new = arena_history(write(tmp_path / "h.jsonl", lines), "--check")
    assert new.returncode == 1, new.stdout + new.stderr
    assert "new at the latest run" in new.stdout and "rust keepalive CPU per request ÷ the floor's" in new.stdout
    assert "worse" in new.stdout and "in commits c11..c12" in new.stdout and "95% CI" in new.stdout
    assert "[CPU µs per request 5" in new.stdout  # the absolute figure beside, printed as is (not as markup)
    later = lines + [ratio_line(14 + i, 1.0, 1.3 * rng.normal(1, 0.01)) for i in range(3)]
    known = arena_history(write(tmp_path / "h2.jsonl", later), "--check")
    assert known.returncode == 0, known.stdout + known.stderr
    assert "in commits c11..c12" in known.stdout  # still listed, no longer new
    steady = arena_history(write(tmp_path / "h3.jsonl", lines[:12]), "--check")
    assert steady.returncode == 0 and "0 changes" in steady.stdout


def test_an_instruction_count_changes_where_it_steps_beyond_one_percent_even_for_a_single_run():
    counts = [2633.6, 1999.4, 1999.5, 1999.4, 1568.8, 1337.5, 1329.2, 1329.6, 1329.5]  # replayed rust, keep-alive
    lines = [
        {"run_id": f"b{i}", "commit": f"c{i}", "entries": {"rust": {"keepalive": {"instructions_of_floor": c / 822}}}}
        for i, c in enumerate(counts)
    ]
    found = history.changes(lines)
    assert [c.commits for c in found] == ["c0..c1", "c3..c4", "c4..c5"]  # 9a25a5f's -0.6% is within the 1%
    assert found[0].lo is None and "a count: beyond 1%" in found[0].words()


def outside_run(doc: dict, name: str) -> Run:
    """The fixture run with a floor (nginx-lua's samples again) and rust's record and samples
    again as `name`: a server the arena did not build (--cmd, --url), measured beside."""
    run_doc = copy.deepcopy(doc)
    rust = next(e for e in run_doc["entries"] if e["name"] == "rust")
    run_doc["entries"].append(dict(copy.deepcopy(rust), name=name, kind="peer", tier=None))
    run_doc["samples"] += [dict(copy.deepcopy(s), entry=name) for s in run_doc["samples"] if s["entry"] == "rust"]
    return with_floor(run_doc, 2.0)


def test_a_cmd_runs_history_line_carries_the_services_commit_not_the_repositorys():
    run = outside_run(json.loads(FIXTURE.read_text()), "cmd")
    service = history.Service("cmd", "./renard --listen {listen}", "5e41ce" * 6, dirty=True)
    line = history.summary(run, "c0", False, {"cmd": service})
    series = "cmd ./renard --listen {listen}"
    assert "cmd" not in line["entries"] and series in line["entries"]
    assert line["services"] == {
        series: {"commit": "5e41ce" * 6, "dirty": True, "measured": "--cmd " + service.measured}
    }
    assert line["entries"][series]["keepalive"]["cpu_of_floor"] == pytest.approx(
        line["entries"]["rust"]["keepalive"]["cpu_of_floor"]
    )
    assert history.commit_of_series(line, series) == "5e41ce" * 6 and history.commit_of_series(line, "rust") == "c0"
    assert line["tiers"][series] == "peer" and "cmd" not in line["tiers"]


def test_a_server_left_out_of_a_line_still_has_its_floor_divide_the_others_and_no_series():
    run = outside_run(json.loads(FIXTURE.read_text()), "url")
    service = history.Service("url", "http://127.0.0.1:8080/", "v1.2.0")
    beside = [e.name for e in run.entries if e.name != "url"]
    line = history.summary(run, "c0", False, {"url": service}, left_out=beside)
    assert list(line["entries"]) == ["url http://127.0.0.1:8080/"]
    assert line["entries"]["url http://127.0.0.1:8080/"]["keepalive"]["cpu_of_floor"] > 0  # the floor measured beside
    bare = history.summary(run, "c0", False, left_out=["url"])
    assert "url" not in bare["entries"] and "services" not in bare and "rust" in bare["entries"]


def service_line(i: int, cost: float, service_commit: str) -> dict:
    """A --cmd run of renard's commit r<i> whose service (a flagship built elsewhere) is at
    service_commit and costs `cost` times the floor; the repository's rust, named alike, 1.0×."""
    series = "cmd bin/renard --listen {listen}"
    return {
        "run_id": f"run{i:02d}",
        "commit": f"r{i:02d}",
        "entries": {"rust": {"keepalive": {"cpu_of_floor": 1.0}}, series: {"keepalive": {"cpu_of_floor": cost}}},
        "services": {
            series: {"commit": service_commit, "dirty": False, "measured": "--cmd bin/renard --listen {listen}"}
        },
    }


def test_a_services_change_is_named_by_its_own_commits_and_never_mixed_with_the_entry_of_its_name():
    rng = np.random.default_rng(9)
    lines = [service_line(i, (1.4 if i < 8 else 1.0) * rng.normal(1, 0.01), f"s{i // 8}") for i in range(16)]
    (found,) = history.changes(lines)
    assert found.entry == "cmd bin/renard --listen {listen}" and found.commits == "s0..s1" and found.service
    assert history.changes(lines, ["rust"]) == []  # the repository's rust is its own series, steady
    (trend,) = [t for t in history.trends(lines) if t.entry == found.entry]
    assert {p.commit for p in trend.points} == {"s0", "s1"}
    shown = page(history.trends(lines), "h.jsonl", "https://example.invalid/commit/{commit}")
    assert "example.invalid/commit/s1" not in shown  # its commits are not this repository's: not linked


def test_without_a_version_a_cmd_server_is_left_out_of_the_history_and_a_url_run_is_not_appended(tmp_path):
    doc = json.loads(FIXTURE.read_text())
    append_history(outside_run(doc, "cmd"), tmp_path, tmp_path, [outside_entry("srv --port {port}")], None)
    (line,) = history.read(tmp_path / history.FILE)
    assert "cmd" not in line["entries"] and "rust" in line["entries"] and "services" not in line
    by_url = outside_run(doc, "url")
    append_history(by_url, tmp_path, tmp_path, [remote_entry("http://127.0.0.1:9/")], None)
    assert len(history.read(tmp_path / history.FILE)) == 1
    append_history(by_url, tmp_path, tmp_path, [remote_entry("http://127.0.0.1:9/")], Version("v2.0.1"))
    latest = history.read(tmp_path / history.FILE)[-1]
    assert list(latest["entries"]) == ["url http://127.0.0.1:9/"] and latest["services"]["url http://127.0.0.1:9/"] == {
        "commit": "v2.0.1",
        "dirty": False,
        "measured": "--url http://127.0.0.1:9/",
    }
