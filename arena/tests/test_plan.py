"""The bench states its plan; the defaults keep the contest to 100 s an entry (30 minutes for the 18
entries it had when the budget was set; it grows with the contest, not per entry), --quick to 17 s an
entry (16 until the production peers, whose verifications wait on deadlines), each plus the JIT
entries' own warm-ups: a figure measured cold is wrong, not short. A production entry is measured in
keep-alive only, capped and on a whole core (modes.TIER_MODES), which keeps the full contest under an hour.

The own warm-ups are bounded apart, from what they were measured to need (25 Nov, 1 s
windows of a fresh process under the bench's load, load average 8-17 from other sessions, CPU per
request settled within 10% of its level after 40 s; twice that, as warmup.py asks, since a warm-up
ends early only once half its bound has run and it is steady): spring-boot 25-38 s -> 60 s bound,
java-seed 7-8 s -> 16, servers/java 0-2 s -> 4, js-bun up to 4 s -> 8. Bounds, not durations: a
warm-up that is steady after half its bound ends there."""

from pathlib import Path

from arena.bench import plan
from arena.core.model import Config
from arena.core.modes import DEFAULT_MODES, runs_in
from arena.entries.manifest import discover

REPO = Path(__file__).resolve().parents[2]


def contest() -> list:
    """Every entry of the repository (about 18), as `make bench` measures them."""
    return discover(REPO)


def config(quick: bool) -> Config:
    if quick:
        return Config(
            duration_s=plan.QUICK_DURATION_S,
            warmup_s=plan.QUICK_WARMUP_S,
            repetitions=plan.QUICK_REPETITIONS,
            quick=True,
            startup_runs=1,
        )
    return Config(duration_s=plan.DURATION_S, warmup_s=plan.WARMUP_S, repetitions=plan.REPETITIONS)


def own_warm_ups(cfg: Config) -> float:
    """Seconds the entries' own warm-ups add to a bench with cfg (their bound, every sample)."""
    longer = [e for e in contest() if e.warmup_s > cfg.warmup_s]
    return sum((e.warmup_s - cfg.warmup_s) * modes_of(e, cfg) * cfg.repetitions for e in longer)


def modes_of(entry, cfg: Config) -> int:
    """How many of cfg's modes the entry's tier is measured in."""
    return sum(runs_in(entry.tier, m) for m in cfg.modes)


def test_the_whole_contest_takes_at_most_100_s_an_entry_plus_the_jit_entries_own_warm_ups():
    entries = contest()
    assert len(entries) >= 15
    cfg = config(quick=False)
    estimate = plan.estimate(entries, cfg)
    assert estimate.samples == sum(modes_of(e, cfg) for e in entries) * 3
    own = own_warm_ups(cfg)
    assert (
        0 < own < 25 * 60
    )  # spring-boot 59 s and java-seed 15 over the run's 1 s in 6 samples, js-bun 7 and java 3 in 15
    assert estimate.total_s - estimate.pairs_s - own < 100 * len(entries)
    assert estimate.pairs_s == plan.PAIR_BUDGET_S  # the wide ratios could take more: the budget bounds them
    assert estimate.total_s < 60 * 60  # a full `make bench`, extra pairs included, stays under an hour


def test_quick_takes_at_most_17_s_an_entry_plus_the_jit_entries_own_warm_ups():
    cfg = config(quick=True)
    own = own_warm_ups(cfg)
    assert 0 < own < 8 * 60  # one sample a mode: js-bun 8 s, java 4 in 5; spring-boot 60, java-seed 16 in 2
    # 17 s: the peers' quick verifications (33 s each, 3 at a time) are most of it, 20 peers of 29
    assert plan.estimate(contest(), cfg).total_s - own < 17 * len(contest())


def test_a_production_entry_is_measured_in_keep_alive_only_capped_and_on_a_whole_core():
    from arena.bench.measure import Plan

    entries = [e for e in contest() if e.name in ("rust", "rust-hyper")]
    steps = Plan(entries, config(quick=False)).steps
    modes = {name: {s.mode for s in steps if s.subject.name == name} for name in ("rust", "rust-hyper")}
    assert modes == {"rust": set(DEFAULT_MODES), "rust-hyper": {"keepalive", "keepalive-capped"}}
    assert len(steps) == (5 + 2) * 3


def test_the_plan_names_entries_modes_repetitions_seconds_and_duration():
    entries = [e for e in contest() if e.name in ("rust", "floor")]
    cfg = config(quick=False)
    words = plan.words(entries, cfg, plan.estimate(entries, cfg))
    assert words.startswith("plan: 2 entries (")
    assert "× 5 modes (keepalive, pipeline16, close, keepalive-capped, close-capped) × 3 repetitions" in words
    assert (
        "= 30 samples of 1 s warm-up + 3 s: 3 min 14 s" in words
    )  # 30 × (1 + 3 + 1.15 overhead + 0.42 × 3.1 steal repeats)
    assert "in all" in words


def test_verification_runs_several_at_once_but_never_faster_than_the_slowest():
    peers = [e for e in contest() if e.kind == "peer"][:1]
    e = plan.estimate(peers, config(quick=False))
    assert e.verify_s == plan.VERIFY_S["peer"]


def test_minutes_reads_as_minutes_and_seconds():
    assert plan.minutes(45) == "45 s" and plan.minutes(250) == "4 min 10 s"


def test_steal_repeats_keep_to_their_share_of_the_samples_so_far_whatever_the_neighbours_do():
    repeats = 0
    for sampled in range(1, 101):  # every sample stolen from: a bad evening
        if plan.may_repeat(repeats, sampled):
            repeats += 1
        assert repeats <= plan.STEAL_REPEAT_SHARE * sampled
    assert repeats == int(plan.STEAL_REPEAT_SHARE * 100)
    assert not plan.may_repeat(0, 1) and plan.may_repeat(0, 3)  # 42%: the first repeat waits for the third sample


def test_the_extra_pairs_get_what_the_plan_has_left_before_its_instruction_counts():
    e = plan.estimate(contest(), config(quick=False))
    on_time = e.total_s - e.instructions_s - e.pairs_s  # the other stages took what was planned
    assert plan.pairs_budget_s(e, on_time) == e.pairs_s
    assert plan.pairs_budget_s(e, on_time - 120) == e.pairs_s + 120  # samples quicker than planned
    assert plan.pairs_budget_s(e, on_time + e.pairs_s + 60) == 0  # late: no pairs, never negative
