"""`--metrics` (SPEC §8): `GET /metrics` on the real binary, read with prometheus_client's
own text parser, so that what renard prints is what a Prometheus server scrapes."""

import http.client
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from http_client import Client
from renard_process import running_renard

STATUSES = ["200", "302", "400", "404", "405", "408", "414", "431", "501", "505"]


@pytest.fixture
def server(renard):
    """A renard with --metrics and two threads: (process, port)."""
    with running_renard(renard, "--threads", "2", "--metrics") as server:
        yield server


def scrape(port):
    """The metrics as {sample name, or name{label values in label-name order}: value}, and
    the families' types."""
    answer = Client(port).get("/metrics")
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/plain; version=0.0.4"
    assert answer.headers["cache-control"] == "no-store"
    values, types = {}, {}
    for family in text_string_to_metric_families(answer.body.decode()):
        types[family.name] = family.type
        for sample in family.samples:
            labels = ",".join(sample.labels[name] for name in sorted(sample.labels))
            key = sample.name + (f"{{{labels}}}" if labels else "")
            values[key] = sample.value
    return values, types


def test_metrics_are_prometheus_text_with_every_family_typed(server):
    _, port = server
    values, types = scrape(port)
    assert types == {
        "renard_responses": "counter",
        "renard_open_connections": "gauge",
        "renard_evicted": "counter",
        "renard_refused": "counter",
        "renard_uptime_seconds": "gauge",
        "renard_build_info": "gauge",
        "process_cpu_seconds": "counter",
        "process_resident_memory_bytes": "gauge",
        "process_open_fds": "gauge",
        "process_max_fds": "gauge",
        "process_start_time_seconds": "gauge",
    }
    assert {f"renard_responses_total{{{s}}}" for s in STATUSES} <= values.keys()
    assert values["renard_open_connections"] == 1  # the scrape's own connection
    assert 0 < values["renard_uptime_seconds"] < 60


def test_responses_are_counted_by_status_across_threads(server):
    _, port = server
    before, _ = scrape(port)
    for _ in range(5):  # fresh connections: spread over both threads by SO_REUSEPORT
        client = Client(port)
        assert client.get("/").status == 302
        assert client.get("/healthz").status == 200
        assert client.get("/nope").status == 404
        client.close()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET / HTTP/2.0\r\n\r\n")
        assert s.recv(1024).startswith(b"HTTP/1.1 505 ")
    after, _ = scrape(port)

    def delta(status):
        key = f"renard_responses_total{{{status}}}"
        return after[key] - before[key]

    # 200: five /healthz and the first scrape (the second counts itself after rendering).
    assert (delta("302"), delta("200"), delta("404"), delta("505"), delta("400")) == (5, 6, 5, 1, 0)


def test_head_has_the_length_of_get_without_the_body(server):
    _, port = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("HEAD", "/metrics")
    response = conn.getresponse()
    assert response.status == 200
    assert int(response.getheader("content-length")) > 0
    assert response.read() == b""
    conn.close()


def test_other_methods_on_metrics_are_405(server):
    _, port = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("POST", "/metrics", body=b"")
    response = conn.getresponse()
    assert (response.status, response.getheader("allow")) == (405, "GET, HEAD")
    conn.close()


def test_evictions_at_the_cap_are_counted(renard):
    # One thread: every arrival beyond the cap finds a partial head to evict (SPEC §7.5). Each
    # sends the first octet of its head: renard defers accept until a client sends (§7.5), so a
    # silent connection would stay with the kernel, outside the cap, for up to a second.
    with running_renard(renard, "--threads", "1", "--metrics", "--max-connections", "4") as (_, port):
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(8)]
        try:
            for s in idle:
                s.sendall(b"G")
            values, _ = scrape(port)  # 9 connections for 4 places: 5 evicted, the scrape kept
            assert (values["renard_evicted_total"], values["renard_refused_total"]) == (5, 0)
            assert values["renard_open_connections"] == 4
        finally:
            for s in idle:
                s.close()


def test_without_the_flag_metrics_is_not_found(renard):
    with running_renard(renard, "--threads", "1") as (_, port):
        assert Client(port).get("/metrics").status == 404


def test_build_info_names_the_version_and_commit_that_version_prints(server, renard):
    _, port = server
    values, _ = scrape(port)
    version, commit = re.fullmatch(
        r"renard (\S+) \(commit ([0-9a-f]{12}|unknown)\)\n",
        subprocess.run([str(renard), "--version"], capture_output=True, text=True, check=True).stdout,
    ).groups()
    # Labels in name order: commit, version.
    assert values == values | {f"renard_build_info{{{commit},{version}}}": 1.0}


def test_process_metrics_match_what_the_kernel_says(server):
    proc, port = server
    values, _ = scrape(port)
    status = Path(f"/proc/{proc.pid}/status").read_text()
    rss = int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)[1]) * 1024
    assert 0.5 * rss <= values["process_resident_memory_bytes"] <= 2 * rss
    open_fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
    assert abs(values["process_open_fds"] - open_fds) <= 2  # the scrape's own connection comes and goes
    soft = re.search(r"^Max open files\s+(\d+)", Path(f"/proc/{proc.pid}/limits").read_text(), re.M)[1]
    assert values["process_max_fds"] == int(soft)
    tick = os.sysconf("SC_CLK_TCK")
    stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    boot = int(re.search(r"^btime (\d+)$", Path("/proc/stat").read_text(), re.M)[1])
    started = boot + int(stat[19]) / tick  # starttime, field 22 of stat: ticks after boot
    assert abs(values["process_start_time_seconds"] - started) < 2
    assert values["process_start_time_seconds"] <= time.time()
    cpu_s = (int(stat[11]) + int(stat[12])) / tick
    assert 0 <= values["process_cpu_seconds_total"] <= cpu_s + 0.05
