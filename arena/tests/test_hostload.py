"""The machine around a sample: steal time from /proc/stat, the load average, and a
sample taken under steal repeated once, then kept and flagged, never dropped silently."""

import json

import pytest
from test_bench import sample
from test_report import FIXTURE, render_markdown, warnings

from arena.bench import measure as bench
from arena.core.model import Run
from arena.core.sample import Sample
from arena.host import hostload

STAT = """cpu  434355 23118 204561 65446 63090 0 54210 367 0 0
cpu0 220269 11974 96885 32779 36804 0 24073 185 0 0
cpu1 214085 11144 107675 32667 26285 0 30137 181 0 0
intr 1 2 3
"""


def later(text: str, cpu: str, busy: int, stolen: int) -> str:
    """text with busy ticks of user time and stolen ticks of steal added to one cpu line."""
    out = []
    for line in text.splitlines():
        name, *f = line.split()
        if name == cpu:
            f[0], f[7] = str(int(f[0]) + busy), str(int(f[7]) + stolen)
        out.append(" ".join([name, *f]))
    return "\n".join(out)


def test_steal_is_the_stolen_share_of_the_sample_cpus_time_only():
    before = hostload.Jiffies.parse(STAT)
    after = hostload.Jiffies.parse(later(later(STAT, "cpu0", 270, 30), "cpu1", 300, 0))
    assert before.cpus[0] == (220269 + 11974 + 96885 + 32779 + 36804 + 0 + 24073 + 185, 185)
    assert hostload.steal_share(before, after, [0]) == pytest.approx(0.1)
    assert hostload.steal_share(before, after, [0, 1]) == pytest.approx(0.05)
    assert hostload.steal_share(before, after, [1]) == 0
    assert hostload.steal_share(before, after, [7]) is None  # a CPU /proc/stat does not list
    assert hostload.steal_share(None, after, [0]) is None


def test_cpu_lists_read_as_taskset_writes_them():
    assert hostload.cpu_list("0") == [0] and hostload.cpu_list("0-2,5") == [0, 1, 2, 5]
    with pytest.raises(ValueError):
        hostload.cpu_list("zero")


def test_this_machine_gives_a_steal_share_and_a_load_average():
    before = hostload.Jiffies.read()
    assert before is not None and 0 in before.cpus
    assert hostload.load_1m() is not None and hostload.load_1m() >= 0


def stolen(share: float | None) -> Sample:
    s = sample(1.0, 0.5)
    s.steal_share = share
    return s


@pytest.mark.parametrize(
    ("shares", "calls", "kept", "retry"),
    [
        ([0.001], 1, 0.001, None),  # not stolen: measured once
        ([None], 1, None, None),  # unknown (no /proc/stat): measured once, never retried blind
        ([0.05, 0.004], 2, 0.004, 0.05),  # stolen, repeated, the repeat kept with the first's share
        ([0.05, 0.03], 2, 0.03, 0.05),  # stolen twice: kept (flagged by the report), not a third time
    ],
)
def test_a_load_run_under_steal_is_repeated_once_and_the_repeat_kept(shares, calls, kept, retry):
    made = iter(shares)
    seen = []
    s = bench.keep_unstolen(lambda: seen.append(1) or stolen(next(made)))
    assert (len(seen), s.steal_share, s.steal_retry) == (calls, kept, retry)


def test_a_stolen_load_run_is_kept_unrepeated_when_the_repeats_budget_refuses():
    asked = []
    s = bench.keep_unstolen(lambda: stolen(0.05), lambda: asked.append(1) or False)
    assert (asked, s.steal_share, s.steal_retry, s.under_steal) == ([1], 0.05, None, True)
    bench.keep_unstolen(lambda: stolen(0.001), lambda: asked.append(1) or False)
    assert asked == [1]  # an unstolen run does not ask


def test_steal_load_and_cgroup_time_survive_run_json_and_are_absent_when_not_recorded():
    doc = json.loads(FIXTURE.read_text())
    doc["samples"][0].update(steal_share=0.031, load_1m=3.2, steal_retry=0.05, cgroup_cpu_s=1.2345)
    run = Run.load(doc)
    s = run.samples[0]
    assert (s.steal_share, s.load_1m, s.steal_retry, s.cgroup_cpu_s, s.under_steal) == (0.031, 3.2, 0.05, 1.2345, True)
    again = run.to_json()
    assert again["samples"][0]["cgroup_cpu_s"] == 1.2345 and "steal_share" not in again["samples"][1]
    assert not run.samples[1].under_steal


def test_the_report_says_which_samples_were_stolen_or_repeated_and_a_cgroup_that_disagrees():
    doc = json.loads(FIXTURE.read_text())
    rust = [s for s in doc["samples"] if s["entry"] == "rust" and s["mode"] == "keepalive"]
    rust[0].update(steal_share=0.031, steal_retry=0.05, load_1m=3.2)
    rust[1].update(steal_share=0.001, steal_retry=0.04, load_1m=4.1)
    rust[2].update(steal_share=0.0, cgroup_cpu_s=rust[2]["server_cpu_s"] * 1.5, load_1m=3.9)
    said = [w for w in warnings(doc) if w.startswith("rust in mode keepalive")]
    assert said[0].startswith("rust in mode keepalive: 1 repetition taken under steal, 1 (3.1%) of the server's")
    assert said[1] == (
        "rust in mode keepalive: repeated for steal, the first attempt discarded: repetition 2 (first 4.0%)"
    )
    assert "the server's cgroup counted" in said[2] and "repetition 3" in said[2]
    md = render_markdown(doc)
    assert "1-minute load average 3.20–4.10 at the samples' ends" in md and "steal time" in md


def test_a_cgroup_within_procs_ticks_raises_no_warning():
    doc = json.loads(FIXTURE.read_text())
    s = doc["samples"][0]
    s["cgroup_cpu_s"] = s["server_cpu_s"] + 0.012  # /proc's 10 ms ticks
    assert not [w for w in warnings(doc) if "cgroup counted" in w]
