"""scripts/nightly (make nightly; the nightly workflow runs its steps one by one): end to end on
a clean clone of HEAD with --quick and the floor alone, the history pulled from and pushed to
the `history` branch of a bare remote, the gate's verdict files written; every step runs
after a failed one; bad arguments exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).parent / "arena"
SEEDED = {"run_id": "20261101-000000", "commit": "0" * 40, "quick": True, "entries": {}}


def git(*args: str, cwd: Path, text_in: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, input=text_in, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    """A clean clone of HEAD (with its history, for the gate's baseline) and a bare remote whose
    history branch already holds one line."""
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    here = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(here)], check=True, timeout=120)
    remote = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", str(remote), cwd=tmp_path)
    blob = git("hash-object", "-w", "--stdin", cwd=here, text_in=json.dumps(SEEDED) + "\n")
    tree = git("mktree", cwd=here, text_in=f"100644 blob {blob}\thistory.jsonl\n")
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    seed = subprocess.run(["git", "commit-tree", tree, "-m", "seed"], cwd=here, env=env, capture_output=True, text=True)
    git("push", "--quiet", str(remote), f"{seed.stdout.strip()}:refs/heads/history", cwd=here)
    return here


def nightly(clone: Path, *args: str, arena: Path = ARENA) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        ARENA=str(arena),
        NIGHTLY_ENTRIES="floor",
        NIGHTLY_PUSH="1",
        NIGHTLY_REMOTE=str(clone.parent / "remote.git"),
    )
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run(
        [str(clone / "scripts" / "nightly"), *args], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_nightly_steps_run_end_to_end_on_a_clean_clone_with_quick(clone):
    done = nightly(clone, "--quick")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    steps = (clone / "results" / "nightly" / "steps.txt").read_text().splitlines()
    names = ["history-pull", "bench", "instructions", "history", "gate", "history-push"]
    assert steps == [f"nightly: {name}: exit 0" for name in names]
    pushed = git("show", "history:history.jsonl", cwd=clone.parent / "remote.git").splitlines()
    assert json.loads(pushed[0]) == SEEDED and len(pushed) == 2  # pulled, one run appended, pushed
    assert "floor" in json.loads(pushed[1])["entries"]
    gate = json.loads((clone / "results" / "nightly" / "gate.json").read_text())
    assert gate["status"] == "no regression" and {c["entry"] for c in gate["criteria"]} == {"floor"}
    assert (clone / "results" / "nightly" / "gate.xml").read_text().count("<testcase") == len(gate["criteria"])
    assert (clone / "results" / "nightly" / "trend" / "index.html").read_text().startswith("<!doctype html>")


def test_every_step_runs_after_a_failed_one_and_the_script_says_which_failed(clone, tmp_path):
    fake = tmp_path / "arena"  # an arena whose bench fails and which records every call
    fake.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n[ "$3" != bench ]\n')
    fake.chmod(0o755)
    done = nightly(clone, "--quick", "bench", "instructions", "history", "gate", arena=fake)
    assert done.returncode == 1, done.stdout + done.stderr
    steps = (clone / "results" / "nightly" / "steps.txt").read_text().splitlines()
    assert steps == [
        f"nightly: {s}" for s in ("bench: exit 1", "instructions: exit 0", "history: exit 0", "gate: exit 0")
    ]
    calls = [line.split()[2] for line in (tmp_path / "calls").read_text().splitlines()]
    assert calls == ["bench", "instructions", "history", "gate"]


@pytest.mark.parametrize("arg", ["--full", "deploy"])
def test_an_unknown_step_or_flag_exits_2_naming_it(arg):
    done = subprocess.run([str(REPO / "scripts" / "nightly"), arg], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and f"'{arg}'" in done.stderr and len(done.stderr.splitlines()) == 1
