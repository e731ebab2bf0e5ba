"""`renard --check URL` (SPEC §8), as the Containerfile's HEALTHCHECK runs it: the real
binary against a running renard (exit 0) and against a closed port (exit 1, one line)."""

import re
import subprocess
from pathlib import Path

from renard_process import running_renard
from stack import free_port


def check(renard, url):
    return subprocess.run([str(renard), "--check", url], capture_output=True, text=True, timeout=10)


def test_check_of_a_running_renard_exits_0(renard):
    with running_renard(renard, "--threads", "1") as (_, port):
        result = check(renard, f"http://127.0.0.1:{port}/healthz")
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_check_of_a_path_not_200_exits_1(renard):
    with running_renard(renard, "--threads", "1") as (_, port):
        result = check(renard, f"http://127.0.0.1:{port}/nope")
        assert result.returncode == 1
        assert result.stderr == f'renard: --check: http://127.0.0.1:{port}/nope: answered "HTTP/1.1 404 Not Found"\n'


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
