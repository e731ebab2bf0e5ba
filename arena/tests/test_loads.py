"""arena sweep and arena latency: the knee, the rates where p99 passes 1 and 10 ms, oha's
JSON read, and their reports (synthetic results: no load is generated here)."""

from arena.latency import Latency, point
from arena.report.loads import latency_report, sweep_report
from arena.sweep import Step, Sweep, levels


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


def test_a_runs_report_links_the_sweep_and_latency_written_into_its_directory(tmp_path):
    import json
    from pathlib import Path

    from arena.model import Run
    from arena.report import write_run_reports

    run = Run.load(json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text()))
    _, md, page = write_run_reports(run, tmp_path)
    assert "Latency and saturation" not in md.read_text()
    (tmp_path / "sweep").mkdir()
    sweep_report([Sweep("rust", steps([(1, 10_000, 100)]))], tmp_path / "sweep", "intro")
    _, md, page = write_run_reports(run, tmp_path)
    assert "](sweep/report.html)" in md.read_text() and 'href="sweep/report.html"' in page.read_text()
    assert "latency/report.html" not in md.read_text()
