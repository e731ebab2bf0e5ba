"""`arena verify` exit status (only `ours` failures count) and `arena run` (prints the
listening line, SIGINT stops the entry), against a tiny Python entry and a stand-in runner."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SERVER = '''
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
'''

RUNNER = '''
from dataclasses import dataclass
DEFAULT_COUNT = 21
DEFAULT_LOCATION = "https://avatar.example.org/Renard-{n}.png"
@dataclass
class Target:
    host: str
    port: int
    count: int = 21
    location: str = DEFAULT_LOCATION
    header_timeout: float = 10.0
    idle_timeout: float = 60.0
@dataclass
class Outcome:
    name: str
    verdict: str
    detail: str
def check_all(target, quick=False, skip_slow=False):
    import socket
    socket.create_connection((target.host, target.port)).close()
    return [Outcome("answers", "pass", ""), Outcome("strictness", "VERDICT", "stand-in")]
'''

ENTRY = '''
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
'''


def make_repo(root: Path, kind: str, verdict: str) -> Path:
    (root / "spec" / "runner").mkdir(parents=True)
    (root / "spec" / "SPEC.md").write_text("spec")
    (root / "spec" / "runner" / "conformance.py").write_text(RUNNER.replace("VERDICT", verdict))
    folder = root / ("servers" if kind == "ours" else "peers") / "demo"
    folder.mkdir(parents=True)
    (folder / "server.py").write_text(SERVER)
    (folder / "entry.toml").write_text(ENTRY.replace("NAME", "demo").replace("KIND", kind))
    return root


def arena(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind,verdict,status", [
    ("ours", "pass", 0),
    ("ours", "alt", 0),     # an allowed alternative is not a failure
    ("ours", "fail", 1),
    ("peer", "fail", 0),    # peers may fail cases
])
def test_verify_exits_1_only_when_ours_fails(tmp_path, kind, verdict, status):
    p = arena(make_repo(tmp_path, kind, verdict), "verify")
    assert p.returncode == status, p.stdout + p.stderr
    assert "answers" in p.stdout and {"pass": "✓", "alt": "~", "fail": "✗"}[verdict] in p.stdout
    closing = {("ours", "fail"): "verify: 1 passed, 1 failed", ("ours", "pass"): "verify: 2 passed, 0 failed",
               ("ours", "alt"): "verify: 2 passed, 0 failed"}.get((kind, verdict))
    if closing:     # only our entries are counted
        assert closing in p.stdout
    else:
        assert "verify:" not in p.stdout


def test_run_prints_listening_line_and_sigint_stops_the_entry(tmp_path):
    repo = make_repo(tmp_path, "ours", "pass")
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "--repo", str(repo), "run", "demo",
                             "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
