"""arena history --backfill: which commits a range replays, the line each becomes (counts and
their ratio to the floor of the same commit; with --timed each round's ratio to the floor, its
median and interval), a planted step in a timed replay found at its commit and none in a steady
one, bad usage, the replayed histories kept in docs/ against what docs say of them, and (slow)
the flagship replayed over a commit of this repository that changed none of its code: the same
counts, no change; the C renard replayed by time over two commits."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.analysis import history
from arena.counts import instructions
from arena.workflows.backfill import BackfillError, commits

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "arena.cli", "--repo", str(REPO), "history", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_a_range_replays_its_start_and_each_later_commit_that_touched_the_folders():
    touched = git("rev-list", "-3", "HEAD", "--", "peers/floor").split()  # newest first
    chosen = commits(REPO, f"{touched[2]}..{touched[0]}", ["peers/floor"])
    assert chosen == [touched[2], touched[1], touched[0]]
    with pytest.raises(BackfillError, match="no-such-rev"):
        commits(REPO, "no-such-rev..HEAD", ["peers/floor"])


def test_a_replayed_line_holds_each_count_and_its_ratio_to_the_floor_of_the_same_commit():
    counts = {"rust": {"keepalive": 981.0}, "floor": {"keepalive": 829.0}}
    line = history.backfill_line(
        "ab" * 20, "2026-11-23T00:00:00+00:00", counts, "floor", {"rust": "tuned", "floor": "floor"}
    )
    assert line["run_id"] == "backfill-abababababab" and line["backfill"] and not line["quick"]
    assert line["entries"]["rust"]["keepalive"] == {"instructions": 981.0, "instructions_of_floor": 981.0 / 829.0}
    assert line["entries"]["floor"]["keepalive"] == {"instructions": 829.0}


def timed_lines(levels: list[float], seed: int, pairs: int = 6) -> list[dict]:
    """A timed replay of len(levels) commits: per commit `pairs` rounds of rust then the floor,
    the floor's CPU µs per request drifting with the machine (±8% from commit to commit, ±4%
    within one) and rust's `level` times the floor's of its round, ±3% (the spread of the
    gate's close-capped pairs here), its build ±1% from one commit to the next."""
    rng = np.random.default_rng(seed)
    out = []
    for i, level in enumerate(levels):
        machine = 8.0 * rng.normal(1, 0.08)
        floor = list(machine * rng.normal(1, 0.04, pairs))
        build = level * rng.normal(1, 0.01)
        rust = [f * build * rng.normal(1, 0.03) for f in floor]
        cpu, rps = {"rust": rust, "floor": floor}, {"rust": [1e6 / c for c in rust], "floor": [1e6 / c for c in floor]}
        tiers = {"rust": "tuned", "floor": "floor"}
        out.append(history.timed_backfill_line(f"{i:02d}" * 20, "2026-11-28", "close-capped", cpu, rps, "floor",
                                               tiers, {"pairs": pairs}))  # fmt: skip
    return out


def test_a_timed_line_holds_the_median_of_the_rounds_ratios_to_the_floor_and_its_interval():
    cpu = {"rust": [12.0, 13.0, 12.5, 30.0], "floor": [8.0, 8.0, 10.0, 10.0]}
    rps = {"rust": [40e3, 39e3, 41e3, 20e3], "floor": [60e3, 61e3, 50e3, 52e3]}
    line = history.timed_backfill_line("cd" * 20, "2026-11-28", "close-capped", cpu, rps, "floor",
                                       {"rust": "tuned", "floor": "floor"}, {"pairs": 4})  # fmt: skip
    rust, floor = line["entries"]["rust"]["close-capped"], line["entries"]["floor"]["close-capped"]
    assert rust["cpu_of_floor_rounds"] == [1.5, 1.625, 1.25, 3.0]
    assert rust["cpu_of_floor"] == pytest.approx(np.median([1.5, 1.625, 1.25, 3.0]))  # per round, not of medians
    assert rust["cpu_of_floor_lo"] <= rust["cpu_of_floor"] <= rust["cpu_of_floor_hi"]
    assert rust["cpu_us_samples"] == cpu["rust"] and rust["cpu_us_per_req"] == 12.75 and rust["rps"] == 39.5e3
    assert "cpu_of_floor" not in floor and floor["cpu_us_per_req"] == 9.0
    assert line["run_id"] == "backfill-timed-cdcdcdcdcdcd" and line["backfill"] and line["timed"] == {"pairs": 4}


def test_a_planted_step_in_a_timed_replay_is_found_at_its_commit_two_commits_from_the_start():
    """The flagship's close-capped cost of a new connection in shape: 1.62× the floor for two
    commits, then 1.0× (found at its commit in 20 of 20 seeds tried). Over one median a commit,
    two points on one side of a step cannot reach p < 0.01; over the commits' rounds (six
    each) they do."""
    lines = timed_lines([1.62] * 2 + [1.0] * 4, seed=11)
    (found,) = history.changes(lines, ["rust"])
    assert (found.mode, found.metric, found.commits) == ("close-capped", "cpu_of_floor", f"{'01' * 6}..{'02' * 6}")
    assert found.better and found.lo <= found.ratio <= found.hi < 0.7
    assert 1.55 < found.before < 1.7 and 0.95 < found.after < 1.05
    medians = [line["entries"]["rust"]["close-capped"]["cpu_of_floor"] for line in lines]
    medians_only = [
        dict(line, entries={"rust": {"close-capped": {"cpu_of_floor": m}}})
        for line, m in zip(lines, medians, strict=True)
    ]
    assert history.changes(medians_only, ["rust"]) == []  # what the rounds are kept for


def test_a_timed_replay_of_commits_that_changed_no_code_rarely_shows_a_change():
    """10 replays of 12 commits at one level, 6 rounds a commit: a change in one at most
    (E-Divisive at p < 0.01 over the 72 rounds)."""
    flagged = sum(bool(history.changes(timed_lines([1.5] * 12, seed=100 + k), ["rust"])) for k in range(10))
    assert flagged <= 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--backfill", "HEAD"], "'--backfill': 'HEAD' is not a range"),
        (["--backfill", "HEAD~1..HEAD"], "names no ENTRY"),
        (["--timed"], "'--timed': replays commits: give --backfill"),
        (["--backfill", "HEAD~1..HEAD", "rust", "--pairs", "4"], "'--pairs': is only for a timed replay"),
        (["--backfill", "HEAD~1..HEAD", "rust", "--mode", "close"], "'--mode': is only for a timed replay"),
        (["--backfill", "HEAD~1..HEAD", "rust", "--timed", "--mode", "fast"], "'--mode'"),
        (["--backfill", "HEAD~1..HEAD", "rust", "--timed", "--pairs", "1"], "'--pairs'"),
    ],
)
def test_bad_backfill_arguments_are_one_line_and_exit_2(args, words):
    done = arena(*args)
    assert done.returncode == 2 and words in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.slow
