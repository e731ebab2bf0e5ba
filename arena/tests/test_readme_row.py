"""`arena row` prints an entry's row of the README's results table from a run, in the README's
columns and formats; the README and the skeleton share its header; `arena check` names the
README's stale cells.

The synthetic run: rust (ours, counted by callgrind), python (ours, no close-capped samples,
its capped range overlapping nginx-lua's), nginx-lua (the reference peer) and floor, 3
repetitions of keepalive, pipeline16, keepalive-capped and close-capped; in the capped modes
each server used its whole quota (its cgroup counted 1.5 s of CPU in 3 s), so its CPU µs per
request is 1.5e6 ÷ its requests.
"""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.columns import COMPACT_COLUMNS, COMPACT_HEADER
from arena.core.model import Run
from arena.counts import syscalls
from arena.entries import scaffold as newentry
from arena.entries.manifest import load_manifest
from arena.report import build, readme
from arena.workflows import check

REPO = Path(__file__).resolve().parents[2]
MODES = ["keepalive", "pipeline16", "keepalive-capped", "close-capped"]
# rust's capped CPU µs per request: 1.5e6 ÷ 112 005, 124 656, 139 902 requests; the floor's
# 11.83–14.57 (12.92) overlaps it, yet each round's pair puts rust 1.07–1.10 of the floor: significant
RUST_ROW = (
    "| `rust` | tuned | 12.03 (10.72–13.39) | 41 552 (37 335–46 634) | 1.32 [1.28–1.47] ±7% after 3 pairs "
    "| 1.09 [1.07–1.10] | – · – | 984 · 613 "
    "| 20.00 (20.00–20.00) · 732 962 | 49.42 (47.27–55.35) · 10 117 | 651 kB | 603 kB | 3.2 ms | 235/235 |"
)
QUOTA_CPU_S = 1.5  # a capped server's CPU over a 3 s sample at a 50% quota


def sample(entry: str, mode: str, rep: int, rps: float, cpu: float = 20.0, rss: int = 1_000_000) -> dict:
    """One sample; in a capped mode with the cgroup's count of a server at its quota."""
    capped = {"cgroup_cpu_s": QUOTA_CPU_S} if mode.endswith("-capped") else {}
    return capped | {
        "entry": entry,
        "mode": mode,
        "rep": rep,
        "duration_s": 3.0,
        "requests": int(rps * 3),
        "rps": float(rps),
        "latency_us": {"p50": 300, "p90": 500, "p99": 900, "max": 4000},
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
        "non_3xx": 0,
        "server_cpu_s": 1.0,
        "cpu_us_per_req": cpu,
        "client_cpu_share": 0.5,
        "server_cpu_share": 0.5,
        "peak_rss_bytes": rss,
        "pss_bytes": rss,
        "client_bound": False,
    }


def entry(name: str, kind: str, verify: dict | None, artifact: int, runtime: int, startup: list[float]) -> dict:
    return {
        "name": name,
        "language": "x",
        "kind": kind,
        "available": True,
        "reason": None,
        "description": "d",
        "version": "1",
        "artifact_bytes": artifact,
        "runtime_bytes": runtime,
        "startup_ms": startup,
        "verify": verify,
    }


def counted(mode: str, per_request: float) -> dict:
    return {"mode": mode, "requests": 320, "per_request": per_request, "ir_small": 1, "ir_large": 2}


# entry -> mode -> the 3 repetitions' requests/s
RPS = {
    "rust": {
        "keepalive-capped": [37_335, 41_552, 46_634],
        "pipeline16": [412_541, 732_962, 749_481],
        "close-capped": [9_034, 10_117, 10_578],
        "keepalive": [60_000, 61_000, 62_000],
    },
    "python": {"keepalive-capped": [27_715, 36_577, 37_848], "pipeline16": [142_000, 142_362, 145_277]},
    "nginx-lua": {
        "keepalive-capped": [29_201, 31_555, 31_650],
        "pipeline16": [48_005, 65_313, 69_246],
        "close-capped": [8_740, 10_111, 10_258],
    },
    "floor": {
        "keepalive-capped": [34_309, 38_701, 42_261],
        "pipeline16": [542_317, 846_934, 951_214],
        "close-capped": [9_904, 10_148, 10_930],
    },
}


