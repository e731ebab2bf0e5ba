"""Warm means warm: the warm-up runs until the last three 1-second windows are
within 5% of each other (by CPU per request when every window gives it, else requests/s), at
least the run's warm-up and at most its bound; the windows go through run.json and into the
report. Windows are given by a stand-in, not timed."""

import json
from pathlib import Path

from arena.core.model import Run
from arena.load import warmup
from arena.report import build, markdown, warmups


def stand_in(rates: list):
    """run_window over per-second figures (numbers or Windows): a call of n seconds gives the
    mean of the next n (a lead averages its seconds, as one run of wrk would); records the
    seconds asked."""
    asked = []

    def run_window(seconds: int):
        start = sum(asked)
        asked.append(seconds)
        span = rates[start : start + seconds]
        if not isinstance(span[0], warmup.Window):
            return sum(span) / len(span)
        cpu = [w.cpu_us for w in span]
        mean_cpu = None if None in cpu else round(sum(cpu) / len(cpu), 3)
        return warmup.Window(sum(w.rps for w in span) / len(span), mean_cpu)

    return run_window, asked


def test_a_jit_warms_up_until_three_windows_agree_within_five_percent():
    run_window, asked = stand_in([3_000, 9_000, 20_000, 24_000, 25_000, 25_500, 25_200, 25_300, 1])
    got = warmup.until_steady(run_window, bound_s=15, minimum_s=1)  # at least 8 s: half the bound
    # seconds 1-5 are one run, the lead (the rule can judge only from second 8), then 1 s windows
    assert got.rps == [16_200, 25_500, 25_200, 25_300] and got.steady is True and got.lead_s == 5
    assert asked == [5, 1, 1, 1] and got.seconds == 8


def test_a_curve_that_never_settles_stops_at_the_bound_and_says_so():
    run_window, asked = stand_in([1_000 * 2**i for i in range(20)])
    got = warmup.until_steady(run_window, bound_s=10, minimum_s=1)
    assert got.steady is False and got.seconds == 10 and sum(asked) == 10 and asked[0] == 2


def test_the_run_warmup_is_a_minimum_even_when_steady_at_once():
    run_window, _ = stand_in([100.0] * 10)
    assert warmup.until_steady(run_window, bound_s=10, minimum_s=5).seconds == 5


def test_a_bound_under_three_seconds_is_one_run_not_judged():
    run_window, asked = stand_in([50_000.0])
    assert warmup.until_steady(run_window, bound_s=1, minimum_s=1) == warmup.Warmup([50_000.0], None)
    assert asked == [1]
    assert warmup.until_steady(run_window, bound_s=0).rps == []


def test_cpu_per_request_decides_when_every_window_has_it_so_a_cold_plateau_is_not_steady():
    # java-seed, a new connection per request, 25 Nov at load 8-10: requests/s flat at
    # seconds 3-5 while the CPU per request was still 2.6 times its compiled cost
    rps = [500, 2_200, 2_600, 2_500, 2_600, 2_200, 3_500, 6_400, 5_300, 6_100, 3_700, 3_300, 3_600]
    cpu = [841.5, 219.4, 180.5, 141.1, 141.4, 153.3, 129.2, 63.9, 94.5, 53.7, 55.7, 54.2, 55.8]
    run_window, _ = stand_in([warmup.Window(r, c) for r, c in zip(rps, cpu, strict=True)])
    got = warmup.until_steady(run_window, bound_s=15, minimum_s=1)
    assert got.steady is True and got.cpu_us is not None  # judged on CPU per request
    assert got.seconds == 12 and got.cpu_us[-3:] == [53.7, 55.7, 54.2]
    assert got.rps == [sum(rps[:5]) / 5, *rps[5:12]]  # the lead (seconds 1-5), then the windows
    # the same requests/s alone end it at second 5, cold, once half a bound of 6 s has run
    run_window, _ = stand_in(rps)
    assert warmup.until_steady(run_window, bound_s=6, minimum_s=1).seconds == 5


