"""distribution.py's buckets, and results.csv written by `arena report` for a run
recorded before either existed (the fixture): one row per sample of its run.json."""

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.distribution import Distribution, upper_us
from arena.report.distributions import parts, read

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"


def wrk_line(pairs, percentiles=None) -> dict:
    return {"histogram": pairs, "percentiles": percentiles or {"50": 100, "100": 1000}}


def test_buckets_are_counted_and_twelve_percent_wide():
    # 90 values in bucket 40 (<= 100 µs), 9 in bucket 60 (<= 1 ms), 1 in bucket 80 (<= 10 ms)
    d = Distribution.from_wrk("rust", "keepalive", 0, wrk_line([[40, 90], [60, 9], [80, 1]]))
    assert d.count == 100
    assert upper_us(41) == pytest.approx(100 * 10**0.05)  # 12% wide


def test_repetitions_merge_by_summing_their_buckets():
    a = Distribution.from_wrk("rust", "close", 0, wrk_line([[40, 3], [41, 1]]))
    b = Distribution.from_wrk("rust", "close", 1, wrk_line([[41, 2], [50, 5]]))
    merged = Distribution.merged([a, b])
    assert merged.buckets == {40: 3, 41: 3, 50: 5} and merged.percentiles_us == {}


def test_an_empty_histogram_is_no_distribution():
    assert Distribution.from_wrk("rust", "keepalive", 0, wrk_line([])) is None
    assert Distribution.from_wrk("rust", "keepalive", 0, {}) is None


def test_a_line_round_trips_and_a_foreign_one_is_refused():
    d = Distribution.from_wrk("rust", "keepalive", 2, wrk_line([[30, 7]], {"50": 31, "99.9": 33, "100": 40}))
    again = Distribution.load(json.loads(json.dumps(d.to_json())))
    assert again == d
    with pytest.raises(ValueError, match="per decade"):
        Distribution.load(d.to_json() | {"per_decade": 10})


def test_a_line_that_is_not_one_is_named_by_its_number_and_key(tmp_path):
    good = json.dumps(Distribution.from_wrk("rust", "keepalive", 0, wrk_line([[30, 7]])).to_json())
    bad = good.replace("[[30, 7]]", '[[30, "7"]]')
    (tmp_path / "distributions.jsonl").write_text("\n".join([good, good[:20], bad]) + "\n")  # line 2: cut short
    (part,) = parts(tmp_path)
    assert (
        part.method
        == "distributions.jsonl could not be read (SchemaError: line 3: buckets[0][1]: must be int, got str)."
    )
    (tmp_path / "distributions.jsonl").write_text("\n".join([good, good[:20]]) + "\n")
    assert [d.buckets for d in read(tmp_path)] == [{30: 7}]


def test_report_writes_results_csv_with_the_rows_of_run_json(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(FIXTURE, run_dir / "run.json")
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), "report", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    run = json.loads(FIXTURE.read_text())
    with (run_dir / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(run["samples"]) > 0
    for row, s in zip(rows, run["samples"], strict=True):
        assert (row["entry"], row["mode"], int(row["rep"])) == (s["entry"], s["mode"], s["rep"])
        assert float(row["rps"]) == s["rps"] and float(row["cpu_us_per_req"]) == s["cpu_us_per_req"]
        p99 = s["latency_us"]["p99"]
        assert row["latency_p99_us"] == ("" if p99 is None else str(p99))
        assert row["mix"] == "default"  # a run written before mixes: every request GET /
    assert "Requests sent (--mix default)" in (run_dir / "report.md").read_text()
    assert "Latency distributions" not in (run_dir / "report.md").read_text()  # none recorded then
