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
