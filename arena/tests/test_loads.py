"""arena sweep and arena latency: the knee, the rates where p99 passes 1 and 10 ms, oha's
JSON read, and their reports (synthetic results: no load is generated here)."""

import json
from pathlib import Path

from arena.core.model import Run
from arena.curves.latency import Latency, point
from arena.curves.sweep import Step, Sweep, levels
from arena.report import write_run_reports
from arena.report.loads import latency_report, sweep_report, write_json


def steps(rows):
    return [Step(c, rps, 50.0, p99, p99 * 2, 0) for c, rps, p99 in rows]


def test_levels_double_from_one_up_to_the_top():
    assert levels(4096) == [2**k for k in range(13)]
    assert levels(100) == [1, 2, 4, 8, 16, 32, 64]


def test_the_knee_is_where_p99_doubles_its_low_load_value():
    s = Sweep("x", steps([(1, 10_000, 100), (2, 20_000, 120), (4, 40_000, 190), (8, 60_000, 250)]))
    assert s.knee.connections == 8 and "2.5×" in s.knee_words()


def test_the_knee_is_where_throughput_stops_rising():
    s = Sweep("x", steps([(1, 10_000, 100), (2, 20_000, 110), (4, 20_500, 120)]))
    assert s.knee.connections == 4 and "no more gain" in s.knee_words()


def test_no_knee_in_range_is_said():
    s = Sweep("x", steps([(1, 10_000, 100), (2, 20_000, 110)]))
    assert s.knee is None and s.knee_words() == "no knee up to the last step"


OHA = {
    "summary": {"requestsPerSec": 9_990.0, "slowest": 0.0123},
    "latencyPercentiles": {"p50": 0.0001, "p90": 0.0002, "p99": 0.0015, "p99.9": 0.004, "p99.99": 0.011},
    "statusCodeDistribution": {"302": 49_900, "400": 2},
    "errorDistribution": {"connection closed": 3, "aborted due to deadline": 40},
}


def test_oha_seconds_become_microseconds_and_non_302_answers_are_counted():
    p = point(0.5, 10_000, OHA)
    assert p.latency_us["p50"] == 100.0 and p.latency_us["p99"] == 1500.0 and p.latency_us["max"] == 12300.0
    assert p.failed == 5 and p.achieved == 9_990.0
    assert p.curve()[0] == (2.0, 100.0)


def test_the_rate_where_p99_passes_a_threshold_is_the_lowest_such_rate():
    fast = dict(OHA, latencyPercentiles=dict(OHA["latencyPercentiles"], p99=0.0005))
    r = Latency("x", 20_000, [point(0.25, 5_000, fast), point(0.5, 10_000, OHA), point(0.9, 18_000, OHA)])
    assert r.passes_words(1_000) == "50% (10,000/s)"
    assert r.passes_words(10_000) == "not up to 90%"


def test_the_reports_hold_a_table_and_a_chart_per_result(tmp_path):
    s = Sweep("rust<script>", steps([(1, 10_000, 100), (2, 20_000, 300)]))
    md, page = sweep_report([s], tmp_path, "intro")
    assert "| rust&lt;script&gt; | knee at 2 connections" in md.read_text()
    assert page.read_text().count("<svg") == 2 and "<script>" not in page.read_text()
    r = Latency("floor", 20_000, [point(0.5, 10_000, OHA)])
    md, page = latency_report([r], tmp_path, "intro")
    assert "| floor | 20,000 | 50% (10,000/s) | not up to 50% |" in md.read_text()
    assert "latency by percentile" in page.read_text()


def test_results_read_back_as_they_were_written():
    s = Sweep("rust", steps([(1, 10_000, 100), (2, 20_000, 300)]), "at 4 connections: wrk exited 1", 10)
    r = Latency("java-seed", 20_000, [point(0.5, 10_000, OHA)], 10)
    assert (Sweep.load(s.to_json()), Latency.load(r.to_json())) == (s, r)


def write_loads(run_dir, latency=True, sweep=True):
    """A sweep of two entries (rust's knee at 4 connections) and a latency of one, written as
    `arena sweep --run` and `arena latency --run` write them."""
    if sweep:
        (run_dir / "sweep").mkdir()
        sweeps = [
            Sweep("rust", steps([(1, 10_000, 100), (2, 20_000, 120), (4, 40_000, 400), (8, 41_000, 900)])),
            Sweep("java-seed", steps([(1, 5_000, 200), (2, 9_000, 210), (4, 9_100, 230)]), warmup_s=10),
        ]
        write_json(run_dir / "sweep", "sweep", "sweep method words", 2, sweeps)
        sweep_report(sweeps, run_dir / "sweep", "sweep method words")
    if latency:
        (run_dir / "latency").mkdir()
        results = [Latency("floor", 20_000, [point(0.25, 5_000, OHA), point(0.5, 10_000, OHA)])]
        write_json(run_dir / "latency", "latency", "latency method words", 5, results)
        latency_report(results, run_dir / "latency", "latency method words")


def run_sample():
    return Run.load(json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text()))


def test_a_runs_report_includes_the_sweep_and_latency_written_into_its_directory(tmp_path):
    _, md, page = write_run_reports(run_sample(), tmp_path)
    assert "## Saturation" not in md.read_text() and "## Latency at fixed rates" not in md.read_text()
    write_loads(tmp_path)
    _, md, page = write_run_reports(run_sample(), tmp_path)
    text, html = md.read_text(), page.read_text()
    latency_at = text.index("## Latency at fixed rates (oha, open loop)\n\nlatency method words")
    sweep_at = text.index("## Saturation: requests/s and p99 against concurrency\n\nsweep method words")
    assert text.index("## Requests per second") < latency_at < sweep_at < text.index("## Footprint")
    assert "| floor | 20,000 | 25% (5,000/s) | not up to 50% |" in text  # where p99 passes 1 and 10 ms
    assert "| rust | knee at 4 connections (p99 4.0× its low-load value) | 41,000 | 8 | 4 |" in text
    assert "| java-seed | knee at 4 connections (no more gain) |" in text
    assert "### java-seed\n\n| connections | requests/s |" in text and "[sweep/report.html](sweep/report.html)" in text
    # the same tables as the sweep's own report: one rendering, not a second copy
    own = (tmp_path / "sweep" / "report.md").read_text()
    knee_table = own[own.index("| entry | knee |") : own.index("## rust")].strip()
    assert knee_table in text
    # the HTML: the curves per entry and both sweep charts, each entry's knee circled on both
    assert html.count('<svg class="chart" xmlns') == 3 and "floor: latency by percentile at a fixed rate" in html
    assert html.count('<circle class="mark"') == 4 and "rust: knee at 4 connections" in html
    assert 'href="latency/report.html"' in html and 'href="sweep/report.html"' in html


def test_a_run_with_only_one_of_them_includes_that_one(tmp_path):
    write_loads(tmp_path, sweep=False)
    _, md, _ = write_run_reports(run_sample(), tmp_path)
    assert "## Latency at fixed rates" in md.read_text() and "## Saturation" not in md.read_text()


def test_results_that_cannot_be_read_are_said_not_skipped(tmp_path):
    write_loads(tmp_path)
    (tmp_path / "sweep" / "sweep.json").write_text('{"sweeps": [{"entry": "rust"}]}')
    _, md, _ = write_run_reports(run_sample(), tmp_path)
    assert "sweep/sweep.json could not be read (SchemaError: steps: missing key)" in md.read_text()
    assert "| floor | 20,000 |" in md.read_text()  # the latency is still there
