"""`arena test` keeps each entry's test output and repeats a failed entry's last lines at the end."""

import subprocess
import sys
import textwrap

ENTRY = textwrap.dedent(
    """\
    [[entry]]
    name = "{name}"
    language = "sh"
    kind = "peer"
    tier = "infrastructure"
    description = "a test double"
    requires = ["sh"]
    build = []
    run = "true"
    artifacts = []
    version = "sh --version"
    ready = "listening"
    test = ["{test}"]
    """
)


def write_entry(repo, name, test):
    folder = repo / "peers" / name
    folder.mkdir(parents=True)
    (folder / "entry.toml").write_text(ENTRY.format(name=name, test=test))


def test_a_failed_entrys_output_is_repeated_after_every_other_entrys(tmp_path):
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    write_entry(tmp_path, "aaa", "echo the cause of aaa; exit 3")
    write_entry(tmp_path, "zzz", "echo zzz ran after aaa")
    run = [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "test"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "tests failed: aaa" in done.stderr, done.stdout + done.stderr
    # the cause shows twice: as it ran, and again after zzz's output, where a truncated log ends
    after_zzz = done.stdout.split("zzz ran after aaa", 1)[1]
    assert "the cause of aaa" in after_zzz, done.stdout
    assert "the cause of aaa" in (tmp_path / "results" / "logs" / "aaa.test.log").read_text()
    assert "zzz ran after aaa" in (tmp_path / "results" / "logs" / "zzz.test.log").read_text()


def test_with_jobs_two_folders_tests_run_at_once_and_one_folders_entries_one_after_another(tmp_path):
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    wait_for = "for i in $(seq 100); do {0} && break; sleep 0.05; done; {0}"  # at most 5 s
    # l1 passes only if r runs meanwhile; l2 (l1's folder) only if l1 has ended before it began.
    # r ends only once l1 has seen it running: no sleep decides the outcome, only the 5 s bound.
    left = tmp_path / "peers" / "left"
    left.mkdir(parents=True)
    l1 = "touch l1-running && " + wait_for.format("[ -e ../right/r-running ]") + " && touch l1-saw-r && rm l1-running"
    l2 = "test ! -e l1-running"
    (left / "entry.toml").write_text(ENTRY.format(name="l1", test=l1) + ENTRY.format(name="l2", test=l2))
    right = "touch r-running && " + wait_for.format("[ -e ../left/l1-saw-r ]") + " && rm r-running"
    write_entry(tmp_path, "right", right)
    run = [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "test", "--jobs", "2"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"ok   {name}: tests in" in done.stdout for name in ("l1", "l2", "right")), done.stdout
    run[-1] = "1"  # one at a time: l1 waits for r in vain
    (left / "l1-running").unlink(missing_ok=True)
    (left / "l1-saw-r").unlink()
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "tests failed: l1" in done.stderr, done.stdout + done.stderr


def test_a_failed_entrys_junit_failures_are_named_one_per_line_and_a_stale_report_is_not(tmp_path):
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    write_entry(tmp_path, "aaa", "sh fails.sh")
    folder = tmp_path / "peers" / "aaa"
    (folder / "entry.toml").write_text((folder / "entry.toml").read_text() + 'junit = ["out/*.xml"]\n')
    late = "late[" + "x" * 80 + "]"  # longer than a line of the console, and Rich's markup
    case = f'<testcase classname="renard.ServerTest" name="{late}"><failure message="not early"/></testcase>'
    (folder / "fails.sh").write_text(f"mkdir -p out && echo '<testsuite>{case}</testsuite>' > out/now.xml; exit 1\n")
    stale = tmp_path / "peers" / "aaa" / "out" / "earlier.xml"
    stale.parent.mkdir()
    stale.write_text('<testsuite><testcase name="gone"><failure message="old"/></testcase></testsuite>')
    run = [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "test"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL aaa test: renard.ServerTest.{late}\nE   not early\n" in done.stdout, done.stdout
    assert "gone" not in done.stdout and not stale.exists()
