"""arena.report against tests/fixtures/run_sample.json (schema 1, hand-made).

The fixture: rust, nginx-lua (the reference) and java-seed measured, zig unavailable; 3 reps
x 3 modes; rust's keepalive rep 1 is client-bound; java-seed has 2 non-3xx answers in
keepalive, 5 read errors in close and 2 failed conformance cases; in close rust and
nginx-lua overlap.
"""

import copy
import json
import re
import struct
import subprocess
from pathlib import Path

import pytest

from arena.report import ranked_table, render_html, render_markdown, warnings, write_reports

FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"
CHROMIUM = Path("/usr/bin/chromium")
MALICIOUS_NAME = '<img src=x onerror="alert(1)">'
MALICIOUS_TEXT = "<script>alert('pwned')</script> & | pipes"


@pytest.fixture
def run() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def by_entry(rows: list[dict]) -> dict[str, dict]:
    return {row["entry"]: row for row in rows}


def malicious(run: dict) -> dict:
    """The run with java-seed renamed to markup and markup in its text fields."""
    run = copy.deepcopy(run)
    for entry in run["entries"]:
        if entry["name"] == "java-seed":
            entry.update(name=MALICIOUS_NAME, description=MALICIOUS_TEXT, language=MALICIOUS_TEXT,
                         version=MALICIOUS_TEXT)
        if entry["name"] == "zig":
            entry["reason"] = MALICIOUS_TEXT
    for sample in run["samples"]:
        if sample["entry"] == "java-seed":
            sample["entry"] = MALICIOUS_NAME
    run["machine"]["cpu_model"] = MALICIOUS_TEXT
    return run


# ranking and ratios

@pytest.mark.parametrize("mode, order", [
    ("keepalive", ["rust", "nginx-lua", "java-seed", "zig"]),
    ("pipeline16", ["rust", "nginx-lua", "java-seed", "zig"]),
    ("close", ["nginx-lua", "rust", "java-seed", "zig"]),
])
def test_ranked_by_rps_median_descending_unavailable_last(run, mode, order):
    assert [row["entry"] for row in ranked_table(run, mode, "nginx-lua")] == order


def test_ranks_are_numbered_and_unavailable_entry_keeps_its_reason(run):
    rows = ranked_table(run, "keepalive", "nginx-lua")
    assert [row["rank"] for row in rows] == [1, 2, 3, None]
    assert (rows[-1]["available"], rows[-1]["reason"], rows[-1]["ratio"]) == (False, "requires `zig` on PATH", None)


def test_row_carries_median_min_max_of_each_figure(run):
    rust = by_entry(ranked_table(run, "keepalive", "nginx-lua"))["rust"]
    assert (rust["rps_median"], rust["rps_lo"], rust["rps_hi"]) == (150000, 148000, 152000)
    assert (rust["cpu_us_median"], rust["cpu_us_lo"], rust["cpu_us_hi"]) == (2.1, 2.0, 2.2)
    assert (rust["p50_us"], rust["p99_us"], rust["artifact_bytes"], rust["startup_ms"]) == (310, 920, 612345, 3.1)
    assert (rust["verify_pass"], rust["verify_alt"], rust["verify_fail"]) == (70, 0, 0)


def test_ratio_to_reference_is_ratio_of_medians_with_extreme_pairings(run):
    rust = by_entry(ranked_table(run, "keepalive", "nginx-lua"))["rust"]
    assert rust["ratio"] == pytest.approx(150000 / 137000)
    assert (rust["ratio_lo"], rust["ratio_hi"]) == pytest.approx((148000 / 140000, 152000 / 130000))
    assert rust["significant"] is True


def test_overlapping_samples_give_a_not_significant_ratio(run):
    assert by_entry(ranked_table(run, "close", "nginx-lua"))["rust"]["significant"] is False


def test_reference_row_is_one_and_marked_not_compared(run):
    ref = by_entry(ranked_table(run, "keepalive", "nginx-lua"))["nginx-lua"]
    assert (ref["ratio"], ref["significant"], ref["is_reference"]) == (1.0, None, True)