def make_run(quick: bool = False) -> dict:
    rust = entry("rust", "ours", {"pass": 235, "alt": 0, "fail": 0}, 603_000, 0, [3.1, 3.2, 3.4])
    rust["instructions"] = [counted("keepalive", 984.2), counted("pipeline16", 612.6)]
    python = entry("python", "ours", {"pass": 234, "alt": 0, "fail": 1}, 118_000, 0, [113.0, 120.0, 110.0])
    nginx = entry(
        "nginx-lua", "peer", {"pass": 3, "alt": 72, "fail": 160, "core_route": True}, 1_021, 2_300_000, [15.7]
    )
    floor = entry("floor", "floor", None, 17_296, 0, [4.0])
    floor["instructions"] = [counted("keepalive", 822.0), counted("pipeline16", 452.0)]
    samples = []
    for name, modes in RPS.items():
        for mode, values in modes.items():
            for rep, rps in enumerate(values):
                cpu = [10.5, 10.85, 11.2][rep] if (name, mode) == ("rust", "keepalive") else 20.0
                rss = 700_000 if (name, mode, rep) == ("rust", "pipeline16", 0) else 651_000
                samples.append(sample(name, mode, rep, rps, cpu, rss if name == "rust" else 16_100_000))
    return {
        "schema": 1,
        "run_id": "20261123-052158",
        "started": "2026-11-23T05:21:58Z",
        "finished": "2026-11-23T05:51:35Z",
        "machine": {"cpu_model": "c", "cores": 2, "kernel": "k", "os": "o", "memory_bytes": 1, "tools": {}},
        "config": {
            "server_cpus": "0",
            "client_cpus": "1",
            "duration_s": 3,
            "warmup_s": 1,
            "repetitions": 3,
            "modes": MODES,
            "connections": 50,
            "reference": "nginx-lua",
            "quick": quick,
            "cpu_quota": 0.5,
            "cap_problem": None,
        },
        "entries": [rust, python, nginx, floor],
        "samples": samples,
    }


def view(doc: dict | None = None):
    return build(Run.load(doc or make_run()))


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=120)


def test_rust_row_has_every_column_in_the_readme_formats():
    assert readme.row(view(), "rust") == RUST_ROW


def test_pipelined_and_new_connection_cells_rank_on_cpu_and_say_where_wrk_was_the_limit():
    doc = make_run()
    for s in doc["samples"]:
        if s["entry"] == "rust" and s["mode"] == "close-capped" and s["rep"] < 2:
            s["client_bound"] = True
    cells = readme.cells(view(doc), "rust")
    pipelined, close = cells[readme.COLUMNS.index("16 pipelined: CPU µs/req · req/s")], cells[9]
    assert pipelined == "20.00 (20.00–20.00) · 732 962"
    assert close == "49.42 (47.27–55.35) · 10 117 · client-bound 2/3"
    assert readme.cells(view(doc), "python")[9] == "–"  # no close-capped samples


def test_a_reference_a_floor_and_a_peer_read_as_the_readme_writes_them():
    v = view()
    nginx = readme.cells(v, "nginx-lua")
    assert nginx[2:6] == [
        "15.85 (15.80–17.12)",
        "31 555 (29 201–31 650)",
        "1",
        "0.82 [0.75–0.85] ±6% after 3 pairs",
    ]  # the floor's CPU ÷ its own
    assert nginx[11:] == ["1.0 kB + 2.3 MB", "15.7 ms", "3 + 72 allowed of 235; core route yes"]
    floor = readme.cells(v, "floor")
    assert (
        floor[4:6] == ["1.23 [1.17–1.34] ±7% after 3 pairs", "1.00"]
        and floor[7] == "822 · 452"
        and floor[-1] == "not a server of the spec"
    )


def test_what_the_run_does_not_hold_is_a_dash_and_an_overlap_is_not_significant():
    python = readme.cells(view(), "python")
    assert python[4] == "1.16 [0.95–1.20] ±11% after 3 pairs n.s."  # its interval holds 1
    assert python[6] == "– · –"  # no system calls counted into this run
    assert python[7] == "– · –"  # not counted by callgrind
    assert python[9] == "–"  # close-capped not measured
    assert python[12] == "113 ms" and python[13] == "234/235"


