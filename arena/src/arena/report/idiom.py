"""The price of the idiom: per language, what its usual server as its users write it (a
production peer) costs against our tuned renard of the same language, measured in one run.

For each production entry that names its tuned renard (entry.toml `tuned`): the production
entry's CPU µs per request ÷ the tuned renard's, pair by pair (samples of the two taken in the
same round, analysis/pairing.py), the median of the per-pair ratios with its bootstrap 95%
interval (compare.paired_ratio); above 1, the idiom costs that many times the tuned renard's
CPU per request. Taken in the capped keep-alive mode, the README's ranking, unless the cap
distorts either entry there (view.Row.distorted): then in keep-alive on a whole core, where
neither is held back, as the ranking does for such a row.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.compare import PairedRatio, paired_ratio
from ..analysis.pairing import figures, pairs_of
from ..core.model import EntryRecord
from ..core.modes import MODES
from .view import Row, View, fmt_paired

CAPPED = "keepalive-capped"


@dataclass
class Price:
    """One production entry against its tuned renard. ratio is None when the run has no pair of
    the two (reason says why); mode names the mode the ratio was taken in."""

    production: EntryRecord
    tuned: EntryRecord | None
    mode: str | None = None
    ratio: PairedRatio | None = None
    reason: str | None = None


def _row(view: View, mode: str, name: str) -> Row | None:
    mv = next((m for m in view.modes if m.mode.name == mode), None)
    return next((r for r in mv.rows if r.entry.name == name), None) if mv else None


def _mode(view: View, production: str, tuned: str) -> str:
    """CAPPED, or its dedicated-core mode when the cap distorts either entry there."""
    rows = [_row(view, CAPPED, name) for name in (production, tuned)]
    distorted = any(r is not None and r.distorted for r in rows)
    return MODES[CAPPED].dedicated if distorted else CAPPED


def price(view: View, production: EntryRecord) -> Price:
    """production's price against its tuned renard in this run (production.tuned must be set)."""
    tuned = view.run.entry(production.tuned)
    if tuned is None:
        return Price(production, None, reason=f"its tuned renard {production.tuned} is not in this run")
    mode = _mode(view, production.name, tuned.name)
    mine, theirs = figures(pairs_of(view.run, mode, production.name, tuned.name), lambda s: s.own_cpu_us)
    if not mine:
        return Price(production, tuned, mode, reason=f"no pair of the two with a CPU figure in {mode}")
    return Price(production, tuned, mode, paired_ratio(mine, theirs))


def prices(view: View) -> list[Price]:
    """Every production entry of the run that names its tuned renard, in the run's order."""
    return [price(view, e) for e in view.run.entries if e.tier_name == "production" and e.tuned]


COLUMNS = (
    "language",
    "production entry",
    "tuned renard",
    "CPU µs/req: production · tuned",
    "price of the idiom [95% interval]",
    "mode",
)


def _cpu(view: View, mode: str | None, name: str | None) -> str:
    row = _row(view, mode, name) if mode and name else None
    cpu = row.cpu if row is not None else None
    return "–" if cpu is None else f"{cpu.median:.2f}"


def price_cell(p: Price) -> str:
    """2.31 [2.20–2.45] ±5% after 3 pairs; n.s. where the interval holds 1; the reason without a pair."""
    if p.ratio is None:
        return p.reason or "–"
    return fmt_paired(p.ratio) + ("" if p.ratio.significant else " n.s.")


def cells(view: View, p: Price, name=lambda entry: entry) -> list[str]:
    """One price's cells in COLUMNS order; name(entry name) writes an entry's name (a link)."""
    tuned = p.tuned.name if p.tuned else p.production.tuned
    both = f"{_cpu(view, p.mode, p.production.name)} · {_cpu(view, p.mode, tuned)}"
    return [p.production.language, name(p.production.name), name(tuned), both, price_cell(p), p.mode or "–"]


def markdown_of(view: View, found: list[Price], name=lambda entry: f"`{entry}`") -> list[str]:
    """These prices as a Markdown table (header, rule, one line each); [] for none."""
    if not found:
        return []
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|---|---|---:|---:|---|"]
    return lines + ["| " + " | ".join(cells(view, p, name)) + " |" for p in found]
