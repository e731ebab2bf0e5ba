"""`arena bench --url URL [--pid PID]`: a real renard the test started is measured without the
arena starting it; what the run cannot know (CPU, memory without --pid; its start; the spec)
is null in run.json and said in the report; with --pid its process tree's CPU and memory are
read; the run's latency distributions and results.csv are written beside run.json."""

import csv
import json
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from test_outside import serving

from arena.entries.manifest import discover
from arena.entries.process import Launch, free_port, launch_ready
from arena.entries.remote import RemoteError, remote_entry
from arena.stack.front import make_certificate

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def renard():
    """The flagship, started by the test (one thread on CPU 0), stopped after it."""
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")
    entry = next((e for e in discover(REPO) if e.name == "rust"), None)
    if entry is None or not entry.available or not (entry.folder / "bin" / "renard").is_file():
        pytest.skip("servers/rust/bin/renard is not built (make build)")
    server = launch_ready(entry, Launch(port=free_port(), threads=1, cpus="0"))
    try:
        yield server
    finally:
        server.stop()


def bench_url(tmp_path: Path, url: str, *more: str) -> tuple[subprocess.CompletedProcess, Path]:
    p = arena(
        "bench",
        "--url",
        url,
        "--quick",
        "--modes",
        "keepalive,close,pipeline16,keepalive-capped",
        "--results",
        str(tmp_path / "results"),
        *more,
    )
    return p, (tmp_path / "results" / "latest").resolve()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://127.0.0.1/", "must start with http:// or https://"),
        ("http:///", "has no host"),
        ("http://127.0.0.1:99999/", "bad port"),
        ("http://127.0.0.1/#top", "#fragment"),
    ],
)
def test_a_url_that_cannot_be_measured_is_refused(url, words):
    with pytest.raises(RemoteError, match=words):
        remote_entry(url)


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs openssl to make the test's certificate")
def test_an_https_url_is_checked_without_verifying_its_certificate(tmp_path):
    """As wrk: a self-signed certificate passes; the URL's path and query are what is asked."""
    cert, key = make_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = serving(context)
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}/?seed=alice"
        assert remote_entry(url).answer_problem() == ""
        assert remote_entry(url, expect=200).answer_problem() == f"GET {url}: expected 200, got 302 Found"
    finally:
        server.shutdown()
        server.server_close()
    assert server.seen == [("/?seed=alice", "close")] * 2


def test_nothing_at_the_url_is_an_oserror_the_bench_says():
    with pytest.raises(OSError):
        remote_entry(f"http://127.0.0.1:{free_port()}/").answer_problem()


def test_a_pid_that_is_not_running_is_refused_with_exit_2():
    p = arena("bench", "--url", "http://127.0.0.1:9/", "--pid", "999999999")
    assert p.returncode == 2 and "'--pid'" in p.stderr and "no process 999999999" in p.stderr, p.stderr


def test_url_measures_a_running_server_and_says_what_it_cannot_know(renard, tmp_path):
    p, run_dir = bench_url(tmp_path, f"http://127.0.0.1:{renard.port}/")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "a running server (--url) cannot be capped" in p.stdout
    # not untracked: a server given by URL may be a container's published port, reached through NAT
    assert "loopback stays tracked (a server given by --url may be behind NAT)" in p.stdout
    assert renard.proc.poll() is None, "the arena stopped a server it did not start"
    run = json.loads((run_dir / "run.json").read_text())
    (entry,) = run["entries"]
    assert entry["name"] == "url" and entry["url"] == f"http://127.0.0.1:{renard.port}/" and entry["pid"] is None
    assert entry["startup_ms"] == [] and entry["verify"] is None
    assert any("CPU and memory unknown" in u for u in entry["unknown"])
    assert run["config"]["modes"] == ["keepalive", "close", "pipeline16"]  # the capped mode left out
    assert sorted(s["mode"] for s in run["samples"]) == ["close", "keepalive", "pipeline16"]
    for s in run["samples"]:
        assert s["requests"] > 0 and s["non_3xx"] == 0, s
        assert s["server_cpu_s"] is None and s["cpu_us_per_req"] is None and s["peak_rss_bytes"] is None, s
    report = (run_dir / "report.md").read_text()
    assert f"url is a running server at http://127.0.0.1:{renard.port}/" in report
    assert "CPU and memory unknown (no --pid)" in report
    assert not (tmp_path / "results" / "history.jsonl").exists()  # not the repository's code: not in its history
    assert "not appended to history.jsonl" in p.stdout
    assert_distributions_and_csv(run_dir, run)


