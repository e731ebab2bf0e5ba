"""Which samples of two entries were measured back to back, so that a ratio of the two can be
taken pair by pair (compare.paired_ratio): a drift of the shared machine moves both sides of a
pair, and cancels in its ratio.

A run pairs its own rounds by repetition (rep r of the entry with rep r of its partner, in
the same mode: the plan measures every entry once per mode in each round), and lists the
pairs its extra rounds took (Run.pairs: the entry's sample, then its partner's, straight
after). Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.model import Run
from ..core.sample import Sample


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
