"""arena stack against the real engines: nginx with TLS in front of the flagship, one short
sample per mode (1 s: structure and sanity, never a speed), the answer check that refuses a
502, nginx's session resumption on and off as the modes say, and the request mix (--mix) as
nginx's access log sees it from wrk and from h2load.

Builds the flagship when needed (cargo). Skipped, with the reason, when nginx, openssl, wrk,
h2load or taskset is missing."""

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from test_stack import entries

from arena.core.model import Config
from arena.entries.build import needs_build
from arena.load.mix import MIXES, PERIOD, targets
from arena.stack import front as stackfront
from arena.stack import run as stack
from renard_conformance.launcher import process_tree

REPO = Path(__file__).resolve().parents[2]
TOOLS = ("nginx", "openssl", "wrk", "h2load", "taskset")


def need_tools():
    for tool in TOOLS:
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH (Debian: nginx-light, openssl, wrk, nghttp2-client, util-linux)")


@pytest.fixture(scope="module")
def rust():
    need_tools()
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


@pytest.mark.parametrize("policy, expected", [("batch", os.SCHED_BATCH), ("normal", os.SCHED_OTHER)])
def test_the_daemon_behind_nginx_runs_under_the_policy_and_nginx_under_the_normal_one(rust, cert, policy, expected):
    # batch is deploy/renard.service's CPUSchedulingPolicy=: the stack measures what is deployed
    for transport in ("rust", "rust+unix"):
        (s,) = [x for x in stack.resolve([transport], {"rust": rust}) if x.name == transport]
        running = stackfront.start_stack(s, stack.MODES["keepalive"], "0", *cert, policy=policy)
        try:
            assert stackfront.answer_problem(s, running.port, cert[0]) == ""
            daemon = process_tree(running.entry.proc.pid)
            front = process_tree(running.front.process.pid)
            assert daemon and {os.sched_getscheduler(pid) for pid in daemon} == {expected}, (transport, daemon)
            assert {os.sched_getscheduler(pid) for pid in front} == {os.SCHED_OTHER}
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


@pytest.fixture
def access_logs(monkeypatch, tmp_path):
    """Every stack started from here on logs each request's protocol, connection serial number
    and request-target, in the order nginx finished them, to a file of its own (one per sample,
    in the run's order)."""
    need_tools()
    logs: list[Path] = []
    render = stackfront.front_config

    def with_access_log(*args, **kwargs):
        path = tmp_path / f"access-{len(logs)}.log"
        logs.append(path)
        log = f"log_format arena_mix '$server_protocol $connection $request_uri';\n    access_log {path} arena_mix;"
        return render(*args, **kwargs).replace("access_log off;", log)

    monkeypatch.setattr(stackfront, "front_config", with_access_log)
    return logs


def sent(path: Path, protocol: str) -> dict[str, list[str]]:
    """Connection -> its request-targets in order, all of `protocol`; the first request, the
    answer check's (GET / over HTTP/1.1 before any load), left out."""
    lines = [line.split(" ", 2) for line in path.read_text().splitlines()]
    assert lines[0][0] == "HTTP/1.1" and lines[0][2] == "/", lines[:3]
    assert {p for p, _, _ in lines[1:]} == {protocol}
    out: dict[str, list[str]] = {}
    for _, connection, target in lines[1:]:
        out.setdefault(connection, []).append(target)
    return out


def h2load_walk(sequence: list[str], count: int) -> list[str]:
    """What h2load sends on one connection from its -i file (the sequence's first PERIOD
    request-targets): the file in order, from its start again after its last line (a fast
    machine sends more than PERIOD on one connection within the test's seconds)."""
    return [sequence[i % len(sequence)] for i in range(count)]


def assert_shares(targets_sent: list[str]) -> None:
    """The mix's shares, within what any prefix of 300 or more of its sequence keeps (at most
    0.015 off for seeds, 0.009 for cache-busters)."""
    n = len(targets_sent)
    seeded, busted = sum("?seed=" in t for t in targets_sent), sum("?cb=" in t for t in targets_sent)
    assert targets_sent.count("/") + seeded + busted == n
    assert abs(seeded / n - 0.15) < 0.03 and abs(busted / n - 0.05) < 0.02, (n, seeded, busted)


def test_wrk_and_h2load_send_the_one_sequence_of_the_mix(access_logs):
    """One connection each, so the log's order is the order sent: wrk from the sequence's second
    request (it calls request() once before connecting, to count pipelined requests), h2load
    (-i, -m1) from its first."""
    cfg = replace(Config(), duration_s=1, warmup_s=0, repetitions=1, connections=1, mix="seeded")
    record = stack.run([stack.BASELINES["nginx-302"]], ["keepalive", "h2"], cfg)
    assert record.failures == [] and record.config["mix"] == "seeded"
    assert "Requests sent (--mix seeded): 80% `GET /`" in stack.method_words(cfg, record)
    sequence = targets(MIXES["seeded"], "/", PERIOD)
    (by_wrk,) = sent(access_logs[0], "HTTP/1.1").values()
    (by_h2load,) = sent(access_logs[1], "HTTP/2.0").values()
    assert len(by_wrk) >= 300 and len(by_h2load) >= 300, (len(by_wrk), len(by_h2load))
    assert by_wrk == targets(MIXES["seeded"], "/", 1 + len(by_wrk))[1:]  # its N go on counting past PERIOD
    assert by_h2load == h2load_walk(sequence, len(by_h2load))
    assert_shares(by_wrk)
    assert_shares(by_h2load)


def test_with_several_connections_wrk_shares_the_sequence_and_h2load_walks_it_per_connection(access_logs):
    """4 connections. wrk, a new connection per request: its requests are the first calls of
    request(), taken as its connections became writable. h2load: each connection sends the
    file (the sequence) from its start, in order."""
    connections = 4
    # 3 s: a resumed TLS handshake per request made 170-296 requests in 1 s on a busy 2-vCPU
    # machine, under the 300 the shares' bound needs; 3 s gives that machine 500 or more.
    cfg = replace(Config(), duration_s=3, warmup_s=0, repetitions=1, connections=connections, mix="seeded")
    record = stack.run([stack.BASELINES["nginx-302"]], ["resumed", "h2"], cfg)
    assert record.failures == []
    sequence = targets(MIXES["seeded"], "/", PERIOD)
    by_wrk = [t for one in sent(access_logs[0], "HTTP/1.1").values() for t in one]
    assert len(by_wrk) >= 300, len(by_wrk)
    # nothing but the first calls of request(), each once (up to one per connection cut at the end)
    assert not Counter(by_wrk) - Counter(targets(MIXES["seeded"], "/", 1 + len(by_wrk) + connections)[1:])
    assert_shares(by_wrk)
    per_connection = sent(access_logs[1], "HTTP/2.0")
    assert len(per_connection) == connections
    for one in per_connection.values():
        assert len(one) >= 300 and one == h2load_walk(sequence, len(one)), len(one)
        assert_shares(one)


def test_stack_mix_is_recorded_in_stack_json_and_said_in_the_report(tmp_path):
    need_tools()
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), "stack", "nginx-302", "--mix", "seeded"]
        + ["--modes", "keepalive", "--duration", "1", "--warmup", "0", "--reps", "1", "--connections", "4"]
        + ["--results", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (out,) = tmp_path.glob("stack-*")
    record = json.loads((out / "stack.json").read_text())
    assert record["config"]["mix"] == "seeded" and len(record["samples"]) == 2  # nginx-302, nginx-png
    assert "Requests sent (--mix seeded): 80% `GET /`" in (out / "report.md").read_text()
