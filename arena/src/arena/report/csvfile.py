"""results.csv beside run.json: one row per sample of run.json, its raw figures (not the
report's medians), for a spreadsheet or pandas. Written with report.md and report.html, so
`arena report RUN` writes it for any run, old ones included. Units are in the column names;
an empty cell is a figure the sample does not have (null in run.json: a latency wrk did not
time, a CPU or memory figure of a server measured by URL without --pid)."""

from __future__ import annotations

import csv
from pathlib import Path

from ..core.model import Run
from ..core.sample import ERROR_KINDS

FILE = "results.csv"
# (column, the sample's value); the run's own columns come first.
COLUMNS = (
    ("entry", lambda s: s.entry),
    ("mode", lambda s: s.mode),
    ("rep", lambda s: s.rep),
    ("requests", lambda s: s.requests),
    ("duration_s", lambda s: s.duration_s),
    ("rps", lambda s: s.rps),
    ("latency_p50_us", lambda s: s.latency_us.p50),
    ("latency_p90_us", lambda s: s.latency_us.p90),
    ("latency_p99_us", lambda s: s.latency_us.p99),
    ("latency_max_us", lambda s: s.latency_us.max),
    ("server_cpu_s", lambda s: s.server_cpu_s),
    ("cpu_us_per_req", lambda s: s.cpu_us_per_req),
    ("cgroup_cpu_s", lambda s: s.cgroup_cpu_s),
    ("server_cpu_share", lambda s: s.server_cpu_share),
    ("client_cpu_share", lambda s: s.client_cpu_share),
    ("client_bound", lambda s: s.client_bound),
    ("peak_rss_bytes", lambda s: s.peak_rss_bytes),
    ("pss_bytes", lambda s: s.pss_bytes),
    *((f"errors_{k}", lambda s, k=k: s.errors[k]) for k in ERROR_KINDS),
    ("non_3xx", lambda s: s.non_3xx),
    ("steal_share", lambda s: s.steal_share),
    ("load_1m", lambda s: s.load_1m),
)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rows(run: Run) -> list[list[str]]:
    """The header, then one row per sample in run.json's order."""
    head = ["run_id", "mix", *(name for name, _ in COLUMNS)]
    return [head] + [[run.run_id, run.config.mix, *(_cell(get(s)) for _, get in COLUMNS)] for s in run.samples]


def write(run: Run, out_dir: Path) -> Path:
    """Writes out_dir/results.csv (RFC 4180, UTF-8); returns its path."""
    path = out_dir / FILE
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows(run))
    return path