def test_url_with_pid_measures_its_cpu_and_memory(renard, tmp_path):
    p, run_dir = bench_url(tmp_path, f"http://127.0.0.1:{renard.port}/", "--pid", str(renard.proc.pid))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    run = json.loads((run_dir / "run.json").read_text())
    (entry,) = run["entries"]
    assert entry["pid"] == renard.proc.pid
    for s in run["samples"]:
        assert s["server_cpu_s"] > 0 and s["cpu_us_per_req"] > 0, s
        assert s["peak_rss_bytes"] > 0 and s["pss_bytes"] > 0, s
        assert 0 < s["server_cpu_share"] <= 1.5, s
    assert f"CPU and memory of process {renard.proc.pid} and its descendants" in (run_dir / "report.md").read_text()


def test_url_with_nothing_there_fails_its_samples_without_a_crash(tmp_path):
    if not shutil.which("wrk"):
        pytest.skip("wrk is not on PATH")
    p, run_dir = bench_url(tmp_path, f"http://127.0.0.1:{free_port()}/", "--modes", "keepalive")
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    assert "the run did not measure everything" in p.stderr
    run = json.loads((run_dir / "run.json").read_text())
    assert run["samples"] == [] and "cannot connect" in run["failures"][0]["error"]


def assert_distributions_and_csv(run_dir: Path, run: dict) -> None:
    """distributions.jsonl: one line per timed sample, as wrk counted it; results.csv: run.json's rows."""
    lines = [json.loads(x) for x in (run_dir / "distributions.jsonl").read_text().splitlines()]
    timed = [s for s in run["samples"] if s["mode"] != "pipeline16"]  # wrk does not time pipelined requests
    assert sorted((d["mode"], d["rep"]) for d in lines) == sorted((s["mode"], s["rep"]) for s in timed)
    for d in lines:
        sample = next(s for s in timed if s["mode"] == d["mode"])
        buckets = [b for b, _ in d["buckets"]]
        assert buckets == sorted(set(buckets)) and d["count"] == sum(n for _, n in d["buckets"])
        assert d["count"] >= sample["requests"]  # wrk's histogram: answers plus its correction's values
        p = d["percentiles_us"]
        assert p["50"] <= p["90"] <= p["99"] <= p["99.9"] <= p["100"], p
        assert p["50"] == sample["latency_us"]["p50"] and p["100"] == sample["latency_us"]["max"]
        # The bucket holding the median is the one wrk's exact median falls in (20 per decade).
        cumulative, median_bucket = 0, None
        for b, n in d["buckets"]:
            cumulative += n
            if median_bucket is None and cumulative >= d["count"] / 2:
                median_bucket = b
        assert 10 ** ((median_bucket - 1) / 20) <= p["50"] * 1.0001 and p["50"] <= 10 ** (median_bucket / 20) * 1.0001
    report = (run_dir / "report.md").read_text()
    assert "## Latency distributions (wrk's histograms)" in report
    assert report.count("latency by percentile") == 0  # the charts are drawn in the HTML only
    page = (run_dir / "report.html").read_text()
    assert page.count('aria-label="url: latency by percentile, repetitions merged"') == 1  # one chart, one entry

    with (run_dir / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(run["samples"])
    for row, s in zip(rows, run["samples"], strict=True):
        assert (row["entry"], row["mode"], int(row["rep"])) == (s["entry"], s["mode"], s["rep"])
        assert int(row["requests"]) == s["requests"] and float(row["rps"]) == s["rps"]
        assert row["mix"] == "default" and row["run_id"] == run["run_id"]
        assert row["server_cpu_s"] == "" and row["cpu_us_per_req"] == ""  # null in run.json: an empty cell


def test_the_plan_counts_no_verification_and_no_start_for_a_running_server():
    from arena.bench.plan import estimate
    from arena.core.model import Config

    e = estimate([remote_entry("http://127.0.0.1:9/")], Config(quick=True, modes=("keepalive",), repetitions=1))
    assert e.verify_s == 0 and e.starts_s == 0 and e.samples == 1
