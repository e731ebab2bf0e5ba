"""Which ratios get extra pairs (analysis/pairing.wide_pairs), on tests/fixtures/run_sample.json:
rust, nginx-lua (the reference) and java-seed, 3 reps in 3 modes, no floor named."""

import json
from pathlib import Path
from types import SimpleNamespace

from arena.analysis.pairing import wide_pairs
from arena.core.model import Run

FIXTURE = Path(__file__).parent / "fixtures" / "run_sample.json"
RUN = Run.load(json.loads(FIXTURE.read_text()))
LIVE = [SimpleNamespace(name=n) for n in ("rust", "nginx-lua", "java-seed")]


def test_only_the_ratio_wider_than_three_percent_is_listed_each_two_entries_once():
    wide = wide_pairs(RUN, LIVE, most=10)
    assert [(round(w, 3), m, e.name, p.name) for w, m, e, p, _ in wide] == [(0.031, "close", "rust", "nginx-lua")]
    assert wide_pairs(RUN, list(reversed(LIVE)), most=10)[0][1:2] == ("close",)  # whichever comes first, once


def test_a_ratio_with_its_most_pairs_already_is_not_listed():
    assert wide_pairs(RUN, LIVE, most=3) == []  # the fixture's three rounds are three pairs
