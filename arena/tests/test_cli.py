"""The command line: bad input is one line on stderr naming the flag, exit status 2; the
entry list shows unavailable entries with their reason."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_entries import GOOD, write


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    write(tmp_path / "servers" / "demo", GOOD)
    write(
        tmp_path / "peers" / "gone",
        GOOD.replace('"demo"', '"gone"')
        .replace('kind = "ours"', 'kind = "peer"\ntier = "infrastructure"')
        .replace('["sh"]', '["no-such-tool-xyz"]'),
    )
    return tmp_path


@pytest.mark.parametrize(
    "args,flag",
    [
        (["bench", "--duration", "0"], "--duration"),
        (["bench", "--server-cpus", "zero"], "--server-cpus"),
        (["bench", "--client-cpus", "999"], "--client-cpus"),
        (["bench", "--modes", "keepalive,turbo"], "--modes"),
        (["run", "demo", "--count", "0"], "--count"),
        (["run", "demo", "--listen", "localhost:80"], "--listen"),
        (["run", "demo", "--location", "https://x/"], "--location"),
        (["build", "nope"], "ENTRY"),
        (["bench", "--frobnicate"], "--frobnicate"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag_and_exit_2(repo, args, flag):
    p = arena("--repo", str(repo), *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and flag in p.stderr and p.stderr.startswith("arena: ")


def test_list_shows_unavailable_entry_with_reason(repo):
    p = arena("--repo", str(repo), "list")
    assert p.returncode == 0, p.stderr
    assert "demo" in p.stdout and "gone" in p.stdout and "no-such-tool-xyz" in p.stdout


def test_broken_manifest_is_an_error_naming_file_and_key(repo):
    write(repo / "servers" / "demo", GOOD + "oops = 1\n")
    p = arena("--repo", str(repo), "list")
    assert p.returncode == 1 and "servers/demo/entry.toml" in p.stderr and "oops" in p.stderr


def test_build_continues_after_a_failure_and_exits_1(repo):
    write(repo / "servers" / "bad", GOOD.replace('"demo"', '"bad"').replace('"echo built > out.bin"', '"exit 7"'))
    p = arena("--repo", str(repo), "build")
    assert p.returncode == 1
    assert "FAIL bad" in p.stdout.replace("\n", " ") and "ok   demo" in p.stdout


def test_build_stale_builds_only_what_is_missing_or_older_than_its_sources(repo):
    demo = repo / "servers" / "demo"
    assert arena("--repo", str(repo), "build", "--stale", "demo").returncode == 0
    (demo / "out.bin").write_text("kept\n")  # current: newer than every source
    p = arena("--repo", str(repo), "build", "--stale", "demo")
    assert p.returncode == 0 and "current" in p.stdout and (demo / "out.bin").read_text() == "kept\n"
    (demo / "main.c").write_text("int main;\n")  # a source newer than the artifact
    os.utime(demo / "out.bin", (1, 1))
    p = arena("--repo", str(repo), "build", "--stale", "demo")
    assert p.returncode == 0 and (demo / "out.bin").read_text() == "built\n"


def test_report_writes_markdown_and_html_from_a_run(repo, tmp_path):
    run_dir = tmp_path / "results" / "20261122-001500"
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text((Path(__file__).parent / "fixtures" / "run_sample.json").read_text())
    p = arena("--repo", str(repo), "report", str(run_dir))
    assert p.returncode == 0, p.stderr
    assert (run_dir / "report.md").stat().st_size > 0 and (run_dir / "report.html").stat().st_size > 0


def test_report_of_an_invalid_run_names_the_key_and_exits_1(repo, tmp_path):
    (tmp_path / "run.json").write_text('{"schema": 1}')
    p = arena("--repo", str(repo), "report", str(tmp_path))
    assert p.returncode == 1 and "run_id: missing key" in p.stderr


def test_bench_plan_prints_the_estimate_and_measures_nothing(repo, tmp_path):
    """The plan of the available entries (gone is not: its tool is missing), then exit 0, no run."""
    results = tmp_path / "runs"
    p = arena("--repo", str(repo), "bench", "--plan", "--results", str(results))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("plan: 1 entries (demo) × 5 modes") and "in all, builds not counted" in p.stdout
    assert not results.exists()
