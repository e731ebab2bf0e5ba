"""What `arena bench` will do and how long it will take, stated before it starts.

The defaults plan the whole contest (21 entries, 5 modes) at 56.3 min on the 2-core machine
(extra pairs 5 min of it, builds not counted) and `--quick` at 12.1. How they were chosen: a
sample's own sampling error is negligible after a second of wrk (100 000 answers and more),
while the shared machine's drift from minute to minute is what spreads the repetitions
(2-second runs of 23 Nov on the busy machine: 15-40 % coefficient of variation; the quiet run
of 22 Nov with 10-second runs: 4-11 % min-max spread), and the gate treats 5 % as its noise
floor. So the time goes into interleaved repetitions rather than long ones: 3 repetitions of
3 s after 1 s of warm-up (at least 1 s so that a JIT compiles the hot path before it is
measured). --quick is a smoke test: 1 repetition of 1 s, no warm-up, but an entry's own
`warmup_s` still applies (a JVM measured cold is wrong, not short): java 4 s, js-bun 8 s,
java-seed 16 s and spring-boot 60 s (each about twice what its CPU per request took to settle,
25 Nov); a warm-up steady at half its bound ends sooner.

Measured costs (run 20261128-135607, the quiet 2-core KVM guest, unless said): a sample takes
its expected warm-up (expected_warmup_s), its duration, SAMPLE_OVERHEAD_S for the fresh
server less what a warm-up's lead saves, and STEAL_REPEAT_SHARE of a load run repeated for
steal (sample_s): so reckoned, that run's 315 samples come to 3465 s (before the repeat on
the warm server and the lead, which it did not have) against the 3581 s they took; the plan
it printed (4.5 s a sample) said 2678. `verify` 13 s for an `ours` entry (quick 9 s) and 36 s
for a peer (quick 33 s: its unanswered cases wait for their deadlines), run VERIFY_AT_ONCE at
a time (140 s for the 19 entries in that run, 151 planned); callgrind about 1.3 s per native
entry and mode at the quick count. Each bench's own figures are in its run.json `timing`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.model import Config
from ..core.modes import runs_in
from ..entries.manifest import Entry
from ..entries.outside import Outside
from ..entries.remote import Remote
from ..load.warmup import MIN_SHARE, STEADY_WINDOWS, WINDOW_S, lead_seconds, warmup_s

DURATION_S, WARMUP_S, REPETITIONS = 3, 1, 3
QUICK_DURATION_S, QUICK_WARMUP_S, QUICK_REPETITIONS = 1, 0, 1
# Extra rounds (workflows/rounds.py): a ratio whose paired 95% interval is wider than ±3% gets
# pairs of samples taken back to back, at most MAX_PAIRS pairs in all, the ranking modes'
# ratios first (pairing.next_round), within what the plan has left when they start
# (pairs_budget_s): PAIR_BUDGET_S planned, more when the samples took less than planned, less
# when they took more, so that the bench ends within its plan and `arena bench` under an hour
# here. Run 20261128-205558 planned 56.5 min with 7 min of pairs and took 63 (3 min of it
# spring-boot's samples hung in wrk, since fixed; 42% of samples repeated for steal, not 31%).
# 7 min bought 33 pairs (13 s a pair at the defaults, more for a JVM's warm-up); at the
# pair-to-pair spread of run 20261128-135607 (log ratios' sd 12% in keepalive-capped, 9% in
# close-capped, median of 39 ratios each) a ratio needs about 90 pairs for ±3%, so the
# budget narrows the ranking modes' intervals rather than bringing many to ±3%.
MAX_PAIRS = 10
PAIR_BUDGET_S = 300.0
VERIFY_AT_ONCE = 3  # verifications at once: a peer's mostly waits for deadlines, not CPU
VERIFY_S = {"ours": 13.0, "peer": 36.0}  # one entry's `arena verify`, measured
VERIFY_QUICK_S = {"ours": 9.0, "peer": 33.0}
# What a sample costs beyond its warm-up and load run, measured in run 20261128-135607 (quiet
# 2-core KVM guest, 315 samples in 3581 s): 1.15 s for each fresh server (start, readiness,
# the checked answers, the warm-up windows' gaps, stop), and its load run repeated, on the
# same warm server, when its CPUs were stolen from (98 of the 315, 31%; measure.keep_unstolen;
# 161 of 381, 42%, in run 20261128-205558). A repeat seldom escapes: stolen again 61 of 107
# times (20261128-135607), 127 of 161 (20261128-205558), 58 of 64 in the first 99 samples of a
# run stopped at 22:49 the same evening (65% of them repeated, on course for 62 min). So the
# repeats are budgeted, not left to the neighbours: at most STEAL_REPEAT_SHARE of the samples
# measured so far (may_repeat), which the plan counts in full; a stolen sample kept unrepeated
# is flagged by the report like one stolen twice (kept samples stolen from read 4-6% dearer
# than their median).
SAMPLE_OVERHEAD_S = 1.15
# A warm-up's lead (warmup.py) runs as one wrk run what were 1 s windows, each of which cost this
# beyond its second (28 Nov: 1 s runs took 1.2-1.6 s on the busy machine; at most 0.27 s on
# the quiet one, where starts, checks and stops take the rest of SAMPLE_OVERHEAD_S).
WINDOW_GAP_S = 0.25
STEAL_REPEAT_SHARE = 0.42
STEAL_REPEAT_EXTRA_S = 0.1  # a repeat's checks around its load run
START_S = 0.5  # one timed start: exec, the first correct 302, stop (a JVM takes longer)
INSTRUCTIONS_S = {True: 1.5, False: 3.7}  # callgrind per native entry and mode, by quick (default: 10 in 37 s, 28 Nov)
INSTRUCTION_MODES = 2
DESCRIBE_S = 6.0  # the machine's description (compilers' --version) and the reports


@dataclass(frozen=True)
class Estimate:
    """Seconds each stage of a bench is expected to take."""

    entries: int
    samples: int
    verify_s: float
    starts_s: float
    samples_s: float
    instructions_s: float
    pairs_s: float = 0.0  # the extra rounds: what the wide ratios could take, at most PAIR_BUDGET_S

    @property
    def total_s(self) -> float:
        return DESCRIBE_S + self.verify_s + self.starts_s + self.samples_s + self.instructions_s + self.pairs_s


def estimate(entries: list[Entry], cfg: Config, verify: bool = True) -> Estimate:
    """The expected duration of a bench of these entries with cfg (builds not counted)."""
    per_verify = VERIFY_QUICK_S if cfg.quick else VERIFY_S
    # A running server (--url) is neither verified nor started; a --cmd server is not verified.
    started = [e for e in entries if not isinstance(e, Remote)]
    verified = [
        per_verify.get(e.kind, 0.0) for e in started if verify and e.kind != "floor" and not isinstance(e, Outside)
    ]
    verify_s = max(sum(verified) / VERIFY_AT_ONCE, max(verified, default=0.0))
    per_entry = {e.name: sum(runs_in(e.tier, m) for m in cfg.modes) * cfg.repetitions for e in entries}
    samples = sum(per_entry.values())
    natives = sum(1 for e in entries if e.native)
    return Estimate(
        pairs_s=0.0 if cfg.quick else min(PAIR_BUDGET_S, most_pairs_s(entries, cfg)),
        entries=len(entries),
        samples=samples,
        verify_s=verify_s,
        starts_s=len(started) * cfg.startup_runs * START_S,
        samples_s=sum(per_entry[e.name] * sample_s(e, cfg) for e in entries),
        instructions_s=natives * INSTRUCTION_MODES * INSTRUCTIONS_S[cfg.quick],
    )


def expected_warmup_s(bound_s: int) -> float:
    """Seconds a warm-up bounded by bound_s is expected to run (warmup.until_steady): a bound too
    short to judge runs whole; a judged one runs at least MIN_SHARE of it and ends when steady,
    measured in run 20261128-135607 at 3.9 of 4 s (java), 6.7 of 8 (js-bun), 14.6 of 16
    (java-seed) and 40.9 of 60 (spring-boot): 66.1 s for the four, against 66.0 s for halfway
    between MIN_SHARE of the bound and the bound, the figure taken here."""
    if bound_s < STEADY_WINDOWS * WINDOW_S:
        return float(bound_s)
    return bound_s * (1 + MIN_SHARE) / 2


def sample_s(entry: Entry, cfg: Config) -> float:
    """Seconds one sample of entry is expected to take with cfg: its warm-up, its load run, the
    measured overhead of a fresh server, and the expected share of a steal repeat's load run."""
    repeat = STEAL_REPEAT_SHARE * (cfg.duration_s + STEAL_REPEAT_EXTRA_S)
    bound = warmup_s(entry, cfg)
    judged = bound >= STEADY_WINDOWS * WINDOW_S
    lead = lead_seconds(max(cfg.warmup_s, math.ceil(bound * MIN_SHARE))) if judged else 0
    saved = max(0, lead - WINDOW_S) * WINDOW_GAP_S  # the lead's windows' gaps, in SAMPLE_OVERHEAD_S
    return expected_warmup_s(bound) + cfg.duration_s + SAMPLE_OVERHEAD_S - saved + repeat


