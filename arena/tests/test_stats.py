"""arena.stats: medians, summaries, ratios with significance, grouping of run.json samples."""

import pytest

from arena.analysis.stats import (
    METRICS,
    Ratio,
    StatsError,
    Summary,
    group_samples,
    median,
    ratio,
    spread,
    summarize,
)
from arena.core.sample import Sample


@pytest.mark.parametrize(
    "values, expected",
    [
        ([5.0], 5.0),  # one value is its own median
        ([3, 1, 2], 2.0),  # odd count: the middle after sorting
        ([4, 1, 3, 2], 2.5),  # even count: mean of the two middle values
        ([10, 10, 20, 20], 15.0),  # even count with ties
        ([1, 2, 1000], 2.0),  # an outlier does not move the median
    ],
)
def test_median(values, expected):
    assert median(values) == expected


def test_min_max_spread():
    assert spread([3, 1, 2]) == 2.0


def test_summarize_gives_median_lo_hi_n():
    assert summarize([150.0, 148.0, 152.0]) == Summary(median=150.0, lo=148.0, hi=152.0, n=3)


def test_summarize_accepts_a_generator():
    assert summarize(x for x in [2, 1]) == Summary(1.5, 1.0, 2.0, 2)


@pytest.mark.parametrize("function", [median, spread, summarize])
def test_empty_input_raises_a_clear_error(function):
    with pytest.raises(StatsError, match="no values"):
        function([])


def test_ratio_of_separated_samples_is_significant():
    assert ratio([150, 148, 152], [137, 130, 140]) == Ratio(150 / 137, 148 / 140, 152 / 130, True)


def test_ratio_of_overlapping_samples_is_not_significant():
    assert ratio([30, 28, 33], [31, 27, 32]).significant is False


def test_ratio_of_touching_ranges_is_not_significant():
    assert ratio([10, 11, 12], [12, 13, 14]).significant is False


def test_ratio_below_one_can_be_significant():
    assert ratio([50, 48, 52], [137, 130, 140]).significant is True


def test_ratio_of_single_values_is_never_significant():
    assert ratio([2.0], [1.0]).significant is False


def test_ratio_range_comes_from_the_extreme_pairings():
    r = ratio([2, 4, 3], [1, 2])
    assert (r.median_ratio, r.lo, r.hi) == (3 / 1.5, 2 / 2, 4 / 1)


@pytest.mark.parametrize(
    "a, b, message",
    [
        ([], [1.0], "first sample"),
        ([1.0], [], "second sample"),
        ([1.0], [0.0, 1.0], "value <= 0"),
    ],
)
def test_ratio_rejects_what_it_cannot_divide(a, b, message):
    with pytest.raises(StatsError, match=message):
        ratio(a, b)


def _sample(entry="rust", mode="keepalive", rep=0, **over) -> Sample:
    sample = {
        "entry": entry,
        "mode": mode,
        "rep": rep,
        "duration_s": 10.0,
        "requests": 1000,
        "rps": 100.0,
        "latency_us": {"p50": 300, "p90": 500, "p99": 900, "max": 5000},
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
        "non_3xx": 0,
        "server_cpu_s": 0.0061,
        "cpu_us_per_req": 6.25,
        "client_cpu_share": 0.5,
        "server_cpu_share": 0.9,
        "peak_rss_bytes": 1900000,
        "pss_bytes": 1500000,
        "client_bound": False,
    }
    sample.update(over)
    return Sample.load(sample)


def test_group_samples_keys_by_entry_and_mode_in_first_seen_order():
    groups = group_samples([_sample(), _sample(mode="close"), _sample(entry="go"), _sample(rep=1)])
    assert list(groups) == [("rust", "keepalive"), ("rust", "close"), ("go", "keepalive")]
    assert groups[("rust", "keepalive")].reps == [0, 1]


def test_group_samples_collects_every_metric():
    series = group_samples([_sample(rps=1.0), _sample(rep=1, rps=2.0)])[("rust", "keepalive")]
    assert {m: series[m] for m in METRICS} == {
        "rps": [1.0, 2.0],
        "cpu_us_per_req": [6.25, 6.25],
        "efficiency": [160000.0, 160000.0],
        "latency_p50_us": [300.0, 300.0],
        "latency_p90_us": [500.0, 500.0],
        "latency_p99_us": [900.0, 900.0],
        "peak_rss_bytes": [1900000.0] * 2,
        "pss_bytes": [1500000.0] * 2,
    }


def test_client_bound_samples_are_kept_and_flagged():
    series = group_samples([_sample(rps=1.0), _sample(rep=1, rps=2.0, client_bound=True)])[("rust", "keepalive")]
    assert (series["rps"], series.client_bound_reps, series.client_bound) == ([1.0, 2.0], [1], 1)


def test_null_metric_is_counted_as_missing_not_dropped_silently():
    series = group_samples([_sample(cpu_us_per_req=None), _sample(rep=1)])[("rust", "keepalive")]
    assert (series["cpu_us_per_req"], series.missing["cpu_us_per_req"]) == ([6.25], 1)
    assert series.missing["efficiency"] == 1


def test_errors_non_3xx_and_requests_are_summed():
    series = group_samples(
        [
            _sample(errors={"connect": 0, "read": 2, "write": 0, "timeout": 1}, non_3xx=3),
            _sample(rep=1, errors={"connect": 0, "read": 1, "write": 0, "timeout": 0}, non_3xx=1),
        ]
    )
    series = series[("rust", "keepalive")]
    assert (series.errors["read"], series.error_total, series.non_3xx, series.requests) == (3, 4, 4, 2000)
