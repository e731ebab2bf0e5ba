"""Which samples of two entries were measured back to back, so that a ratio of the two can be
taken pair by pair (compare.paired_ratio): a drift of the shared machine moves both sides of a
pair, and cancels in its ratio.

A run pairs its own rounds by repetition (rep r of the entry with rep r of its partner, in
the same mode: the plan measures every entry once per mode in each round), and lists the
pairs its extra rounds took (Run.pairs: the entry's sample, then its partner's, straight
after). Which ratios are still too wide, and so get extra pairs (wide_pairs): read with
compare.paired_ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..core.model import Run
from ..core.modes import runs_in
from ..core.sample import Sample
from .compare import HALF_WIDTH, PairedRatio, paired_ratio

# The modes the README ranks on, in the order the extra rounds' budget serves them: keep-alive
# capped first, then a new connection per request capped; every other mode after, as one.
RANKED_MODES = ("keepalive-capped", "close-capped")


def pairs_of(run: Run, mode: str, entry: str, partner: str) -> list[tuple[Sample, Sample]]:
    """(entry's sample, partner's sample) of every pair in mode: the run's rounds by repetition
    (rep < config.repetitions), then the extra rounds' pairs of run.pairs, either way round."""
    by_key = {(s.entry, s.mode, s.rep): s for s in run.samples if s.mode == mode and s.entry in (entry, partner)}
    out = []
    for rep in range(run.config.repetitions):
        mine, theirs = by_key.get((entry, mode, rep)), by_key.get((partner, mode, rep))
        if mine is not None and theirs is not None:
            out.append((mine, theirs))
    for p in run.pairs:
        if p.mode != mode:
            continue
        if (p.entry, p.partner) == (entry, partner):
            keys = (entry, p.entry_rep), (partner, p.partner_rep)
        elif (p.entry, p.partner) == (partner, entry):
            keys = (entry, p.partner_rep), (partner, p.entry_rep)
        else:
            continue
        mine, theirs = by_key.get((keys[0][0], mode, keys[0][1])), by_key.get((keys[1][0], mode, keys[1][1]))
        if mine is not None and theirs is not None:
            out.append((mine, theirs))
    return out


def figures(
    pairs: list[tuple[Sample, Sample]], figure: Callable[[Sample], float | None]
) -> tuple[list[float], list[float]]:
    """(entry's figures, partner's figures) of the pairs where both have a positive figure."""
    kept = [(figure(a), figure(b)) for a, b in pairs]
    kept = [(x, y) for x, y in kept if x is not None and y is not None and x > 0 and y > 0]
    return [x for x, _ in kept], [y for _, y in kept]


def next_rep(taken: set[tuple[str, str, int]], entry: str, mode: str, first: int) -> int:
    """The first repetition number at or above `first` that no (entry, mode, rep) of taken holds
    (the run's samples and failures): an extra round's sample gets a number of its own."""
    rep = first
    while (entry, mode, rep) in taken:
        rep += 1
    return rep


class Named(Protocol):
    name: str


Subject = TypeVar("Subject", bound=Named)  # an entry: pairing reads only its name


def _partners(e: Subject, live: Sequence[Subject], run: Run) -> list[Subject]:
    """Whom e's ratios divide by: the run's reference, e's own floor and, for a production entry,
    its tuned renard (the price of the idiom, report/idiom.py), when measured here."""
    names = {x.name: x for x in live}
    record = run.entry(e.name)
    floor = run.floor_of(record) if record is not None else None
    tuned = record.tuned if record is not None else None
    wanted = [run.config.reference, floor.name if floor is not None else None, tuned]
    return [names[n] for n in dict.fromkeys(wanted) if n in names and n != e.name]


def _measured_in(run: Run, e: Subject, mode_name: str) -> bool:
    """Whether the run measures e in this mode (its tier's modes, modes.runs_in)."""
    record = run.entry(e.name)
    return runs_in(record.tier if record is not None else None, mode_name)


def wide_pairs(
    run: Run, live: Sequence[Subject], most: int
) -> list[tuple[float, str, Subject, Subject, PairedRatio | None]]:
    """(half-width, mode, entry, partner, its paired ratio) of every ratio the table prints whose
    interval is wider than compare.HALF_WIDTH (or that has fewer than 2 pairs) and that has
    fewer than `most` pairs, widest first, each two entries once (c of floor and floor of c
    share their pairs); on the server's CPU per request (own_cpu_us)."""
    out, seen = [], set()
    for mode_name in run.config.modes:
        for e in live:
            for other in _partners(e, live, run):
                if not (_measured_in(run, e, mode_name) and _measured_in(run, other, mode_name)):
                    continue
                if (mode_name, other.name, e.name) in seen:
                    continue
                seen.add((mode_name, e.name, other.name))
                mine, theirs = figures(pairs_of(run, mode_name, e.name, other.name), lambda s: s.own_cpu_us)
                r = paired_ratio(theirs, mine) if mine else None
                if (r is None or not r.steady) and len(mine) < most:
                    width = r.half_width if r is not None and r.half_width is not None else float("inf")
                    out.append((width, mode_name, e, other, r))
    return sorted(out, key=lambda x: (-x[0], x[1], x[2].name, x[3].name))


def reachable(r: PairedRatio | None, most: int) -> bool:
    """Whether the ratio's interval can be expected within ±HALF_WIDTH by `most` pairs: its
    half-width now, narrowed as 1/√pairs (a median's standard error), is within HALF_WIDTH at
    `most` pairs. Unknown (fewer than 2 pairs): True, it has to be measured to be known."""
    if r is None or r.half_width is None:
        return True
    return r.half_width * (r.pairs / most) ** 0.5 <= HALF_WIDTH


def _mode_rank(mode: str) -> int:
    return RANKED_MODES.index(mode) if mode in RANKED_MODES else len(RANKED_MODES)


def next_round(
    wide: list[tuple[float, str, Subject, Subject, PairedRatio | None]],
    most: int,
    cost: Callable[[Subject, Subject], float] = lambda _e, _other: 0.0,
) -> list[tuple[float, str, Subject, Subject, PairedRatio | None]]:
    """The ratios the next extra round gives one pair each, from wide_pairs' list: the first
    group in budget order, cheapest pair first (cost: its seconds), then widest. The groups:
    the ratios that can reach ±HALF_WIDTH by `most` pairs (reachable) before those that
    cannot, and within each, the RANKED_MODES in their order before every other mode. So the
    ranking modes' ratios reach ±3% before any other gets a pair, and a ratio too noisy to
    reach it takes the budget only once no other can use it."""

    def group(item) -> tuple[int, int]:
        return (0 if reachable(item[4], most) else 1, _mode_rank(item[1]))

    if not wide:
        return []
    first = min(group(x) for x in wide)
    return sorted((x for x in wide if group(x) == first), key=lambda x: (cost(x[2], x[3]), -x[0]))