def most_pairs_s(entries: list[Entry], cfg: Config) -> float:
    """Seconds the extra rounds would take if every ratio stayed wide up to MAX_PAIRS: per mode,
    each entry against the reference and against its own floor (when they are in the run)."""
    names = {e.name: e for e in entries}
    total = 0.0
    for e in entries:
        own = None if e.kind == "floor" else names.get(e.floor)  # a floor is its own
        tuned = names.get(e.tuned) if e.tuned else None  # the price of the idiom's partner
        partners = {p.name: p for p in (names.get(cfg.reference), own, tuned) if p is not None and p.name != e.name}
        modes = sum(runs_in(e.tier, m) for m in cfg.modes)
        for p in partners.values():
            pair_s = sample_s(e, cfg) + sample_s(p, cfg)
            total += max(0, MAX_PAIRS - cfg.repetitions) * pair_s * modes
    return total


def may_repeat(repeats: int, sampled: int) -> bool:
    """Whether the sample being measured, the sampled-th of the run (itself counted), may have
    its load run repeated for steal when repeats were already: at most STEAL_REPEAT_SHARE of
    the samples so far, so that the repeats keep to the plan whatever the neighbours do."""
    return repeats + 1 <= STEAL_REPEAT_SHARE * sampled


def pairs_budget_s(e: Estimate, spent_s: float) -> float:
    """Seconds the extra rounds may take when the plan's other stages took spent_s (builds not
    counted): what the plan has left before its instruction counts, never below zero."""
    return max(0.0, e.total_s - e.instructions_s - spent_s)


