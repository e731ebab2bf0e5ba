"""The gate's statistics on synthetic samples whose answer is known."""

import numpy as np
import pytest
from scipy.stats import binomtest

from arena.analysis.compare import ALPHA, decide, decide_count, decide_paired, min_pairs


def normal(rng, mean: float, n: int, sd: float = 0.02) -> list[float]:
    """n samples around mean with a relative standard deviation sd."""
    return list(rng.normal(mean, sd * mean, n))


def test_a_ten_percent_drop_is_found_as_a_significant_regression():
    rng = np.random.default_rng(1)
    verdict = decide(normal(rng, 100_000, 7), normal(rng, 90_000, 7), noise=0.02)
    assert verdict.outcome == "significant"
    assert verdict.worse and verdict.regression(threshold=0.05)
    assert 1 / verdict.hi > 1.05 and verdict.lo <= 0.9 / 0.98 <= verdict.hi * 1.1
    assert verdict.words().startswith("throughput 1.11× lower (95% CI 1.")
    assert verdict.words().endswith("significant")


def test_a_ten_percent_gain_is_significant_but_not_a_regression():
    rng = np.random.default_rng(2)
    verdict = decide(normal(rng, 100, 7), normal(rng, 110, 7))
    assert verdict.outcome == "significant" and not verdict.regression(0.05)
    assert "higher" in verdict.words()


def test_equal_distributions_are_flagged_at_most_at_the_false_positive_rate():
    rng = np.random.default_rng(3)
    trials = 400
    flagged = sum(
        decide(normal(rng, 100, 8, 0.05), normal(rng, 100, 8, 0.05), noise=0.0, resamples=200).outcome == "significant"
        for _ in range(trials)
    )
    # Consistent with a rate of at most ALPHA: a one-sided binomial test against ALPHA does
    # not reject (it would, at this size, for a true rate of 3% or more).
    assert binomtest(flagged, trials, ALPHA, alternative="greater").pvalue > 0.001, flagged


def test_a_small_sample_of_a_small_change_is_inconclusive_not_a_guess():
    rng = np.random.default_rng(4)
    verdict = decide(normal(rng, 100, 3, 0.05), normal(rng, 97, 3, 0.05), noise=0.01)
    assert verdict.outcome == "inconclusive"


def test_a_change_inside_the_noise_floor_is_no_change():
    rng = np.random.default_rng(5)
    verdict = decide(normal(rng, 100, 15, 0.002), normal(rng, 100.1, 15, 0.002), noise=0.02)
    assert verdict.outcome == "no change" and not verdict.regression(0.0)


@pytest.mark.parametrize(
    ("a", "b", "outcome", "regression"),
    [(2082, 2082 * 1.02, "significant", True), (690, 690 * 0.9, "significant", False), (690, 693, "no change", False)],
)
def test_instruction_counts_change_beyond_one_percent_without_statistics(a, b, outcome, regression):
    verdict = decide_count(a, b, "instructions per request")
    assert verdict.outcome == outcome and verdict.regression(0.0) == regression and verdict.p is None


def drifting(rng, n: int, change: float, noise: float = 0.01) -> tuple[list[float], list[float]]:
    """n pairs whose level drifts from 9 to 7 (the machine, A and B alike), B times change."""
    level = np.linspace(9.0, 7.0, n)
    return list(level * rng.normal(1, noise, n)), list(level * change * rng.normal(1, noise, n))


def test_a_drift_shared_by_each_pair_cancels_when_paired_and_not_when_pooled():
    a, b = drifting(np.random.default_rng(5), 15, 1.0)
    assert decide(a, b, noise=0.05).outcome == "inconclusive"  # the drift spreads each side
    paired = decide_paired(a, b, noise=0.05)
    assert paired.outcome == "no change" and 0.98 < paired.lo <= paired.hi < 1.02


def test_a_ten_percent_change_under_drift_is_found_when_paired():
    a, b = drifting(np.random.default_rng(6), 9, 1.10)
    verdict = decide_paired(a, b, "CPU per request", noise=0.05, higher_is_better=False)
    assert verdict.outcome == "significant" and verdict.regression(0.05) and verdict.pairs == 9
    assert decide(a, b, "CPU per request", noise=0.05, higher_is_better=False).outcome == "inconclusive"


def test_equal_pairs_are_flagged_at_most_at_the_false_positive_rate():
    rng = np.random.default_rng(7)
    trials = 300
    flagged = sum(
        decide_paired(*drifting(rng, 8, 1.0, 0.05), noise=0.0, resamples=200).outcome == "significant"
        for _ in range(trials)
    )
    assert binomtest(flagged, trials, ALPHA, alternative="greater").pvalue > 0.001, flagged


def test_pairs_that_agree_exactly_are_no_change_and_unequal_lengths_an_error():
    assert decide_paired([5.0, 6.0, 7.0], [5.0, 6.0, 7.0]).outcome == "no change"
    with pytest.raises(ValueError):
        decide_paired([1.0, 2.0], [1.0])


@pytest.mark.parametrize(("alpha", "pairs"), [(0.01, 8), (0.05, 6), (0.1, 5)])
def test_min_pairs_is_the_fewest_with_which_wilcoxon_can_reach_alpha(alpha, pairs):
    assert min_pairs(alpha) == pairs
    one_sided = [1.0] * pairs, [1.5 + i / 100 for i in range(pairs)]  # every pair's B above its A
    assert decide_paired(*one_sided, alpha=alpha).p < alpha
    fewer = [x[: pairs - 1] for x in one_sided]
    assert decide_paired(*fewer, alpha=alpha).outcome == "inconclusive"  # the same change, one pair short
