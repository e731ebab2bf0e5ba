"""report.md and report.html from one Run: build() makes what every output shows (view.py:
groups, ranked rows per mode; caveats.py: the warnings); one module per output renders it
(console.py, markdown.py, svg.py for the charts, html.py). format.py holds the rules every
output writes figures by.

The report is derived from the raw samples and never replaces them.
"""

from __future__ import annotations

from pathlib import Path

from ..core.model import Run
from . import csvfile, distributions, html, loads, markdown, warmups
from .caveats import caveats
from .view import View, rank

__all__ = ["View", "build", "write_reports"]


def build(run: Run, reference: str | None = None) -> View:
    """The view of run, with ratios to `reference` (default: the run's own): its ranked rows
    (view.rank) and its warnings (caveats.py)."""
    view = rank(run, reference)
    view.warnings = caveats(view)
    return view


def write_reports(view: View, out_dir: Path) -> tuple[Path, Path]:
    """Writes out_dir/report.md, out_dir/report.html and out_dir/results.csv (csvfile.py);
    returns the reports' paths in that order. The latency and sweep results written into
    out_dir (`--run`) are included (loads.parts), and the samples' latency distributions."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    csvfile.write(view.run, out_dir)
    included = loads.parts(out_dir) + warmups.parts(view.run) + distributions.parts(out_dir)
    md_path.write_text(markdown.render(view, included), encoding="utf-8")
    html_path.write_text(html.render(view, included), encoding="utf-8")
    return md_path, html_path


def write_run_reports(run: Run, out_dir: Path, reference: str | None = None) -> tuple[View, Path, Path]:
    """The view of run and its two reports written to out_dir."""
    view = build(run, reference)
    return (view, *write_reports(view, out_dir))
