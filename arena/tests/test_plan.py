"""The bench states its plan; the defaults keep the contest to 100 s an entry (30 minutes for the 18
entries it had when the budget was set; it grows with the contest, not per entry), --quick to 16 s an
entry (plus the JIT entries' own warm-ups: a figure measured cold is wrong, not short)."""

from pathlib import Path

from arena import plan
from arena.entries import discover
from arena.model import DEFAULT_MODES, Config

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


def test_the_whole_contest_takes_at_most_100_s_an_entry_with_the_defaults():
    entries = contest()
    assert len(entries) >= 15
    estimate = plan.estimate(entries, config(quick=False))
    assert estimate.samples == len(entries) * len(DEFAULT_MODES) * 3
    assert estimate.total_s < 100 * len(entries)


def test_quick_takes_at_most_16_s_an_entry_plus_the_jit_entries_own_warm_ups():
    cfg = config(quick=True)
    own = sum((e.warmup_s - cfg.warmup_s) * len(cfg.modes) for e in contest() if e.warmup_s > cfg.warmup_s)
    assert 0 < own < 2.5 * 60  # java-seed's 10 s and spring-boot's 15 s in each of 5 modes
    assert plan.estimate(contest(), cfg).total_s - own < 16 * len(contest())


def test_the_plan_names_entries_modes_repetitions_seconds_and_duration():
    entries = [e for e in contest() if e.name in ("rust", "floor")]
    cfg = config(quick=False)
    words = plan.words(entries, cfg, plan.estimate(entries, cfg))
    assert words.startswith("plan: 2 entries (")
    assert "× 5 modes (keepalive, pipeline16, close, keepalive-capped, close-capped) × 3 repetitions" in words
    assert "= 30 samples of 1 s warm-up + 3 s: 2 min 15 s" in words  # 30 × 4.5 s
    assert "in all" in words


def test_verification_runs_several_at_once_but_never_faster_than_the_slowest():
    peers = [e for e in contest() if e.kind == "peer"][:1]
    e = plan.estimate(peers, config(quick=False))
    assert e.verify_s == plan.VERIFY_S["peer"]


def test_minutes_reads_as_minutes_and_seconds():
    assert plan.minutes(45) == "45 s" and plan.minutes(250) == "4 min 10 s"
