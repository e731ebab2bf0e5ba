"""A command's own report: report.md and report.html of a title, its method and its sections,
written beside the command's JSON (arena sweep, latency, stack). Every string is escaped by
the renderer (markdown.py, html.py)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from . import html, markdown
from .tables import Section


def write_report(out_dir: Path, title: str, method: str, parts: list[Section]) -> tuple[Path, Path]:
    """Writes out_dir/report.md and out_dir/report.html; returns their paths."""
    md = [f"# {markdown.cell(title)}", "", markdown.cell(method), *markdown.sections(parts, 2)]
    page = [f"<h1>{escape(title)}</h1>", f"<p>{escape(method)}</p>", *html.sections(parts, 2)]
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
    html_path.write_text(html.page(title, page), encoding="utf-8")
    return md_path, html_path
