"""`arena bench --cmd`: a server outside the repository, measured beside the floor; its only
check is "GET --path answers --expect"."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.outside import OutsideError, outside_entry

REPO = Path(__file__).resolve().parents[2]
HTTP_SERVER = f"{sys.executable} -m http.server --bind 127.0.0.1 {{port}}"


def arena(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("server --port 8080", "must contain {listen} or {port}"),
        ("server --listen {listen} --conf {config}", "unknown placeholder {config}"),
        ("server 'unclosed {listen}", "cannot be split"),
        ("", "is empty"),
    ],
)
def test_a_command_that_cannot_be_an_entry_is_refused(command, words):
    with pytest.raises(OutsideError, match=words):
        outside_entry(command)


def test_the_check_accepts_the_expected_status_only(tmp_path):
    """http.server answers 404 on a missing path: --expect 404 accepts it, the default 302 does not."""
    from arena.process import Launch, free_port, launch_ready

    entry = outside_entry(HTTP_SERVER, "/nowhere", 404, cwd=tmp_path)
    server = launch_ready(entry, Launch(port=free_port()))
    try:
        assert entry.answer_problem("127.0.0.1", server.port) == ""
        entry.expect = 302
        assert "expected 302, got 404" in entry.answer_problem("127.0.0.1", server.port)
    finally:
        server.stop()


@pytest.mark.skipif(not (REPO / "peers" / "floor" / "entry.toml").is_file(), reason="no floor peer")
def test_bench_cmd_ranks_an_outside_server_beside_the_floor(tmp_path):
    """A one-second keep-alive run of http.server (404 on /nowhere) and the floor: one report."""
    p = arena(
        "bench",
        "--quick",
        "--no-verify",
        "--modes",
        "keepalive",
        "--results",
        str(tmp_path / "results"),
        "--cmd",
        HTTP_SERVER,
        "--path",
        "/nowhere",
        "--expect",
        "404",
        "floor",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "plan: 2 entries (floor, cmd)" in p.stdout
    run_dir = (tmp_path / "results" / "latest").resolve()
    run = json.loads((run_dir / "run.json").read_text())
    assert {e["name"] for e in run["entries"]} == {"floor", "cmd"}
    cmd = [s for s in run["samples"] if s["entry"] == "cmd"]
    assert len(cmd) == 1 and cmd[0]["requests"] > 0 and cmd[0]["non_3xx"] == cmd[0]["requests"]  # every answer a 404
    assert "| cmd |" in (run_dir / "report.md").read_text().replace("`", "")


def test_bench_cmd_refuses_a_path_without_a_slash():
    p = arena("bench", "--cmd", HTTP_SERVER, "--path", "nowhere")
    assert p.returncode == 2 and "--path" in p.stderr and p.stderr.count("\n") == 1
