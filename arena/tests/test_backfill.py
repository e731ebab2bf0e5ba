"""arena history --backfill: which commits a range replays, the line each becomes (counts and
their ratio to the floor of the same commit), bad usage, the replayed histories kept in docs/
against what docs say of them, and (slow) the flagship replayed over a commit of this
repository that changed none of its code: the same counts, no change."""

import json
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--backfill", "HEAD"], "'--backfill': 'HEAD' is not a range"),
        (["--backfill", "HEAD~1..HEAD"], "names no ENTRY"),
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


def test_the_replayed_history_in_docs_finds_the_changes_docs_name_at_their_commits():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "rust-2026-11-23.jsonl")
    found = {(c.mode, c.commit[:7]) for c in history.changes(lines, ["rust"])}
    keepalive = {"c064a45", "8cdb4e1", "c7e2daa", "4933c93"}  # docs/arena/curves.md, "The history replayed"
    assert found == {("keepalive", c) for c in keepalive} | {("pipeline16", c) for c in keepalive | {"9a25a5f"}}


def test_the_replayed_stretch_in_docs_of_commits_that_changed_no_code_shows_no_change():
    lines = history.read(REPO / "docs" / "arena" / "replay" / "rust-2026-11-25.jsonl")
    assert len(lines) == 9 and history.changes(lines, ["rust"]) == []
