"""analysis/pairing.wide_pairs chooses which ratios the bench's extra rounds measure again: every ratio
the table prints (to the reference, to the entry's own floor) whose paired 95% interval is wider
than ±3%, or that has fewer than 2 pairs, widest first, each two entries once, until a ratio
holds MAX_PAIRS pairs; the run's extra pairs (Run.pairs) count with its rounds.

The synthetic run: rust, c, nginx-lua (the reference) and floor in keepalive-capped, 3 rounds;
rust's CPU per request tracks the floor's and the reference's round by round (steady ratios),
c's swings against both (wide). The last two tests read tests/fixtures/run_sample.json: rust,
nginx-lua (the reference) and java-seed, 3 reps in 3 modes, no floor named."""

import json
from pathlib import Path
from types import SimpleNamespace

from arena.analysis.compare import PairedRatio
from arena.analysis.pairing import next_round, reachable, wide_pairs
from arena.core.model import Run

MODE = "keepalive-capped"
# entry -> the CPU µs per request of rounds 0, 1, 2
CPU = {
    "nginx-lua": [10.0, 12.0, 11.0],
    "floor": [5.0, 6.0, 5.5],
    "rust": [5.0, 6.0, 5.5],  # 1.00 of floor and 2.00 × nginx in every round
    "c": [4.0, 9.0, 5.5],  # 0.56–1.25 of floor: wide
}


def sample(entry: str, rep: int, cpu_us: float) -> dict:
    requests = 100_000
    return {
        "entry": entry,
        "mode": MODE,
        "rep": rep,
        "duration_s": 3.0,
        "requests": requests,
        "rps": requests / 3,
        "latency_us": {"p50": 1, "p90": 1, "p99": 1, "max": 1},
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
        "non_3xx": 0,
        "server_cpu_s": 1.0,
        "cgroup_cpu_s": cpu_us * requests / 1e6,
        "cpu_us_per_req": cpu_us,
        "client_cpu_share": 0.5,
        "server_cpu_share": 0.5,
        "peak_rss_bytes": 1,
        "pss_bytes": 1,
        "client_bound": False,
    }


def entry(name: str, kind: str) -> dict:
    return {"name": name, "language": "x", "kind": kind, "available": True, "reason": None,
            "description": "d", "version": "1", "artifact_bytes": 1, "runtime_bytes": 0,
            "startup_ms": [1.0], "verify": None}  # fmt: skip


CONFIG = {"server_cpus": "0", "client_cpus": "1", "duration_s": 3, "warmup_s": 1, "repetitions": 3,
          "modes": [MODE], "connections": 50, "reference": "nginx-lua", "quick": False,
          "cpu_quota": 0.5, "cap_problem": None}  # fmt: skip


def run(cpu=CPU, pairs=()) -> Run:
    return Run.load(
        {
            "schema": 1,
            "run_id": "20261128-130000",
            "started": "2026-11-28T13:00:00Z",
            "finished": "2026-11-28T13:30:00Z",
            "machine": {"cpu_model": "c", "cores": 2, "kernel": "k", "os": "o", "memory_bytes": 1, "tools": {}},
            "config": CONFIG,
            "entries": [entry("rust", "ours"), entry("c", "ours"), entry("nginx-lua", "peer"), entry("floor", "floor")],
            "samples": [sample(name, rep, v) for name, values in cpu.items() for rep, v in enumerate(values)],
            "pairs": list(pairs),
        }
    )


LIVE = [SimpleNamespace(name=n) for n in ("rust", "c", "nginx-lua", "floor")]


def chosen(r: Run, most: int = 10) -> list[tuple[str, str]]:
    return [(e.name, other.name) for _, _, e, other, _ in wide_pairs(r, LIVE, most=most)]


def test_only_ratios_wider_than_3_percent_are_measured_again_each_pair_of_entries_once():
    picked = chosen(run())
    # rust's two ratios are steady; so is the floor's to the reference (0.50 in every round)
    assert sorted(picked) == [("c", "floor"), ("c", "nginx-lua")]


def test_the_widest_interval_comes_first():
    widths = [w for w, *_ in wide_pairs(run(), LIVE, most=10)]
    assert widths == sorted(widths, reverse=True) and widths[0] > 0.03


def test_a_ratio_with_most_pairs_is_not_measured_again():
    assert chosen(run(), most=3) == []  # c has 3 pairs with each partner: at the bound
    assert sorted(chosen(run(), most=4)) == [("c", "floor"), ("c", "nginx-lua")]


def test_a_ratio_with_fewer_than_two_pairs_is_wide_whatever_its_value():
    one_round = {name: values[:1] for name, values in CPU.items()}
    picked = chosen(run(one_round))
    assert ("rust", "floor") in picked and ("rust", "nginx-lua") in picked