def test_client_bound_sample_is_kept_and_counted(run):
    rust = by_entry(ranked_table(run, "keepalive", "nginx-lua"))["rust"]
    assert (rust["samples"], rust["client_bound"]) == (3, 1)


@pytest.mark.parametrize("reference, words", [
    ("varnish", "the reference varnish is absent from this run: no ratios are shown"),
    ("zig", "the reference zig is unavailable (requires `zig` on PATH): no ratios are shown"),
])
def test_missing_reference_shows_no_ratio_and_says_why(run, reference, words):
    rows = ranked_table(run, "keepalive", reference)
    assert [row["ratio"] for row in rows] == [None] * 4
    assert words in warnings(run, reference)
    assert words in render_markdown(run, reference)


def test_reference_without_samples_in_a_mode_shows_no_ratio_there(run):
    run["samples"] = [s for s in run["samples"] if not (s["entry"] == "nginx-lua" and s["mode"] == "close")]
    assert by_entry(ranked_table(run, "close", "nginx-lua"))["rust"]["ratio"] is None
    assert by_entry(ranked_table(run, "keepalive", "nginx-lua"))["rust"]["ratio"] is not None


def test_empty_run_renders_without_crashing(tmp_path):
    md, page = write_reports({"schema": 1, "run_id": "empty", "entries": [], "samples": []}, tmp_path)
    assert "absent from this run" in md.read_text() and "<svg" in page.read_text()


def test_samples_of_an_unlisted_entry_are_ranked_and_warned_about(run):
    run["entries"] = [e for e in run["entries"] if e["name"] != "java-seed"]
    assert [row["entry"] for row in ranked_table(run, "keepalive", "nginx-lua")][2] == "java-seed"
    assert any(w.startswith("samples name java-seed, which is not among") for w in warnings(run, "nginx-lua"))


def test_null_startup_and_artifact_render_as_dashes(run):
    run["entries"][0].update(startup_ms=[None], artifact_bytes=None)
    assert "| rust | – | – |" in render_markdown(run, "nginx-lua")


# warnings

def test_warnings_in_plain_words(run):
    assert warnings(run, "nginx-lua") == [
        "the load generator was the bottleneck for rust in mode keepalive (1 of 3 repetitions): these "
        "figures measure wrk, not the server; give the load generator more cores",
        "java-seed in mode keepalive gave 2 answers that were not 3xx over 3 repetitions",
        "rust vs nginx-lua in mode close: 0.97× (0.88–1.22) is not significant (the min–max ranges overlap)",
        "java-seed in mode close had 5 socket errors (read 5) over 3 repetitions",
        "java-seed failed 2 conformance cases",
    ]


def test_missing_metric_is_warned_about(run):
    run["samples"][0]["pss_bytes"] = None
    assert "rust in mode keepalive: pss_bytes is missing from 1 of 3 samples" in warnings(run, "nginx-lua")


def test_latency_left_out_on_purpose_is_explained_once_per_mode(run):
    note = "wrk does not time pipelined requests: latency not measured"
    for sample in run["samples"]:
        if sample["mode"] == "pipeline16":
            sample["latency_note"] = note
            sample["latency_us"] = {"p50": None, "p90": None, "p99": None, "max": None}
    said = warnings(run, "nginx-lua")
    assert f"mode pipeline16: {note}" in said
    assert not any("pipeline16: latency" in w for w in said)


def test_tool_versions_that_name_their_tool_are_not_doubled(run):
    run["machine"]["tools"] = {"rustc": "rustc 1.95.0", "wrk": "4.1.0"}
    assert "- Tools: rustc 1.95.0, wrk 4.1.0" in render_markdown(run, "nginx-lua")


# markdown

def test_markdown_title_machine_and_method(run):
    md = render_markdown(run, "nginx-lua")
    assert md.startswith("# renard arena: run 20261122-001500, 2026-11-22 00:15 UTC\n")
    assert "- CPU: AMD EPYC 7B13, 2 cores, 25.00 GB" in md and "- Tools: wrk 4.1.0, python 3.11.7" in md
    assert "pinned to CPU 0" in md and "3 repetitions of 10 s" in md and "interleaved" in md


