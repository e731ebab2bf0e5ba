"""Is B different from A? The regression gate's decision (docs/arena/gate.md, "The regression gate").

Two ways, by what was measured:
- Paired timed samples (the gate's: A and B measured one right after the other, so that a
  drift of the machine moves both): decide_paired judges the per-pair ratios B÷A, a Wilcoxon
  signed-rank test on their logarithms (scipy.stats.wilcoxon, two-sided, exact for up to 50
  pairs without ties) at `alpha`, and a bootstrap 95% interval of their median
  (scipy.stats.bootstrap, percentile method, 2 000 resamples, seeded). The change is
  *significant* when p < alpha and the whole interval lies beyond the noise floor (a ratio
  further from 1 than 1 + noise); *no change* when the interval lies inside the noise floor;
  otherwise *inconclusive* (the gate then adds pairs, up to a cap). A drift that spreads each
  side's samples (rust here: 9 → 7 µs per request over one run) cancels in each ratio. The
  exact test's smallest p with n pairs is 2 / 2**n, so at alpha 0.01 it needs 8 pairs
  (min_pairs) to call a change, while "no change" needs only the interval.
- Unpaired timed samples: decide, a Mann–Whitney U test (scipy.stats.mannwhitneyu,
  two-sided, exact for small samples) and the bootstrap interval of the ratio of the two
  sides' medians, with the same outcomes; at alpha 0.01 it needs 5 samples a side. The gate
  decided this way until 25 Nov 2026; no command uses it now (the gate's samples are paired).
- Instruction counts (native entries, callgrind): deterministic to a fraction of a percent,
  so two counts that differ by more than COUNT_CHANGE are a change, with no statistics.

Ratios are written as a factor ≥ 1 with a direction: "1.23× lower" rather than 0.81.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.01  # the false-positive rate per decision (Wilcoxon's or Mann–Whitney's)
CONFIDENCE = 0.95  # of the bootstrap interval
COUNT_CHANGE = 0.01  # instruction counts further apart than this are a change


@dataclass(frozen=True)
class Verdict:
    """B compared with A. ratio: median(B) / median(A), or the median of the pairs' B ÷ A;
    lo–hi its bootstrap interval (for a count, the ratio itself)."""

    metric: str  # e.g. "throughput", "instructions per request (pipeline16)"
    ratio: float
    lo: float
    hi: float
    p: float | None  # the test's p (TESTS); None for a count (no statistics)
    outcome: str  # "significant", "no change", "inconclusive"
    higher_is_better: bool = True
    pairs: int = 0
    test: str = "count"  # a key of TESTS: how the outcome was decided
    criterion: str = ""  # the figure's stable name (the metric without the values it quotes); "": metric
    a: tuple[float, ...] = ()  # the samples it was decided on, A's and B's (pairs: a[i] with b[i])
    b: tuple[float, ...] = ()

    @property
    def name(self) -> str:
        """The criterion, stable across runs (a JUnit test case's name)."""
        return self.criterion or self.metric

    @property
    def worse(self) -> bool:
        return (self.ratio < 1) if self.higher_is_better else (self.ratio > 1)

    def regression(self, threshold: float) -> bool:
        """A significant change for the worse by more than `threshold` (0.05: 5%); for a count
        (p is None) every change is significant already, beyond COUNT_CHANGE."""
        beyond = self.p is None or factor(self.ratio) > 1 + threshold
        return self.outcome == "significant" and self.worse and beyond

    def words(self) -> str:
        """e.g. "throughput 1.23× lower (95% CI 1.15–1.31), significant"."""
        direction = "higher" if self.ratio > 1 else "lower"
        if self.p is None:
            return f"{self.metric} {self.ratio - 1:+.2%} ({factor(self.ratio):.3f}× {direction}), {self.outcome}"
        if (self.lo - 1) * (self.hi - 1) > 0:  # the interval is on one side of 1: as factors
            lo, hi = sorted((factor(self.lo), factor(self.hi)))
            interval = f"{CONFIDENCE:.0%} CI {lo:.2f}–{hi:.2f}"
        else:  # it holds 1: written as B ÷ A
            interval = f"{CONFIDENCE:.0%} CI of B÷A {self.lo:.2f}–{self.hi:.2f}"
        return (
            f"{self.metric} {factor(self.ratio):.2f}× {direction} ({interval}, p = {self.p:.3g}, "
            f"{self.pairs} pairs), {self.outcome}"
        )


TESTS = {  # Verdict.test -> its description, as the gate's verdict files say it
    "wilcoxon": "Wilcoxon signed-rank on log(B/A) of the pairs, two-sided; bootstrap 95% CI of the median B/A",
    "mann-whitney": "Mann-Whitney U, two-sided; bootstrap 95% CI of median(B)/median(A)",
    "count": "a deterministic count: a change beyond its tolerance, no statistics",
}


def min_pairs(alpha: float = ALPHA) -> int:
    """The fewest pairs with which the exact two-sided Wilcoxon signed-rank test can reach
    p < alpha: its smallest p with n pairs (every ratio on one side) is 2 / 2**n."""
    n = 1
    while 2 / 2**n >= alpha:
        n += 1
    return n


def factor(ratio: float) -> float:
    """A ratio as a factor ≥ 1: 0.8 → 1.25, 1.25 → 1.25."""
    return ratio if ratio >= 1 else 1 / ratio


def _median_ratio(b, a, axis=-1):
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def _interval(samples: tuple, statistic, resamples: int, seed: int) -> tuple[float, float]:
    """The bootstrap confidence interval (lo, hi) of statistic over samples: percentile method,
    resamples draws seeded by seed; statistic takes axis= (scipy then vectorizes it)."""
    ci = stats.bootstrap(
        samples,
        statistic,
        n_resamples=resamples,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    return float(ci.low), float(ci.high)


def _outcome(p: float, lo: float, hi: float, noise: float, alpha: float) -> str:
    """The verdict on an interval [lo, hi] of B ÷ A and a p-value: significant when the test
    rejects and the interval lies outside the noise band, no change when it lies inside."""
    band_lo, band_hi = 1 / (1 + noise), 1 + noise
    if p < alpha and (hi < band_lo or lo > band_hi):
        return "significant"
    if band_lo <= lo and hi <= band_hi:
        return "no change"
    return "inconclusive"


def decide(
    a: list[float],
    b: list[float],
    metric: str = "throughput",
    noise: float = 0.02,
    alpha: float = ALPHA,
    higher_is_better: bool = True,
    resamples: int = 2000,
    seed: int = 0,
) -> Verdict:
    """B against A from timed samples (see the module's docstring). noise: the noise floor
    as a fraction (0.02: ratios within 1/1.02–1.02 are noise)."""
    if len(a) < 2 or len(b) < 2 or min(a) <= 0 or min(b) <= 0:
        raise ValueError("each side needs at least 2 positive samples")
    p = float(stats.mannwhitneyu(b, a, alternative="two-sided").pvalue)
    lo, hi = _interval((np.asarray(b, float), np.asarray(a, float)), _median_ratio, resamples, seed)
    ratio = float(_median_ratio(np.asarray(b, float), np.asarray(a, float)))
    outcome = _outcome(p, lo, hi, noise, alpha)
    return Verdict(
        metric, ratio, lo, hi, p, outcome, higher_is_better, min(len(a), len(b)), "mann-whitney", a=tuple(a), b=tuple(b)
    )


def decide_paired(
    a: list[float],
    b: list[float],
    metric: str = "throughput",
    noise: float = 0.02,
    alpha: float = ALPHA,
    higher_is_better: bool = True,
    resamples: int = 2000,
    seed: int = 0,
) -> Verdict:
    """B against A from pairs (a[i], b[i]) measured together (see the module's docstring)."""
    if len(a) != len(b) or len(a) < 2 or min(a) <= 0 or min(b) <= 0:
        raise ValueError("needs at least 2 pairs of positive samples")
    ratios = np.asarray(b, float) / np.asarray(a, float)
    logs = np.log(ratios)
    p = 1.0 if not np.any(logs) else float(stats.wilcoxon(logs, alternative="two-sided").pvalue)
    if np.ptp(ratios) == 0:  # every pair the same ratio: no spread to resample
        lo = hi = float(ratios[0])
    else:
        lo, hi = _interval((ratios,), np.median, resamples, seed)
    outcome = _outcome(p, lo, hi, noise, alpha)
    median, n = float(np.median(ratios)), len(ratios)
    return Verdict(metric, median, lo, hi, p, outcome, higher_is_better, n, "wilcoxon", a=tuple(a), b=tuple(b))


HALF_WIDTH = 0.03  # a paired ratio is steady when its interval's half-width is within this share of it


@dataclass(frozen=True)
class PairedRatio:
    """num ÷ den from pairs measured back to back: median_ratio is the median of the per-pair
    ratios, lo–hi the bootstrap 95% interval of that median (decide_paired's); lo and hi are
    None with fewer than 2 pairs (one pair has no spread to resample)."""

    median_ratio: float
    lo: float | None
    hi: float | None
    pairs: int

    @property
    def half_width(self) -> float | None:
        """Half the interval as a share of the ratio (0.03: ±3%); None without an interval."""
        return None if self.lo is None or self.hi is None else (self.hi - self.lo) / 2 / self.median_ratio

    @property
    def steady(self) -> bool:
        """The interval's half-width is within HALF_WIDTH of the ratio."""
        return self.half_width is not None and self.half_width <= HALF_WIDTH

    @property
    def significant(self) -> bool:
        """The interval excludes 1.00 (touching counts as holding it)."""
        return self.lo is not None and self.hi is not None and not (self.lo <= 1 <= self.hi)


def paired_ratio(num: list[float], den: list[float]) -> PairedRatio:
    """The ratio num[i] ÷ den[i] over pairs taken back to back, with decide_paired's bootstrap
    interval of its median; raises ValueError without a pair or with a value <= 0."""
    if len(num) != len(den) or not num or min(num) <= 0 or min(den) <= 0:
        raise ValueError("a paired ratio needs pairs of positive values")
    if len(num) == 1:
        return PairedRatio(num[0] / den[0], None, None, 1)
    v = decide_paired(den, num)
    return PairedRatio(v.ratio, v.lo, v.hi, v.pairs)


def decide_count(a: float, b: float, metric: str, change: float = COUNT_CHANGE) -> Verdict:
    """Two instruction counts: a change when they differ by more than `change` (fewer is better)."""
    ratio = b / a
    outcome = "significant" if abs(ratio - 1) > change else "no change"
    return Verdict(metric, ratio, ratio, ratio, None, outcome, higher_is_better=False, pairs=1, a=(a,), b=(b,))


def rank_correlation(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation of two figures of the same entries (scipy.stats.spearmanr):
    1 when the two order them alike, -1 when reversed; nan with fewer than 3 entries."""
    if len(a) < 3:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)