def test_the_flagship_replayed_over_a_commit_that_changed_none_of_its_code_counts_the_same(tmp_path):
    if instructions.available():
        pytest.skip(instructions.available())
    start, readme_only = "a6111b4", "ad042b2"  # ad042b2 changed servers/rust/README.md alone (docs/arena/curves.md)
    if subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{readme_only}^{{commit}}"]).returncode:
        pytest.skip("a shallow clone: the replayed commits are not here")
    out = tmp_path / "backfill.jsonl"
    done = arena("--backfill", f"{start}..{readme_only}", "rust", "--file", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["commit"][:7] for line in lines] == [start, readme_only]
    first, second = (line["entries"]["rust"]["keepalive"]["instructions"] for line in lines)
    assert abs(first - second) <= 0.005 * first  # callgrind repeats within 0.5% (test_instructions)
    assert "0 changes" in done.stdout


def test_an_entry_that_is_not_native_is_refused_unless_timed():
    if instructions.available():
        pytest.skip(instructions.available())
    done = arena("--backfill", "HEAD~1..HEAD", "cpp", "--file", "/dev/null")
    assert done.returncode == 1 and "not native, so not counted: cpp (replay them by time: --timed)" in done.stderr


@pytest.mark.slow
def test_the_c_renard_replayed_by_time_writes_each_commits_ratio_to_the_floor_with_its_interval(tmp_path):
    """The last two commits that touched the C renard or the floor, three rounds of 1 s
    close-capped samples each: a line per commit, the C renard's ratio to the floor of its
    rounds with its interval (no step of 2×: neither commit rewrote its accept loop)."""
    for tool in ("wrk", "taskset", "cc"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")
    touched = git("rev-list", "-2", "HEAD", "--", "servers/c", "peers/floor").split()
    out = tmp_path / "timed.jsonl"
    done = arena("--backfill", f"{touched[1]}..{touched[0]}", "c", "--timed", "--mode", "close", "--pairs", "3",
                 "--seconds", "1", "--file", str(out))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "each commit: 3 rounds of c then floor, 1 s samples in close-capped" in done.stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["commit"] for line in lines] == touched[::-1]
    ratios = [line["entries"]["c"]["close-capped"] for line in lines]
    assert all(r["cpu_of_floor_lo"] <= r["cpu_of_floor"] <= r["cpu_of_floor_hi"] for r in ratios)
    assert 0.5 < ratios[0]["cpu_of_floor"] / ratios[1]["cpu_of_floor"] < 2


def test_the_replayed_history_in_docs_finds_the_changes_docs_name_at_their_commits():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "rust-2026-11-23.jsonl")
    found = {(c.mode, c.commit[:7]) for c in history.changes(lines, ["rust"])}
    keepalive = {"c064a45", "8cdb4e1", "c7e2daa", "4933c93"}  # docs/arena/curves.md, "The history replayed"
    assert found == {("keepalive", c) for c in keepalive} | {("pipeline16", c) for c in keepalive | {"9a25a5f"}}


def test_the_replayed_stretch_in_docs_of_commits_that_changed_no_code_shows_no_change():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "rust-2026-11-25.jsonl")
    assert len(lines) == 9 and history.changes(lines, ["rust"]) == []


def test_the_timed_replay_in_docs_finds_the_flagships_deferred_accept_and_no_change_where_no_code_changed():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "rust-close-2026-11-28.jsonl")
    (found,) = history.changes(lines, ["rust"])  # docs/arena/curves.md, "The history replayed"
    assert (found.mode, found.commit_before[:7], found.commit[:7]) == ("close-capped", "ed45126", "038a96d")
    assert found.hi < 0.8 and len(lines) == 11 and all(line["timed"]["pairs"] == 6 for line in lines)


def test_the_timed_replay_in_docs_finds_the_cost_of_the_cpp_renards_single_shot_accepts():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "cpp-close-2026-11-29.jsonl")
    assert [line["commit"][:7] for line in lines] == ["ae82ac7", "b29dcc2", "728b6e9", "4a7ac13", "c60ef95"]
    (found,) = history.changes(lines, ["cpp"])  # docs/arena/curves.md, "The history replayed"
    assert (found.mode, found.commit_before[:7], found.commit[:7]) == ("close-capped", "b29dcc2", "728b6e9")
    assert found.lo > 1 and not found.better and all(line["timed"]["pairs"] == 12 for line in lines)
