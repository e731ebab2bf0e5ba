"""A bench survives entries that break: beside a good entry, one that stops
answering, one that exits, one that starts answering 200 and one that answers 200 from its
first request (tests/fixtures/broken: stand-in servers, standard-library Python). The run
completes, the good entry is measured, each broken one is reported with its reason and its
stderr in the logs, and the exit status says the run did not measure everything. Ctrl-C
writes what was measured; `arena report` rebuilds an unfinished run from samples.jsonl.

Real wrk, real processes: skipped only where wrk or taskset is missing."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import descendants

from arena.core.model import JOURNAL, validate

FIXTURE_REPO = Path(__file__).parent / "fixtures" / "broken"
BROKEN = {  # entry -> what its failed samples must say
    "stalls": "after the run: got 0 of 1 responses",
    "exits": "exited during the run with status 3",
    "says-200": "after the run: expected a 302",
}


def arena(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "arena.cli", "--repo", str(FIXTURE_REPO), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(autouse=True)
def wrk_and_taskset():
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")


def test_a_bench_with_broken_entries_completes_measures_the_good_one_and_reports_the_others(tmp_path):
    # Keep-alive modes: a close mode would also wait for room in the machine's conntrack table,
    # which other processes on a shared machine can hold for minutes (conntrack.py).
    p = arena("bench", "--quick", "--no-verify", "--modes", "keepalive,keepalive-capped", "--results", str(tmp_path))
    out = p.stdout + p.stderr
    assert "Traceback" not in out, out[-4000:]
    assert p.returncode == 1, out[-4000:]
    assert "Error: the run did not measure everything" in p.stderr and "dropped wrong-at-once" in p.stderr

    run_dir = (tmp_path / "latest").resolve()
    run = validate(json.loads((run_dir / "run.json").read_text()))
    assert "unfinished" not in run
    modes = run["config"]["modes"]  # keepalive-capped is left out where no cgroup can be made
    good = [s for s in run["samples"] if s["entry"] == "good"]
    assert sorted(s["mode"] for s in good) == sorted(modes)
    assert all(s["requests"] > 20 and s["rps"] > 0 for s in good), good
    assert {s["entry"] for s in run["samples"]} == {"good"}

    failures = {(f["entry"], f["mode"]): f for f in run["failures"]}
    assert set(failures) == {(name, m) for name in BROKEN for m in modes}
    for (name, mode_name), f in failures.items():
        assert f["error"].startswith(BROKEN[name]), f
        log = (run_dir / f["log"]).read_text()
        assert f["log"] == f"logs/{name}-{mode_name}-rep1.log" and BROKEN[name] in log
    assert "fixture: exiting after 20 requests" in (run_dir / "logs" / "exits-keepalive-rep1.log").read_text()
    wrong = next(e for e in run["entries"] if e["name"] == "wrong-at-once")
    assert not wrong["available"] and wrong["reason"].startswith("does not start: wrong-at-once: only wrong answers")

    journal = [json.loads(line) for line in (run_dir / JOURNAL).read_text().splitlines()]
    assert len(journal) == len(run["samples"]) + len(run["failures"])

    md, html = (run_dir / "report.md").read_text(), (run_dir / "report.html").read_text()
    for name, reason in BROKEN.items():
        assert f"| {name} | keepalive | 1 | {reason}" in md
        assert f"1 of 1 sample of {name} in mode keepalive failed: {reason}" in html
    assert "## Failed samples" in md and "<h2>Failed samples</h2>" in html
    assert "every sample failed: exited during the run with status 3" in md
    assert "failed samples" in p.stdout and "logs/stalls-keepalive-rep1.log" in p.stdout


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def fixture_servers() -> list[str]:
    """The fixture's servers still running under this test session (their command line names
    the behaviour). The session is a subreaper (conftest.py): a server whose arena died is
    re-parented to it, so it is found here too; other sessions' servers on the machine are not."""
    return [cmd for cmd in descendants(os.getpid()).values() if "server.py" in cmd and "--behaviour" in cmd]


# Ctrl-C as a terminal sends it: SIGINT at its default in the child, even when `make test`
# runs in the background (a shell starts a background job with SIGINT ignored); SIGTERM as
# kill, systemd or a CI's time limit send it.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_writes_the_samples_measured_so_far_stops_the_server_and_report_rebuilds_the_run(tmp_path, sig):
    argv = [sys.executable, "-m", "arena.cli", "--repo", str(FIXTURE_REPO), "bench", "good", "--quick"]
    argv += ["--no-verify", "--modes", "keepalive", "--reps", "30", "--results", str(tmp_path)]
    bench = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(tmp_path.glob(f"*/{JOURNAL}")):
            time.sleep(0.2)
        (journal,) = tmp_path.glob(f"*/{JOURNAL}")
        run_dir = journal.parent
        # Written before the first sample: what `arena report` rebuilds from if the arena dies.
        head = json.loads((run_dir / "run.json").read_text())
        assert head["unfinished"].startswith("the arena stopped while measuring") and head["samples"] == []
        rebuilt = arena("report", str(run_dir))
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert "this run did not finish (the arena stopped while measuring" in (run_dir / "report.md").read_text()

        bench.send_signal(sig)
        out, err = bench.communicate(timeout=60)
    finally:
        bench.kill()
    assert bench.returncode == 130 and "Traceback" not in out + err, out[-3000:] + err[-3000:]
    assert fixture_servers() == []  # the sample's server was stopped, not left behind
    run = validate(json.loads((run_dir / "run.json").read_text()))
    assert run["unfinished"].startswith("interrupted (Ctrl-C or SIGTERM) after")
    assert 1 <= len(run["samples"]) < 30 and all(s["entry"] == "good" for s in run["samples"])
    assert "this run did not finish (interrupted (Ctrl-C or SIGTERM)" in (run_dir / "report.md").read_text()
    assert not (tmp_path / "history.jsonl").exists()  # a partial run is no point of the history
