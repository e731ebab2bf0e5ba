"""A command's own report: report.md and report.html of a title, its method and its sections,
written beside the command's JSON (arena sweep, latency, stack). Every string is escaped by
the renderer (markdown.py, html.py) walking its blocks (sections.py)."""

from __future__ import annotations

from pathlib import Path

from . import html, markdown
from .sections import Heading, Text, sections
from .tables import Section


def write_report(out_dir: Path, title: str, method: str, parts: list[Section]) -> tuple[Path, Path]:
    """Writes out_dir/report.md and out_dir/report.html; returns their paths."""
    shown = [Heading(1, title), Text(method), *sections(parts, 2)]
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text(markdown.render_blocks(shown), encoding="utf-8")
    html_path.write_text(html.page(title, html.render_blocks(shown)), encoding="utf-8")
    return md_path, html_path