def test_extra_pairs_of_the_run_narrow_a_ratio_until_it_is_no_longer_chosen():
    cpu = {k: list(v) for k, v in CPU.items()}
    pairs = []
    for rep in range(3, 13):  # ten extra rounds where c sits at 0.80 of floor's cost, steadily
        cpu["c"].append(4.0)
        cpu["floor"].append(5.0)
        pairs.append({"mode": MODE, "entry": "c", "entry_rep": rep, "partner": "floor", "partner_rep": rep})
    picked = chosen(run(cpu, pairs), most=100)
    assert ("c", "floor") not in picked  # steady with its extra pairs
    assert ("c", "nginx-lua") in picked  # the extra pairs were c's with the floor only


SAMPLE_RUN = Run.load(json.loads((Path(__file__).parent / "fixtures" / "run_sample.json").read_text()))
SAMPLE_LIVE = [SimpleNamespace(name=n) for n in ("rust", "nginx-lua", "java-seed")]


def test_only_the_ratio_wider_than_three_percent_is_listed_each_two_entries_once():
    wide = wide_pairs(SAMPLE_RUN, SAMPLE_LIVE, most=10)
    assert [(round(w, 3), m, e.name, p.name) for w, m, e, p, _ in wide] == [(0.031, "close", "rust", "nginx-lua")]
    reversed_live = list(reversed(SAMPLE_LIVE))
    assert wide_pairs(SAMPLE_RUN, reversed_live, most=10)[0][1:2] == ("close",)  # whichever comes first, once


def test_a_ratio_with_its_most_pairs_already_is_not_listed():
    assert wide_pairs(SAMPLE_RUN, SAMPLE_LIVE, most=3) == []  # the fixture's three rounds are three pairs


def item(mode: str, name: str, half_width: float | None, pairs: int = 3, partner: str = "floor"):
    r = None if half_width is None else PairedRatio(1.0, 1.0 - half_width, 1.0 + half_width, pairs)
    return (half_width or float("inf"), mode, SimpleNamespace(name=name), SimpleNamespace(name=partner), r)


def test_the_ranking_modes_ratios_get_the_extra_rounds_before_any_other_keepalive_capped_first():
    wide = [item("keepalive", "a", 0.04), item("close-capped", "b", 0.04), item("keepalive-capped", "c", 0.04)]
    assert [x[2].name for x in next_round(wide, 10)] == ["c"]
    assert [x[2].name for x in next_round(wide[:2], 10)] == ["b"]
    assert [x[2].name for x in next_round(wide[:1], 10)] == ["a"]
    assert next_round([], 10) == []


def test_a_ratio_too_noisy_to_reach_3_percent_waits_until_no_reachable_one_is_left():
    # ±20% after 3 pairs narrows to about ±11% by 10: out of reach; ±5% narrows to ±2.7%
    noisy, close = item("keepalive-capped", "spring-boot", 0.20), item("keepalive", "go", 0.05)
    assert not reachable(noisy[4], 10) and reachable(close[4], 10) and reachable(None, 10)
    assert [x[2].name for x in next_round([noisy, close], 10)] == ["go"]
    assert [x[2].name for x in next_round([noisy], 10)] == ["spring-boot"]


def test_within_a_round_the_cheapest_pair_comes_first_then_the_widest():
    wide = [item("keepalive-capped", n, w) for n, w in (("java-seed", 0.05), ("c", 0.04), ("rust", 0.05))]
    cost = {"java-seed": 40.0, "c": 12.0, "rust": 12.0}
    got = next_round(wide, 10, lambda e, _other: cost[e.name])
    assert [x[2].name for x in got] == ["rust", "c", "java-seed"]


def test_a_production_entrys_price_against_its_tuned_renard_is_measured_again_when_wide():
    # lib tracks nginx-lua and the floor round by round (steady) but swings against rust (wide)
    cpu = {"nginx-lua": [10.0, 12.0, 11.0], "floor": [5.0, 6.0, 5.5], "lib": [20.0, 24.0, 22.0]}
    doc = run({**cpu, "lib": [], "rust": [5.0, 9.0, 4.0]}).to_json()
    doc["entries"].append(entry("lib", "peer") | {"tier": "production", "tuned": "rust"})
    doc["samples"] += [sample("lib", rep, v) for rep, v in enumerate(cpu["lib"])]
    live = [SimpleNamespace(name=n) for n in ("rust", "nginx-lua", "floor", "lib")]
    picked = {(e.name, other.name) for _, _, e, other, _ in wide_pairs(Run.load(doc), live, most=10)}
    assert ("lib", "rust") in picked
    doc["entries"][-1].pop("tuned")  # without its tuned renard, lib's ratios are the reference's and the floor's
    picked = {(e.name, other.name) for _, _, e, other, _ in wide_pairs(Run.load(doc), live, most=10)}
    assert ("lib", "rust") not in picked
