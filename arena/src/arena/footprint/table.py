"""The footprint table: one row per entry of a run, with its image when one was sized."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.model import Run
from ..report import format as fmt
from .images import ImageSize

HEADINGS = (
    "entry",
    "base image",
    "app",
    "app share",
    "image",
    "artifact + runtime",
    "peak RSS (bench)",
    "start-up (ms)",
)


@dataclass(frozen=True)
class Row:
    entry: str
    image: ImageSize | None  # None: no image (a peer, or not sized)
    artifact_bytes: int | None
    runtime_bytes: int | None
    peak_rss_bytes: int | None  # the largest of the run's samples of this entry, every mode
    startup_ms: float | None  # the median of the run's timed starts


def rows(run: Run, images: dict[str, ImageSize]) -> list[Row]:
    """The run's available entries in its order, joined with their image sizes."""
    found = []
    for entry in run.entries:
        if not entry.available:
            continue
        rss = [s.peak_rss_bytes for s in run.samples if s.entry == entry.name and s.peak_rss_bytes is not None]
        found.append(
            Row(
                entry=entry.name,
                image=images.get(entry.name),
                artifact_bytes=entry.artifact_bytes,
                runtime_bytes=entry.runtime_bytes,
                peak_rss_bytes=max(rss) if rss else None,
                startup_ms=statistics.median(entry.startup_ms) if entry.startup_ms else None,
            )
        )
    return found


def cells(row: Row) -> list[str]:
    image = row.image
    if row.artifact_bytes is None:
        installed = "–"
    elif row.runtime_bytes:
        installed = f"{fmt.size(row.artifact_bytes)} + {fmt.size(row.runtime_bytes)}"
    else:
        installed = fmt.size(row.artifact_bytes)
    return [
        row.entry,
        "–" if image is None else ("scratch" if image.base_bytes == 0 else fmt.size(image.base_bytes)),
        "–" if image is None else fmt.size(image.app_bytes),
        "–" if image is None else f"{image.app_share:.0%}",
        "–" if image is None else fmt.size(image.image_bytes),
        installed,
        "–" if row.peak_rss_bytes is None else fmt.size(row.peak_rss_bytes),
        fmt.ms(row.startup_ms),
    ]


def markdown(found: list[Row]) -> str:
    """The rows as a Markdown table (numbers right-aligned), ending with a newline."""
    lines = ["| " + " | ".join(HEADINGS) + " |", "|---|" + "---:|" * (len(HEADINGS) - 1)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in found]
    return "\n".join(lines) + "\n"
