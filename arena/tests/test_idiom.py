"""report/idiom.py: the price of the idiom, a production entry's CPU per request ÷ its tuned
renard's, pair by pair in one run, in the capped keep-alive mode unless the cap distorts one of
them (then on a whole core); the report's section and `arena row`'s table show it."""

import subprocess
import sys

from test_pairing import CONFIG, entry, sample

from arena.core.model import Run
from arena.report import build, idiom
from arena.report.markdown import render as render_markdown

CAPPED, WHOLE = "keepalive-capped", "keepalive"


def run(capped_lib: list[float], whole_lib: list[float] | None = None, tuned: str | None = "rust") -> Run:
    """rust (tuned), lib (production, naming `tuned`), nginx-lua; rust costs 5, 6, 5.5 µs per
    request in rounds 0-2 in both modes, lib what it is given."""
    whole_lib = whole_lib or capped_lib
    cpu = {
        CAPPED: {"rust": [5.0, 6.0, 5.5], "nginx-lua": [10.0, 12.0, 11.0], "lib": capped_lib},
        WHOLE: {"rust": [5.0, 6.0, 5.5], "nginx-lua": [10.0, 12.0, 11.0], "lib": whole_lib},
    }
    lib = entry("lib", "peer") | {"tier": "production"} | ({"tuned": tuned} if tuned else {})
    return Run.load(
        {
            "schema": 1,
            "run_id": "20261201-220000",
            "started": "2026-12-01T22:00:00Z",
            "finished": "2026-12-01T22:30:00Z",
            "machine": {"cpu_model": "c", "cores": 2, "kernel": "k", "os": "o", "memory_bytes": 1, "tools": {}},
            "config": CONFIG | {"modes": [WHOLE, CAPPED]},
            "entries": [entry("rust", "ours"), entry("nginx-lua", "peer") | {"tier": "infrastructure"}, lib],
            "samples": [
                sample(name, rep, v) | {"mode": mode}
                for mode, by_entry in cpu.items()
                for name, values in by_entry.items()
                for rep, v in enumerate(values)
            ],
            "pairs": [],
        }
    )


def test_the_price_is_the_production_entrys_cpu_per_request_over_the_tuned_renards_pair_by_pair():
    (p,) = idiom.prices(build(run([10.0, 12.0, 11.0])))
    assert (p.production.name, p.tuned.name, p.mode) == ("lib", "rust", CAPPED)
    assert (p.ratio.median_ratio, p.ratio.lo, p.ratio.hi, p.ratio.pairs) == (2.0, 2.0, 2.0, 3)


def test_where_the_cap_distorts_the_production_entry_its_price_is_taken_on_a_whole_core():
    # capped, lib costs 3x what it costs on its whole core (beyond CAP_DISTORTION, ranges apart)
    (p,) = idiom.prices(build(run([30.0, 36.0, 33.0], whole_lib=[10.0, 12.0, 11.0])))
    assert (p.mode, p.ratio.median_ratio) == (WHOLE, 2.0)


def test_a_production_entry_without_a_tuned_renard_or_without_it_in_the_run_has_no_price():
    assert idiom.prices(build(run([10.0, 12.0, 11.0], tuned=None))) == []
    (p,) = idiom.prices(build(run([10.0, 12.0, 11.0], tuned="go")))
    assert p.ratio is None and p.reason == "its tuned renard go is not in this run"


def test_the_report_shows_the_price_and_each_row_its_tier():
    md = render_markdown(build(run([10.0, 12.0, 11.0])))
    assert "## The price of the idiom: production ÷ tuned CPU per request" in md
    assert "| x | lib | rust | 11.00 · 5.50 | 2.00 [2.00–2.00] | keepalive-capped |" in md
    for name, tier in (("lib", "production"), ("rust", "tuned"), ("nginx-lua", "infrastructure")):
        assert f"| {name} | x | {tier} |" in md


def test_arena_row_prints_the_price_table_after_the_rows(tmp_path):
    folder = tmp_path / "results" / "20261201-220000"
    folder.mkdir(parents=True)
    run([10.0, 12.0, 11.0]).write(folder)
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "row", "--run", str(folder)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows, prices = out.stdout.split("\n\n")
    assert "| `lib` | production |" in rows
    assert prices.splitlines()[2] == "| x | `lib` | `rust` | 11.00 · 5.50 | 2.00 [2.00–2.00] | keepalive-capped |"
