"""make demo, as a person sees it: the page in headless Chromium, over HTTPS, loads every
random fox, shows more than one, and is saved as a screenshot (results/demo/screenshot.png).
Chromium trusts the demo's self-signed certificate by its key's hash, and nothing else."""

import base64
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "deploy" / "demo" / "run"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=10000",
]


def spki_hash(cert: str) -> str:
    """base64(SHA-256(SubjectPublicKeyInfo)), as --ignore-certificate-errors-spki-list takes it."""
    der = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-pubkey"], capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=der, capture_output=True, check=True)
    return base64.b64encode(hashlib.sha256(der.stdout).digest()).decode()


def chromium(demo, *args: str) -> subprocess.CompletedProcess:
    url, cert = demo
    exe = shutil.which("chromium")
    assert exe, "chromium is missing (scripts/deps installs it)"
    trust = f"--ignore-certificate-errors-spki-list={spki_hash(cert)}"
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [exe, *CHROMIUM_FLAGS, trust, f"--user-data-dir={profile}", *args, url],
            capture_output=True,
            text=True,
            timeout=120,
        )


@pytest.fixture
def demo(renard):
    proc = subprocess.Popen(
        [sys.executable, str(RUN), "--seconds", "120", "--renard", str(renard)], stdout=subprocess.PIPE, text=True
    )
    try:
        line, cert = proc.stdout.readline(), proc.stdout.readline()
        match = re.match(r"demo on (https://127\.0\.0\.1:\d+/demo\.html)$", line.strip())
        assert match, f"demo printed {line!r}"
        yield match.group(1), cert.split()[1]
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0


def test_every_random_fox_loads_and_they_differ(demo):
    dom = chromium(demo, "--dump-dom").stdout
    status = re.search(r'<p id="status" data-loaded="(\d+)" data-distinct="(\d+)"', dom)
    assert status, "the page never reported its images: " + dom[-500:]
    loaded, distinct = map(int, status.groups())
    assert loaded == 12  # every image: naturalWidth > 0 after the redirect
    assert distinct > 1  # 12 alike: probability 21^-11


def test_the_page_is_saved_as_a_screenshot(demo):
    out = REPO / "results" / "demo" / "screenshot.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    chromium(demo, "--window-size=760,900", f"--screenshot={out}")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
