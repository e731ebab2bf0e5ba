"""arena stack against the real engines: nginx with TLS in front of the flagship, one short
sample per mode (1 s: structure and sanity, never a speed), the answer check that refuses a
502, and nginx's session resumption on and off as the modes say.

Builds the flagship when needed (cargo). Skipped, with the reason, when nginx, openssl, wrk,
h2load or taskset is missing."""

import http.client
import shutil
import socket
import ssl
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_stack import entries

from arena import stack, stackfront
from arena.build import needs_build
from arena.model import Config

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rust():
    for tool in ("nginx", "openssl", "wrk", "h2load", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH (Debian: nginx-light, openssl, wrk, nghttp2-client, util-linux)")
    entry = entries().get("rust")
    if entry is None or not entry.available:
        pytest.skip(f"the flagship is unavailable: {entry.reason if entry else 'no entry'}")
    if needs_build(entry):
        p = subprocess.run(
            [sys.executable, "-m", "arena.cli", "--repo", str(REPO), "build", "rust"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return entry


@pytest.fixture
def cert(tmp_path):
    tmp_path.chmod(0o755)
    return stackfront.make_certificate(tmp_path)


def test_nginx_tls_in_front_of_the_flagship_answers_302s_and_both_use_cpu(rust):
    (s,) = [x for x in stack.resolve(["rust"], {"rust": rust}) if x.name == "rust"]
    cfg = replace(Config(), duration_s=1, warmup_s=0, repetitions=1)
    record = stack.run([s], ["keepalive", "h2"], cfg)
    assert record.failures == []
    keepalive, h2 = record.samples
    for sample in (keepalive, h2):
        assert sample.requests > 0 and sample.unexpected == 0, sample  # h2load counts every non-3xx answer
        assert sum(sample.cpu["nginx"]) > 0 and sum(sample.cpu["renard"]) > 0, sample.cpu
        assert 0 < sample.entry_share < 1 and sample.cpu_us_per_req > 0
        assert sample.peak_rss_bytes > 0 and sample.p99_us is not None


def test_a_stack_whose_entry_is_gone_is_refused_before_it_is_measured(rust, cert):
    (s,) = [x for x in stack.resolve(["rust"], {"rust": rust}) if x.name == "rust"]
    running = stackfront.start_stack(s, stack.MODES["keepalive"], "0", *cert)
    try:
        assert stackfront.answer_problem(s, running.port, cert[0]) == ""
        running.entry.stop()
        assert stackfront.answer_problem(s, running.port, cert[0]).startswith("answered 502")  # a fast, wrong answer
    finally:
        running.stop()


def reused(port: int, cafile: Path) -> bool:
    """Whether a second connection resumes the first one's TLS session."""
    context = ssl.create_default_context(cafile=str(cafile))
    first = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    first.request("GET", "/")
    first.getresponse().read()  # TLS 1.3 tickets arrive after the handshake
    session = first.sock.session
    first.close()
    raw = context.wrap_socket(
        socket.create_connection(("127.0.0.1", port), 10), server_hostname="127.0.0.1", session=session
    )
    try:
        return raw.session_reused
    finally:
        raw.close()


@pytest.mark.skipif(not shutil.which("nginx") or not shutil.which("openssl"), reason="needs nginx and openssl")
@pytest.mark.parametrize("mode,resumed", [("resumed", True), ("handshake", False)])
def test_nginx_resumes_sessions_only_where_the_mode_says(cert, mode, resumed):
    baseline = stack.BASELINES["nginx-302"]
    running = stackfront.start_stack(baseline, stack.MODES[mode], "0", *cert)
    try:
        assert reused(running.port, cert[0]) is resumed
    finally:
        running.stop()
