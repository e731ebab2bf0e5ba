"""Where a bench's time goes: run.json's `timing` holds each stage's wall seconds and
the samples' parts (load runs, warm-ups, conntrack waits, the rest), beside the plan's estimate;
the console says "planned X, took Y". Each sample records its own wall seconds (took_s) and its
warm-up's (warmup_took_s)."""

import json
import time

import pytest
from test_report import FIXTURE

from arena.core.model import Run, Timing
from arena.workflows import bench


def test_timing_and_the_samples_wall_seconds_survive_run_json_and_are_absent_when_not_recorded():
    doc = json.loads(FIXTURE.read_text())
    assert "timing" not in Run.load(doc).to_json() and Run.load(doc).timing is None
    doc["samples"][0].update(took_s=5.2, warmup_took_s=1.01)
    doc["timing"] = Timing(planned_s=600, took_s=660.5, samples_s=500, sampled=30, load_s=90).to_json()
    run = Run.load(doc)
    assert (run.samples[0].took_s, run.samples[0].warmup_took_s) == (5.2, 1.01)
    assert run.timing == Timing(planned_s=600, took_s=660.5, samples_s=500, sampled=30, load_s=90)
    again = run.to_json()
    assert again["timing"]["took_s"] == 660.5 and "took_s" not in again["samples"][1]


def test_a_timing_with_a_wrong_type_names_its_key():
    doc = json.loads(FIXTURE.read_text())
    doc["timing"] = {"planned_s": "soon", "took_s": 1}
    with pytest.raises(ValueError, match="timing.planned_s"):
        Run.load(doc)


def test_timed_adds_the_blocks_seconds_even_when_it_raises():
    t = Timing(planned_s=0, took_s=0)
    with bench._timed(t, "verify_s"):
        time.sleep(0.05)
    with pytest.raises(KeyboardInterrupt), bench._timed(t, "verify_s"):
        time.sleep(0.06)
        raise KeyboardInterrupt
    assert t.verify_s == pytest.approx(0.1, abs=0.05)


def test_the_console_says_planned_and_took_and_where_the_samples_time_went():
    stages = dict(builds_s=12, verify_s=140, starts_s=23, samples_s=3581, pairs_s=539, instructions_s=37)
    parts = dict(sampled=363, load_s=1232, warmup_s=1450, steal_repeats=107, overhead_s=1380)
    t = Timing(planned_s=3466, took_s=4339, **stages, **parts)
    said = bench.timing_words(t)
    assert said.startswith("planned 57 min 46 s (builds not counted), took 72 min 19 s: builds 12 s, ")
    assert "samples 59 min 41 s, extra pairs 8 min 59 s, instruction counts 37 s" in said
    assert "363 samples: load runs 20 min 32 s, warm-ups 24 min 10 s, " in said
    assert "107 steal repeats 23 min 0 s (3.80 s a sample), conntrack" in said
    t.steal_kept = 12
    assert "(3.80 s a sample) (12 more stolen from, kept unrepeated: the repeats' budget spent)" in bench.timing_words(
        t
    )


def test_the_report_says_planned_and_took_when_the_run_recorded_it():
    from test_report import render_markdown

    doc = json.loads(FIXTURE.read_text())
    assert "The bench planned" not in render_markdown(doc)
    doc["timing"] = Timing(planned_s=600, took_s=660, samples_s=500, sampled=30, load_s=90, warmup_s=60).to_json()
    md = render_markdown(doc)
    assert "The bench planned 10.0 min (builds not counted) and took 11.0 min: samples 8.3 min;" in md
    assert "its 30 samples' load runs 1.5 min, warm-ups 1.0 min" in md
    assert "kept unrepeated" not in md
    doc["timing"]["steal_kept"] = 4
    assert "repeated for steal 0.0 min; 4 more stolen from, kept unrepeated (the repeats' budget spent)." in (
        render_markdown(doc)
    )


def test_a_bench_on_a_stolen_machine_repeats_at_most_its_share_and_counts_the_rest_as_kept(monkeypatch, tmp_path):
    from test_bench import sample
    from test_plan import contest

    from arena.bench import plan
    from arena.core.model import Config
    from arena.load.interleave import Step
    from arena.workflows import rounds

    def stolen_always(entry, mode_name, rep, cfg, scripts, may_repeat):
        got = sample(1.0, 0.5)
        got.steal_share = 0.2  # every load run stolen from, the repeat too
        if may_repeat():
            got.steal_retry = 0.2
        return got

    monkeypatch.setattr(rounds, "measure_sample", stolen_always)
    monkeypatch.setattr(rounds.conntrack, "wait_for_room", lambda say, needed: None)
    record = rounds.Recorder(Config(), {}, tmp_path, tmp_path / "logs", [], [])
    entry = contest()[0]
    record.run([Step(rep, "keepalive", entry) for rep in range(50)])
    t = Timing(planned_s=0, took_s=0)
    bench._tally(t, record, record.samples)
    assert t.steal_repeats == record.repeats == int(plan.STEAL_REPEAT_SHARE * 50)
    assert t.steal_kept == 50 - t.steal_repeats
