"""CONTRIBUTING.md's example, tried end to end as a contributor would: in a clone of the
repository, `arena new nim`, then the example's folder (docs/examples/nim/, the files the guide
walks through and links to) copied over the skeleton,
`scripts/deps entry nim` (as `make check NAME=nim` runs it), a quick bench whose
`arena row nim` is pasted into the entry's README, then `arena check nim` must pass every item.

Minutes long (the whole suite against the example, as `arena check` runs it): make test-slow.
Every step is bounded by its own timeout.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "CONTRIBUTING.md"
NAME = "nim"
EXAMPLE = REPO / "docs" / "examples" / NAME  # what servers/nim/ holds once the example is written
# seconds per step: the clone, the toolchain (apt), a quick bench, arena check (build, suite, tests)
CLONE_S, DEPS_S, BENCH_S, CHECK_S = 120, 900, 600, 1800


def example_files() -> list[str]:
    """The example's files, as paths relative to its folder."""
    return sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file())


def run(args: list[str], cwd: Path, timeout_s: int) -> subprocess.CompletedProcess:
    """A step; its output is in the failure message. A step past its time fails the test."""
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"`{' '.join(args)}` did not finish in {timeout_s} s: {err.stdout}{err.stderr}")


def arena(clone: Path, *args: str, timeout_s: int) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "arena.cli", "--repo", str(clone), *args], clone, timeout_s)


def test_the_guide_links_every_file_of_the_example_and_the_example_is_an_entry_whole():
    files = example_files()
    assert {"entry.toml", "build", "tests/all.nim", "src/renard.nim"} <= set(files), files
    assert os.access(EXAMPLE / "build", os.X_OK)
    guide = GUIDE.read_text()
    unlinked = [f for f in files if f"](docs/examples/{NAME}/{f})" not in guide]
    assert not unlinked, f"CONTRIBUTING.md links none of {unlinked}"
    manifest = (EXAMPLE / "entry.toml").read_text()
    assert 'build = ["./build"]' in manifest and f'name = "{NAME}"' in manifest


@pytest.mark.slow
def test_the_guides_example_passes_arena_check_in_a_fresh_clone(tmp_path):
    clone = tmp_path / "renard"
    cloned = run(["git", "clone", "--quiet", str(REPO), str(clone)], tmp_path, CLONE_S)
    assert cloned.returncode == 0, cloned.stderr

    made = arena(clone, "new", NAME, "--language", "Nim", timeout_s=60)
    assert made.returncode == 0, made.stdout + made.stderr
    folder = clone / "servers" / NAME
    # the clone's copy of the example: what was committed
    shutil.copytree(clone / "docs" / "examples" / NAME, folder, dirs_exist_ok=True)

    deps = run(["scripts/deps", "entry", NAME], clone, DEPS_S)
    if deps.returncode != 0 and os.geteuid() != 0 and shutil.which(NAME) is None:
        pytest.skip(f"not root, and the example's toolchain is not installed: {deps.stderr.strip()}")
    assert deps.returncode == 0, deps.stdout + deps.stderr

    bench = arena(clone, "bench", "--quick", NAME, timeout_s=BENCH_S)
    assert bench.returncode == 0, bench.stdout + bench.stderr
    row = arena(clone, "row", NAME, timeout_s=60)
    rows = [line for line in row.stdout.splitlines() if line.startswith(f"| `{NAME}` |")]
    assert row.returncode == 0 and len(rows) == 1, row.stdout + row.stderr
    readme = folder / "README.md"
    readme.write_text(readme.read_text().rstrip("\n") + "\n" + rows[0] + "\n")  # under the skeleton's header

    check = arena(clone, "check", NAME, timeout_s=CHECK_S)
    said = check.stdout + check.stderr
    assert check.returncode == 0, said
    items = [line for line in check.stdout.splitlines() if line[:1] in "✓✗–"]
    assert len(items) == 8 and all(line.startswith("✓") for line in items), said
    assert "from its JUnit reports" in said, said  # the example's own tests, counted from their report