def test_of_floor_is_not_significant_when_the_paired_interval_holds_one():
    """cpp against floor-uring as run 20261126-003226 measured them (keepalive-capped, each
    sample's cgroup CPU seconds and requests): cpp's per-round ratios to the floor spread
    across 1, so it reads as no different from its floor, never as beating it."""
    doc = make_run()
    doc["entries"] += [
        entry("cpp", "ours", {"pass": 235, "alt": 0, "fail": 0}, 1, 0, [1.0]) | {"floor": "floor-uring"},
        copy.deepcopy(doc["entries"][3]) | {"name": "floor-uring"},
    ]
    measured = {
        "cpp": [(1.509222, 214_375), (1.576106, 161_976), (1.527866, 217_897)],
        "floor-uring": [(1.531219, 237_174), (1.516506, 188_297), (1.534157, 205_792)],
    }
    for name, reps in measured.items():
        for rep, (cpu_s, requests) in enumerate(reps):
            s = sample(name, "keepalive-capped", rep, requests / 3)
            doc["samples"].append(s | {"requests": requests, "cgroup_cpu_s": cpu_s})
    cpp = readme.cells(view(doc), "cpp")
    assert cpp[2] == "7.04 (7.01–9.73)" and cpp[5] == "0.92 [0.83–1.06] ±13% after 3 pairs n.s. of floor-uring"
    floor = readme.cells(view(doc), "floor-uring")
    assert (floor[2], floor[5]) == ("7.45 (6.46–8.05)", "1.00")