def minutes(seconds: float) -> str:
    """e.g. "4 min 10 s", "45 s"."""
    seconds = round(seconds)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def words(entries: list[Entry], cfg: Config, e: Estimate) -> str:
    """The plan in one paragraph: entries, modes, repetitions, seconds, the estimated duration."""
    names = ", ".join(x.name for x in entries)
    own = ", ".join(f"{x.name} {warmup_s(x, cfg)} s" for x in entries if warmup_s(x, cfg) > cfg.warmup_s)
    return (
        f"plan: {e.entries} entries ({names}) × {len(cfg.modes)} modes ({', '.join(cfg.modes)}) × "
        f"{cfg.repetitions} repetitions = {e.samples} samples of {cfg.warmup_s} s warm-up"
        + (f" ({own}: their own)" if own else "")
        + f" + {cfg.duration_s} s: "
        f"{minutes(e.samples_s)}; verification {minutes(e.verify_s)} ({VERIFY_AT_ONCE} at a time), "
        f"starts {minutes(e.starts_s)}, instruction counts {minutes(e.instructions_s)}, "
        f"extra pairs for ratios wider than ±3% {minutes(e.pairs_s)} (up to {MAX_PAIRS} pairs each, "
        "what the plan has left): "
        f"about {minutes(e.total_s)} in all, builds not counted"
    )
