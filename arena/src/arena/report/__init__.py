"""report.md and report.html from one Run: view.py builds what every output shows (groups,
ranked rows per mode, warnings); one module per output renders it (console.py, markdown.py,
svg.py for the charts, html.py). format.py holds the rules every output writes figures by.

The report is derived from the raw samples and never replaces them.
"""

from __future__ import annotations

from pathlib import Path

from ..model import Run
from . import html, markdown
from .view import View, build

__all__ = ["View", "build", "write_reports"]


# Reports of other measurements written into a run's directory (`arena latency --run`,
# `arena sweep --run`): the run's report links them when they are there.
COMPANIONS = (
    ("latency/report.html", "latency at fixed rates (oha, open loop): percentile curves, where p99 passes 1 and 10 ms"),
    ("sweep/report.html", "saturation sweep (concurrency 1 … 4 096): requests/s and p99 per step, the knee"),
)


def companions(out_dir: Path) -> list[tuple[str, str]]:
    """(relative href, words) of the companion reports present in out_dir."""
    return [(href, words) for href, words in COMPANIONS if (out_dir / href).is_file()]


def write_reports(view: View, out_dir: Path) -> tuple[Path, Path]:
    """Writes out_dir/report.md and out_dir/report.html; returns their paths in that order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    links = companions(out_dir)
    md_path.write_text(markdown.render(view, links), encoding="utf-8")
    html_path.write_text(html.render(view, links), encoding="utf-8")
    return md_path, html_path


def write_run_reports(run: Run, out_dir: Path, reference: str | None = None) -> tuple[View, Path, Path]:
    """The view of run and its two reports written to out_dir."""
    view = build(run, reference)
    return (view, *write_reports(view, out_dir))