def test_an_entry_divided_by_another_floor_names_it():
    doc = make_run()
    uring = copy.deepcopy(doc["entries"][3]) | {"name": "floor-uring"}
    doc["entries"].append(uring)
    doc["entries"][0]["floor"] = "floor-uring"
    doc["samples"] += [  # half the requests in the same CPU time: twice the CPU per request
        s | {"entry": "floor-uring", "rps": s["rps"] / 2, "requests": s["requests"] // 2}
        for s in doc["samples"]
        if s["entry"] == "floor"
    ]
    assert readme.cells(view(doc), "rust")[5] == "2.18 [2.15–2.21] of floor-uring"
    assert readme.cells(view(doc), "floor-uring")[5] == "1.00"


def test_the_readme_order_puts_php_fpm_first_then_the_capped_ranking():
    doc = make_run()
    doc["entries"].append(entry("php-fpm", "peer", {"pass": 3, "alt": 80, "fail": 152}, 2_900, 8_000_000, [78.5]))
    doc["samples"] += [sample("php-fpm", "keepalive-capped", r, x) for r, x in enumerate([1_900, 2_252, 2_338])]
    assert readme.readme_order(view(doc)) == ["php-fpm", "rust", "floor", "python", "nginx-lua"]


def test_the_readme_order_follows_the_capped_cpu_ranking_not_wrks_rate():
    """python answers fewer requests/s than nginx-lua under the cap but spends less CPU on each
    (wrk held it back: its cgroup counted 0.9 s, not its whole 1.5 s): it comes before nginx-lua,
    as the report's keepalive-capped table ranks them."""
    doc = make_run()
    for s in doc["samples"]:
        if s["entry"] == "python" and s["mode"] == "keepalive-capped":
            s.update(rps=28_000.0 + s["rep"], requests=84_000 + s["rep"], cgroup_cpu_s=0.9, client_bound=True)
    v = view(doc)
    (capped,) = [mv for mv in v.modes if mv.mode.name == "keepalive-capped"]
    ranked = [r.entry.name for r in capped.rows if r.rank is not None]
    assert ranked == ["python", "rust", "nginx-lua"]
    assert [n for n in readme.readme_order(v) if n != "floor"] == ranked
    assert readme.cells(v, "python")[2:4] == ["10.71 (10.71–10.71)", "28 001 (28 000–28 002)"]


def counts(entry: str, keepalive: float | None, pipelined: float | None) -> syscalls.EntryCounts:
    """An entry's system calls per request as `arena syscalls` records them (None: that mode not counted)."""
    made = [
        syscalls.Count(mode, 400, per_request, {"recvfrom": per_request}, {}, {}, 0.1)
        for mode, per_request in (("keepalive", keepalive), ("pipeline16", pipelined))
        if per_request is not None
    ]
    return syscalls.EntryCounts(entry, "ours", made)


def write_syscalls(run_dir: Path, *counted: syscalls.EntryCounts) -> None:
    syscalls.write(run_dir / "syscalls" / "syscalls.json", list(counted), {"requests": 400})


def test_the_syscalls_cell_is_read_from_the_runs_syscalls_json(tmp_path):
    write_syscalls(
        tmp_path,
        counts("rust", 3.0, 0.188),
        counts("python", 5.624, None),
        syscalls.EntryCounts("nginx-lua", "peer", error="strace: attach: Operation not permitted"),
    )
    found = readme.syscall_counts(tmp_path)
    v = view()
    assert readme.cells(v, "rust", found)[6] == "3.00 · 0.19"
    assert readme.cells(v, "python", found)[6] == "5.62 · –"  # a runtime's fractional count, as measured
    assert readme.cells(v, "nginx-lua", found)[6] == "– · –"  # not counted: said in the syscalls report
    assert readme.cells(v, "floor", found)[6] == "– · –"  # not in the file


def test_a_run_without_a_syscalls_json_gives_a_dash(tmp_path):
    assert readme.syscall_counts(tmp_path) == {}
    assert readme.cells(view(), "rust", readme.syscall_counts(tmp_path))[6] == "– · –"


def test_arena_row_prints_the_syscalls_of_the_run_it_reads(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(make_run()))
    write_syscalls(tmp_path, counts("rust", 3.0, 0.188))
    p = arena("row", "rust", "--run", str(tmp_path / "run.json"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == RUST_ROW.replace("| – · – |", "| 3.00 · 0.19 |", 1)


def test_arena_row_with_an_unreadable_syscalls_json_says_which_file_in_one_line(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(make_run()))
    (tmp_path / "syscalls").mkdir()
    (tmp_path / "syscalls" / "syscalls.json").write_text('{"schema": 7}')
    p = arena("row", "rust", "--run", str(tmp_path))
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert "syscalls/syscalls.json: cannot be read" in p.stderr and "schema: must be 1, got 7" in p.stderr


def test_the_whole_table_and_the_skeleton_share_one_header():
    lines = (REPO / "docs" / "results.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| entry | tier |"))
    assert "\n".join(lines[start : start + 2]) == readme.HEADER
    assert readme.HEADER in newentry.README.format(name="n", language="l", todo="TODO", header=newentry.RESULTS_HEADER)
    assert len(readme.split(readme.HEADER.splitlines()[0])) == len(readme.COLUMNS) == 14


def test_arena_row_prints_the_header_once_then_the_rows_in_the_order_given(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(make_run()))
    p = arena("row", "python", "rust", "--run", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [*readme.HEADER.splitlines(), readme.row(view(), "python"), RUST_ROW]


def test_arena_row_compact_prints_the_readmes_columns_of_the_same_cells(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(make_run()))
    p = arena("row", "--compact", "rust", "--run", str(tmp_path))
    assert p.returncode == 0, p.stderr
    header, rule, rust = p.stdout.splitlines()
    assert f"{header}\n{rule}" == COMPACT_HEADER
    full = dict(zip(readme.COLUMNS, readme.split(RUST_ROW), strict=True))
    name, *cells = readme.split(rust)
    assert name == "[`rust`](servers/rust/README.md)"  # linked to its README
    assert cells == [full[column] for column in COMPACT_COLUMNS[1:]]


def test_arena_row_of_an_entry_the_run_lacks_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps(make_run()))
    p = arena("row", "zig", "--run", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "has no entry 'zig'" in p.stderr, p.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with rust's skeleton (its README holds the row) and results/latest."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    newentry.create(tmp_path, "rust", "Rust", peer=False)
    (tmp_path / "results" / "latest").mkdir(parents=True)
    return tmp_path


def results_row(repo: Path, row: str, doc: dict) -> check.Item:
    (repo / "results" / "latest" / "run.json").write_text(json.dumps(doc))
    readme_path = repo / "servers" / "rust" / "README.md"
    readme_path.write_text(readme_path.read_text() + row + "\n")
    (rust,) = load_manifest(repo / "servers" / "rust" / "entry.toml")
    return check.results_row(rust)


def test_check_passes_a_row_as_the_latest_run_gives_it(repo):
    item = results_row(repo, RUST_ROW, make_run())
    assert item.mark == check.PASS and "as run 20261123-052158 gives it" in item.reason, item.reason


def test_check_names_each_stale_cell_with_the_readmes_and_the_runs_figures(repo):
    stale = RUST_ROW.replace("| 1.32 [1.28–1.47] ±7% after 3 pairs |", "| 1.30 |").replace("3.2 ms", "3.9 ms")
    item = results_row(repo, stale, make_run())
    assert item.mark == check.FAIL, item.reason
    assert (
        "× nginx: README 1.30, run 1.32 [1.28–1.47] ±7% after 3 pairs; start-up: README 3.9 ms, run 3.2 ms"
        in item.reason
    )
    assert "peak RSS" not in item.reason and "CPU µs/req" not in item.reason


def test_check_compares_the_syscalls_cell_only_where_the_run_counted_them(repo):
    row = RUST_ROW.replace("| – · – |", "| 3.00 · 0.19 |", 1)
    assert results_row(repo, row, make_run()).mark == check.PASS  # no syscalls.json: not compared
    write_syscalls(repo / "results" / "latest", counts("rust", 4.0, 0.188))
    item = results_row(repo, "", make_run())  # the row is already in the README
    assert item.mark == check.FAIL, item.reason
    assert item.reason.endswith("syscalls/req (keep-alive · 16 pipelined): README 3.00 · 0.19, run 4.00 · 0.19")


def test_check_does_not_compare_with_a_quick_run_or_one_without_the_entry(repo):
    stale = RUST_ROW.replace("| 1.32 [1.28–1.47] ±7% after 3 pairs |", "| 1.30 |")
    assert "is a quick run" in results_row(repo, stale, make_run(quick=True)).reason
    without = make_run()
    without["entries"] = without["entries"][1:]
    without["samples"] = [s for s in without["samples"] if s["entry"] != "rust"]
    item = results_row(repo, stale, without)
    assert item.mark == check.PASS and "did not measure rust" in item.reason, item.reason


def test_check_leaves_alone_the_cells_the_run_holds_no_figure_for(repo):
    """A run that verified nothing and measured no pipeline16: the README's figures there stay."""
    doc = make_run()
    doc["config"]["modes"] = [m for m in MODES if m != "pipeline16"]
    doc["samples"] = [s for s in doc["samples"] if s["mode"] != "pipeline16"]
    for e in doc["entries"]:
        e["verify"] = None
    item = results_row(repo, RUST_ROW.replace("651 kB", "600 kB"), doc)
    assert item.mark == check.FAIL and item.reason.endswith("peak RSS: README 600 kB, run 651 kB"), item.reason


def test_check_takes_the_row_under_the_results_header_not_another_tables(repo):
    """The top README names rust in other tables (the robustness figures) before its results."""
    readme_path = repo / "servers" / "rust" / "README.md"
    other = "| entry | whole suite |\n|---|---|\n| `rust` | 295 passed |\n\n"
    readme_path.write_text(other + readme_path.read_text())
    item = results_row(repo, RUST_ROW, make_run())
    assert item.mark == check.PASS, item.reason
    assert readme.find_row(other, "rust") is None


def test_a_row_the_cap_distorts_is_ranked_on_its_whole_core_figure_which_its_cell_gives_first():
    """The table's order is its first figures' order: python's capped CPU per request (13.67)
    is 1.49x its whole core's (9.20), ranges apart, so it is ranked on 9.20, said in its cell."""
    doc = make_run()
    doc["samples"] += [sample("python", "keepalive", rep, 100_000, cpu) for rep, cpu in enumerate([9.0, 9.2, 9.4])]
    v = view(doc)
    assert readme.cells(v, "python")[2] == "9.20 (9.00–9.40) whole core; capped 13.67 (13.21–18.04)"
    order = readme.readme_order(v)
    firsts = [float(readme.cells(v, name)[2].split()[0]) for name in order]
    assert order[0] == "python" and firsts == sorted(firsts)
