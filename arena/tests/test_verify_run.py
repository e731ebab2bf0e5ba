"""`arena verify` exit status (only `ours` failures count) and `arena run` (prints the
listening line, SIGINT stops the entry), against a tiny Python entry and a stand-in check_all."""

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import cli
from renard_conformance import conformance

SERVER = """
import os, socket, sys
open("server.pid", "w").write(str(os.getpid()))
host, port, location = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_server((host, port))
print(f"listening on http://{host}:{s.getsockname()[1]}", file=sys.stderr, flush=True)
while True:
    c, _ = s.accept()
    c.recv(65536)
    c.sendall(("HTTP/1.1 302 Found\\r\\nLocation: " + location.replace("{n}", "1") +
               "\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n").encode())
    c.close()
"""

ENTRY = """
[[entry]]
name = "NAME"
language = "Python"
kind = "KIND"
description = "a stand-in server"
requires = ["python3"]
build = []
run = "python3 server.py {host} {port} {location}"
artifacts = ["server.py"]
version = "python3 --version"
"""


def make_repo(root: Path, kind: str) -> Path:
    (root / "spec").mkdir(parents=True)
    (root / "spec" / "SPEC.md").write_text("spec")
    folder = root / ("servers" if kind == "ours" else "peers") / "demo"
    folder.mkdir(parents=True)
    (folder / "server.py").write_text(SERVER)
    manifest = ENTRY.replace("NAME", "demo").replace("KIND", kind)
    if kind == "ours":
        manifest += 'command = "python3 server.py"\n'
    else:
        manifest += 'tier = "production"\n'  # a peer names its tier
    (folder / "entry.toml").write_text(manifest)
    return root


def arena(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(repo), *args], capture_output=True, text=True, timeout=120
    )


def stand_in_check_all(verdict: str):
    """The runner's check_all replaced: one pass, one `verdict`, after a real connection."""

    def check_all(target, quick=False, skip_slow=False):
        socket.create_connection((target.host, target.port)).close()
        return [conformance.Outcome("answers", "pass", ""), conformance.Outcome("strictness", verdict, "stand-in")]

    return check_all


@pytest.mark.parametrize(
    "kind,verdict,status",
    [
        ("ours", "pass", 0),
        ("ours", "alt", 0),  # an allowed alternative is not a failure
        ("ours", "fail", 1),
        ("peer", "fail", 0),  # peers may fail cases
    ],
)
def test_verify_exits_1_only_when_ours_fails(tmp_path, monkeypatch, capsys, kind, verdict, status):
    monkeypatch.setattr(conformance, "check_all", stand_in_check_all(verdict))
    assert cli.main(["--repo", str(make_repo(tmp_path, kind)), "verify"]) == status
    out = capsys.readouterr().out
    assert "answers" in out and {"pass": "✓", "alt": "~", "fail": "✗"}[verdict] in out
    closing = {
        ("ours", "fail"): "verify: 1 passed, 1 failed",
        ("ours", "pass"): "verify: 2 passed, 0 failed",
        ("ours", "alt"): "verify: 2 passed, 0 failed",
    }.get((kind, verdict))
    if closing:  # only our entries are counted
        assert closing in out
    else:
        assert "verify:" not in out


def test_run_prints_listening_line_and_sigint_stops_the_entry(tmp_path):
    repo = make_repo(tmp_path, "ours")
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "--repo", str(repo), "run", "demo", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT at its default in the child, as a terminal's Ctrl-C finds it, even when `make
        # test` runs in the background (a shell starts a background job with SIGINT ignored).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = ""
        deadline = time.monotonic() + 30
        while "listening on" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    pid = int((repo / "servers" / "demo" / "server.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
