"""A real `arena bench --quick` of one entry: structure and sanity of run.json, never a speed.

Builds the entry when needed (the flagship needs cargo). Skipped, with the reason, when wrk,
taskset or the entry's tools are missing, or the entry does not exist yet."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.core.model import validate
from arena.entries.manifest import discover

REPO = Path(__file__).resolve().parents[2]


def entry_or_skip(name: str):
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")
    entry = next((e for e in discover(REPO) if e.name == name), None)
    if entry is None:
        pytest.skip(f"no entry named {name} in {REPO}")
    if not entry.available:
        pytest.skip(f"{name} is unavailable: {entry.reason}")
    return entry


@pytest.mark.parametrize("name", ["rust", "nginx-lua"])
def test_quick_bench_writes_a_sane_run(tmp_path, name):
    entry = entry_or_skip(name)
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), "bench", name, "--quick", "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if "build failed" in p.stdout + p.stderr:
        pytest.skip(f"{name} does not build here:\n{p.stdout[-2000:]}")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]

    run = validate(json.loads((tmp_path / "latest" / "run.json").read_text()))
    assert (tmp_path / "latest" / "report.md").is_file() and (tmp_path / "latest" / "report.html").is_file()
    (record,) = run["entries"]
    assert record["available"], record["reason"]
    assert len(record["startup_ms"]) == 1 and record["startup_ms"][0] > 0
    assert record["artifact_bytes"] and record["version"]
    if entry.kind == "ours" and record["verify"] is not None:
        assert record["verify"]["fail"] == 0, record["verify"]
    assert run["config"]["quick"] and run["machine"]["cores"] >= 1 and "wrk" in run["machine"]["tools"]
    assert sorted(s["mode"] for s in run["samples"]) == sorted(run["config"]["modes"])
    for s in run["samples"]:
        assert s["requests"] > 0 and s["rps"] > 0, s
        assert sum(s["errors"].values()) == 0 and s["non_3xx"] == 0, s
        assert s["server_cpu_s"] > 0 and s["cpu_us_per_req"] > 0, s
        assert 0 < s["client_cpu_share"] <= 1.5 and 0 < s["server_cpu_share"] <= 1.5, s
        assert s["peak_rss_bytes"] > 0 and s["pss_bytes"] > 0, s
        if s["mode"] != "pipeline16":  # wrk does not time pipelined requests
            assert s["latency_us"]["p50"] <= s["latency_us"]["p99"] <= s["latency_us"]["max"], s