# spring-boot, a new connection per request, 25 Nov at load 14-17: CPU µs per request per
# second of warm-up; 1.83-1.92 ms at seconds 4-6 is the interpreter's plateau, not the end
SPRING_CLOSE_CPU = [
    3469.4, 3015.9, 2727.3, 3275.9, 1833.3, 1842.1, 1917.1, 1694.9, 1746.0, 1220.5, 833.3, 756.5,
    833.3, 858.3, 824.5, 771.0, 900.6, 468.8, 352.8, 327.5, 300.8, 1176.5, 595.2, 405.7, 1176.5,
    777.8, 592.6, 636.4, 927.8, 342.8, 334.1, 284.3, 254.4, 243.4, 230.9, 264.3, 235.8, 195.3,
    193.3, 186.6, 208.0, 194.4, 188.0, 205.1, 190.2,
]  # fmt: skip


def test_a_jit_plateau_in_the_first_half_of_the_bound_does_not_end_the_warm_up():
    windows = [warmup.Window(1000.0, c) for c in SPRING_CLOSE_CPU]
    run_window, _ = stand_in(windows)
    got = warmup.until_steady(run_window, bound_s=45, minimum_s=1)
    assert got.steady is True and got.seconds == 40 and max(got.cpu_us[-3:]) < 200
    # without the half-bound minimum, the rule would have stopped on the plateau at second 7
    assert warmup.is_steady(SPRING_CLOSE_CPU[:7]) and SPRING_CLOSE_CPU[6] > 9 * 200


def test_a_window_without_cpu_falls_back_to_requests_per_second():
    windows = [warmup.Window(100.0, 9.0), warmup.Window(100.0, None), warmup.Window(101.0, 30.0)]
    run_window, _ = stand_in(windows)
    got = warmup.until_steady(run_window, bound_s=5, minimum_s=1)
    assert got.steady is True and got.cpu_us is None and got.seconds == 3  # judged on requests/s


def test_a_short_bound_keeps_the_one_window_cpu():
    run_window, asked = stand_in([warmup.Window(50_000.0, 12.5)])
    assert warmup.until_steady(run_window, bound_s=2) == warmup.Warmup([50_000.0], None, [12.5])
    assert asked == [2]


def test_the_windows_go_through_run_json_and_the_report_shows_them():
    doc = json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text())
    run = Run.load(doc)
    run.samples[0].warmup_rps, run.samples[0].warmup_steady = [3000.0, 20000.0, 24000.0, 24500.0, 24200.0], True
    run.samples[0].warmup_cpu_us = [310.0, 48.5, 40.1, 39.9, 40.3]
    again = Run.load(run.to_json())
    assert again.samples[0].warmup_rps == run.samples[0].warmup_rps and again.samples[0].warmup_steady is True
    assert again.samples[0].warmup_cpu_us == run.samples[0].warmup_cpu_us
    assert again.samples[1].warmup_rps is None and "warmup_rps" not in again.to_json()["samples"][1]
    assert "warmup_cpu_us" not in again.to_json()["samples"][1]
    (part,) = warmups.parts(again)
    assert part.sections[0].table.rows[0][4:] == [
        "steady",
        "310.00, 48.50, 40.10, 39.90, 40.30",
        "3.0k, 20.0k, 24.0k, 24.5k, 24.2k",
    ]
    assert part.sections[0].charts and "## Warm-up until steady" in markdown.render(build(again), [part])


def test_a_lead_shifts_the_report_seconds():
    doc = json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text())
    run = Run.load(doc)
    s = run.samples[0]
    s.warmup_rps, s.warmup_steady, s.warmup_cpu_us, s.warmup_lead_s = [900.0, 1000.0, 1000.0, 1000.0], True, None, 5
    again = Run.load(run.to_json())
    assert again.samples[0].warmup_lead_s == 5 and "warmup_lead_s" not in again.to_json()["samples"][1]
    (part,) = warmups.parts(again)
    assert part.sections[0].table.rows[0][3] == "8"  # a 5 s lead and three 1 s windows
