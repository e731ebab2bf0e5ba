"""`arena syscalls` as a report section: system calls per request of every entry by mode, the
calls by name, the background, and the entries not counted; its own report.md and
report.html beside syscalls.json, and the same section in a bench run's report when it was
written into the run (`--run`: RUN/syscalls/syscalls.json)."""

from __future__ import annotations

from pathlib import Path

from ..counts.syscalls import MODES, EntryCounts, load
from . import standalone
from .tables import Part, Section, Table

HEADING = "System calls per request (strace)"
KIND = "syscalls"
FILE = "syscalls.json"
FLAGSHIP = "rust"
TOP = 5  # calls by name shown per mode


def _by_name(calls: dict[str, float]) -> str:
    return ", ".join(f"{name} {v:.2f}" for name, v in list(calls.items())[:TOP]) or "none"


def sections(counted: list[EntryCounts]) -> list[Section]:
    """The per-mode totals (and the difference to the flagship), then the calls by name."""
    modes = [m for m in MODES if any(e.count(m) for e in counted)]
    flagship = next((e for e in counted if e.entry == FLAGSHIP and not e.error), None)
    headers = [
        "entry",
        "kind",
        *[f"{m} calls/req" for m in modes],
        "keep-alive − rust",
        "keep-alive: of which runtime",
        "threads (processes)",
    ]
    totals = Table(headers, [], numeric=set(range(2, 2 + len(modes) + 3)))
    names = Table(["entry", "mode", "calls per request by name", "background (idle rate) per request"], [])
    missing = Table(["entry", "kind", "why not counted"], [])
    for e in counted:
        if e.error:
            missing.rows.append([e.entry, e.kind, e.error])
            continue
        cells = [f"{c.per_request:.2f}" if (c := e.count(m)) else "–" for m in modes]
        mine, ref = e.count("keepalive"), flagship.count("keepalive") if flagship else None
        diff = f"{mine.per_request - ref.per_request:+.2f}" if mine and ref else "–"
        runtime = f"{mine.runtime:.2f}" if mine else "–"
        totals.rows.append([e.entry, e.kind, *cells, diff, runtime, f"{e.threads} ({e.processes})"])
        for c in e.counts:
            names.rows.append([e.entry, c.mode, _by_name(c.calls), _by_name(c.background) if c.background else "–"])
    out = [Section("Calls per request by mode", totals), Section("The calls by name", names)]
    if missing.rows:
        out.append(Section("Entries not counted", missing))
    return out


def _method(doc: dict) -> str:
    config = doc.get("config", {})
    extra = f" N = {config['requests']}." if "requests" in config else ""
    return str(doc.get("method", "")) + extra


def write_report(out_dir: Path) -> tuple[Path, Path]:
    """report.md and report.html beside out_dir/syscalls.json."""
    counted, doc = load(out_dir / FILE)
    return standalone.write_report(out_dir, HEADING, _method(doc), sections(counted))


def run_part(run_dir: Path) -> list[Part]:
    """The counts written into a run's directory, as its report includes them; a file that
    cannot be read is said, never skipped."""
    path = run_dir / KIND / FILE
    if not path.is_file():
        return []
    href = f"{KIND}/report.html"
    try:
        counted, doc = load(path)
        found = sections(counted)
    except (OSError, ValueError, KeyError, TypeError) as err:
        return [Part(HEADING, f"{KIND}/{FILE} could not be read ({type(err).__name__}: {err}).", href, [])]
    return [Part(HEADING, _method(doc), href, found)]
