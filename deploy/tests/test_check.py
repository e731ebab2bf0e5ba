"""`renard --check URL` (SPEC §8), as the Containerfile's HEALTHCHECK runs it: the real
binary against a running renard (exit 0) and against a closed port (exit 1, one line)."""

import re
import subprocess
from pathlib import Path

from stack import free_port


def start(renard, port):
    proc = subprocess.Popen(
        [str(renard), "--listen", f"127.0.0.1:{port}", "--threads", "1"], stderr=subprocess.PIPE, text=True
    )
    line = proc.stderr.readline()
    assert line.startswith(f"listening on http://127.0.0.1:{port}"), line
    return proc


def check(renard, url):
    return subprocess.run([str(renard), "--check", url], capture_output=True, text=True, timeout=10)


def test_check_of_a_running_renard_exits_0(renard):
    port = free_port()
    proc = start(renard, port)
    try:
        result = check(renard, f"http://127.0.0.1:{port}/healthz")
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_check_of_a_path_not_200_exits_1(renard):
    port = free_port()
    proc = start(renard, port)
    try:
        result = check(renard, f"http://127.0.0.1:{port}/nope")
        assert result.returncode == 1
        assert result.stderr == f'renard: --check: http://127.0.0.1:{port}/nope: answered "HTTP/1.1 404 Not Found"\n'
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_check_of_a_closed_port_exits_1_with_one_line(renard):
    port = free_port()  # bound then released: nothing listens there
    result = check(renard, f"http://127.0.0.1:{port}/healthz")
    assert result.returncode == 1
    assert re.fullmatch(
        rf"renard: --check: http://127\.0\.0\.1:{port}/healthz: cannot connect: [^\n]+\n", result.stderr
    )


def test_check_of_a_bad_url_exits_2_naming_the_flag(renard):
    result = check(renard, "http://localhost:8080/healthz")
    assert result.returncode == 2
    assert result.stderr.startswith("renard: --check: must be http://HOST:PORT/PATH")
    assert result.stderr.count("\n") == 1


def test_the_containerfile_healthcheck_uses_check():
    text = (Path(__file__).resolve().parents[1] / "container" / "Containerfile").read_text()
    assert re.search(r'^HEALTHCHECK .*\["/renard", "--check", "http://127\.0\.0\.1:8080/healthz"\]$', text, re.M)