def test_markdown_has_one_ranked_table_per_mode(run):
    md = render_markdown(run, "nginx-lua")
    for mode in ("keepalive", "pipeline16", "close"):
        assert f"## Requests per second: {mode} (" in md
    assert md.count("| # | entry | language | kind | requests/s median (min–max) | vs nginx-lua |") == 3


@pytest.mark.parametrize("line", [
    "| 1 | rust | Rust | ours | 150,000 (148,000–152,000) | 1.09× (1.06–1.17) | 2.10 (2.00–2.20) | 310 / 920 | 1.9 MB | 1.5 MB | 1 of 3 |",
    "| 2 | nginx-lua | Lua (nginx) | peer | 137,000 (130,000–140,000) | reference |",
    "| 2 | rust | Rust | ours | 30,000 (28,000–33,000) | 0.97× (0.88–1.22) not significant |",
    "| – | zig | Zig | ours | unavailable: requires `zig` on PATH |",
    "| rust | 612 kB | 3.1 (2.9–3.4) | 2.0 MB (1.9 MB–2.0 MB) | 1.6 MB (1.5 MB–1.6 MB) |",
    "| java-seed | 60 | 8 | 2 |",
    "| zig | not verified |  |  |",
])
def test_markdown_table_lines(run, line):
    assert line in render_markdown(run, "nginx-lua")


def test_markdown_warnings_section(run):
    md = render_markdown(run, "nginx-lua")
    assert "## Warnings\n\n- the load generator was the bottleneck for rust in mode keepalive" in md


def test_markdown_escapes_pipes_and_markup(run):
    md = render_markdown(malicious(run), "nginx-lua")
    assert "<script>" not in md and "<img" not in md
    assert "&lt;script&gt;alert('pwned')&lt;/script&gt; &amp; \\| pipes" in md


# html

def test_html_escapes_every_string_from_the_run(run):
    page = render_html(malicious(run), "nginx-lua")
    assert "<script" not in page and "<img" not in page and "onerror=\"" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt; &amp; | pipes" in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page


def test_html_is_self_contained(run):
    page = render_html(run, "nginx-lua")
    assert not re.search(r"<(script|link|img|iframe)\b|@import|url\(", page)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_html_charts_are_titled_svgs_one_per_metric(run):
    page = render_html(run, "nginx-lua")
    charts = re.findall(r'<svg class="chart" data-metric="([^"]+)"[^>]*><title>[^<]+</title>', page)
    assert sorted(set(charts)) == ["cpu_us_per_req", "latency", "peak_rss_bytes", "rps"]
    assert (charts.count("rps"), charts.count("latency"), len(charts)) == (3, 3, 8)


def test_html_has_the_markdown_tables(run):
    page = render_html(run, "nginx-lua")
    assert page.count("<table>") == 3 + 3  # one per mode, footprint, conformance, entries
    assert '<td class="num wrap">0.97× (0.88–1.22) not significant</td>' in page


def test_write_reports_writes_both_files(run, tmp_path):
    md, page = write_reports(run, tmp_path / "out")
    assert (md.name, page.name) == ("report.md", "report.html")
    assert md.read_text(encoding="utf-8") == render_markdown(run, "nginx-lua")
    assert page.read_text(encoding="utf-8") == render_html(run, "nginx-lua")


# headless chromium

def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=60, check=True)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed")
def test_chromium_renders_charts_and_tables(run, tmp_path):
    _, page = write_reports(run, tmp_path)
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert dom.count('class="chart"') >= 4
    assert dom.count("<table>") == 6 and "150,000 (148,000–152,000)" in dom
    shot = tmp_path / "report.png"
    chromium(tmp_path, "--window-size=1280,2400", f"--screenshot={shot}", page.as_uri())
    data = shot.read_bytes()
    assert png_size(data) == (1280, 2400) and len(data) > 20_000

