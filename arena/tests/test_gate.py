"""arena gate: its arguments, the baseline worktree, an A/A count of the floor that finds no
change (instruction counts: seconds; no wall-clock figure is asserted), the pairing of the
timed and latency criteria on samples whose answer is known, and a run error's exit 4."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_bench import WRK

from arena.bench.measure import SampleError
from arena.core.sample import Sample
from arena.counts import instructions
from arena.curves.latency import Point
from arena.workflows import gate
from arena.workflows.gate import GateError, Options, gate_config, run_gate, worktree

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )


CMDS = ["--cmd", "x {listen}", "--baseline-cmd", "y {listen}"]
URLS = ["--url", "http://h/", "--baseline-url", "http://h/"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["gate", "floor"], "exactly one of --baseline REV, --aa, --cmd"),
        (["gate", "--aa", "--baseline", "HEAD", "floor"], "exactly one of --baseline REV, --aa, --cmd"),
        (["gate", "--aa", "--cmd", "x {listen}", "--baseline-cmd", "y {listen}"], "exactly one of"),
        (["gate", "--aa", "--mode", "turbo", "floor"], "--mode"),
        (["gate", "--aa", "--pairs", "6", "--max-pairs", "5", "floor"], "--max-pairs"),
        (["gate", "--aa", "--pairs", "1", "floor"], "--pairs"),
        (["gate", "--cmd", "x {listen}"], "'--baseline-cmd': is needed with the other one"),
        (["gate", "--baseline-url", "http://127.0.0.1:1/"], "'--url': is needed with the other one"),
        (["gate", "--cmd", "x", "--baseline-cmd", "y {listen}"], "'--cmd': must contain {listen} or {port}"),
        (["gate", "--cmd", "x {listen}", "--baseline-cmd", "y {listen}", "floor"], "'--cmd': takes no ENTRY"),
        (["gate", "--url", "ftp://h/", "--baseline-url", "http://127.0.0.1:1/"], "'--url': must start with http"),
        (["gate", "--url", "http://h/", "--baseline-url", "http://h/", "--mode", "keepalive-capped"], "'--mode'"),
        (["gate", "--url", "http://h/", "--baseline-url", "http://h/", "--pid", "1"], "'--pid': give --pid and"),
        (["gate", "--aa", "--pid", "1", "--baseline-pid", "1", "floor"], "'--pid': give --pid and"),
        (["gate", *URLS, "--native"], "'--native': only with --cmd and --baseline-cmd (a running server"),
        (
            ["gate", "--aa", "--native", "floor"],
            "'--native': only with --cmd and --baseline-cmd (an entry's entry.toml",
        ),
        (["gate", *CMDS, "--native", "--timed"], "'--native': counts instead of timing"),
        (["gate", *CMDS, "--native", "--path", "/a"], "'--native': the count's client sends GET /"),
        (["gate", *CMDS, "--native", "--expect", "200"], "'--native': the count's client sends GET /"),
        (["gate", "--aa", "--latency", "p75", "floor"], "'--latency'"),
        (["gate", "--aa", "--at", "0.3", "floor"], "'--at': only with --latency"),
        (["gate", "--aa", "--latency", "p99", "--at", "0", "floor"], "'--at'"),
        (
            ["gate", "--aa", "--latency", "p99", "--mode", "close", "floor"],
            "'--latency': its capacity is A's keepalive",
        ),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, words):
    result = arena(*args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_latency_without_oha_is_a_usage_error_naming_latency(tmp_path):
    result = arena("gate", *CMDS, "--latency", "p99", env={"PATH": str(tmp_path)})  # a PATH with no oha
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "arena: Invalid value for '--latency': " + (
        "oha is not on PATH (arena/tools/install-oha installs it with cargo)"
    )


def test_a_server_that_does_not_start_is_a_run_error_exit_4_with_every_file_saying_it(tmp_path):
    files = ["--json", str(tmp_path / "g.json"), "--junit", str(tmp_path / "g.xml"), "--summary", str(tmp_path / "s")]
    result = arena("gate", "--cmd", "false {listen}", "--baseline-cmd", "false {listen}", *files)
    assert result.returncode == 4, result.stdout + result.stderr
    assert result.stderr.startswith("Error: cmd: A (the baseline): does not start")
    doc = json.loads((tmp_path / "g.json").read_text())
    assert (doc["status"], doc["exit_status"], doc["criteria"]) == ("error", 4, [])
    assert doc["error"].startswith("cmd: A (the baseline): does not start")
    suite = ET.parse(tmp_path / "g.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("1", "1", "0")
    assert suite.find("testcase").find("error").get("message") == doc["error"]
    assert (tmp_path / "s").read_text().startswith("### arena gate: error\n")


def test_the_baseline_worktree_is_removed_afterwards():
    with worktree(REPO, "HEAD") as root:
        assert (root / "arena" / "README.md").is_file()
    assert not root.exists()
    listed = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert str(root) not in listed


def test_an_unknown_revision_is_an_error_naming_it():
    with pytest.raises(GateError, match="no-such-rev"), worktree(REPO, "no-such-rev-xyz"):
        pass


def test_the_floor_against_itself_counts_no_change(tmp_path):
    if instructions.available():
        pytest.skip(instructions.available())
    opts = Options(requests=160)
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    verdicts = run_gate(REPO, ["floor"], None, cfg, opts, tmp_path, say=lambda line: None)
    assert [v.outcome for _, v in verdicts] == ["no change"] * 4  # instructions and system calls, two loads each
    assert not any(v.regression(0.0) for _, v in verdicts)


def cost_sample(cpu_s: float, rps: float, cgroup_s: float | None = None) -> Sample:
    s = Sample.from_wrk("x", "keepalive-capped", 0, dict(WRK, requests=1000), 1.0, 2.0, cpu_s, 100, 50)
    s.rps, s.cgroup_cpu_s = rps, cgroup_s
    return s


def test_the_timed_gate_decides_on_cpu_per_request_from_the_cgroup_and_shows_requests_per_s_beside(monkeypatch):
    # B costs 20% more CPU per request by the cgroup's counter, while its requests/s (wrk's view of a
    # loaded machine) and its /proc ticks say nothing changed: the gate follows the cgroup
    order = []

    def measure(entry, mode_name, rep, cfg, scripts):
        order.append(entry)
        return made[entry].pop(0)

    made = {
        side: [cost_sample(0.01, 1000.0 + i, base + i * 1e-5) for i in range(8)]
        for side, base in (("A", 0.010), ("B", 0.012))
    }
    monkeypatch.setattr(gate, "measure_sample", measure)
    said = []
    cfg = gate_config("keepalive-capped", 1, 0, 10, 0.5)
    verdict = gate.timed_verdict("A", "B", cfg, Options(pairs=5, max_pairs=8), said.append).verdict
    assert order == ["A", "B"] * 8  # paired: significance needs 8 pairs (Wilcoxon's exact p at alpha 0.01)
    assert Options().pairs == 8  # the default is the fewest that can decide
    assert verdict.metric == "CPU per request (keepalive-capped)" and not verdict.higher_is_better
    assert verdict.ratio == pytest.approx(1.2, rel=0.01) and verdict.regression(0.05)
    assert said[0] == "  pair 1: A 10.00, B 12.00 CPU µs per request (A 1,000, B 1,000 requests/s)"
    assert said[-1].startswith("  for reference, not deciding: throughput (keepalive-capped) 1.00×")


def test_without_a_cgroup_the_gate_reads_cpu_per_request_from_proc():
    assert cost_sample(0.01, 1000.0).own_cpu_us == pytest.approx(10.0)
    assert cost_sample(0.01, 1000.0, 0.0123).own_cpu_us == pytest.approx(12.3)


def test_the_baseline_reads_only_the_named_entries_manifests(tmp_path):
    # an older revision's peer manifest that today's arena rejects (no tier) does not stop the gate
    for folder in ("servers/rust", "peers/floor"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "entry.toml").write_text((REPO / folder / "entry.toml").read_text())
    (tmp_path / "peers" / "old").mkdir()
    (tmp_path / "peers" / "old" / "entry.toml").write_text('[[entry]]\nname = "old"\nkind = "peer"\n')
    assert set(gate.baseline_entries(tmp_path, ["rust", "floor"])) == {"rust", "floor"}
    with pytest.raises(GateError, match="peers/old/entry.toml cannot be read"):
        gate.baseline_entries(tmp_path, ["old"])


def latency_point(us: float, rate: float, achieved: float | None = None) -> Point:
    return Point(0.5, rate, rate if achieved is None else achieved, {"p50": us / 2, "p90": us / 1.5, "p99": us}, 0)


def test_the_latency_criterion_pairs_a_and_b_at_a_share_of_a_capacity_and_judges_b_over_a(monkeypatch):
    calls = []

    def fixed_rate_point(entry, cfg, seconds, rate, share):
        calls.append((entry, rate, share))
        return latency_point({"A": 1000.0, "B": 1500.0}[entry] + len(calls), rate)

    monkeypatch.setattr(gate, "fixed_rate_point", fixed_rate_point)
    said = []
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    verdict = gate.latency_verdict("A", "B", 1000.0, cfg, Options(latency="p99", at=0.4, max_pairs=9), said.append)
    assert calls == [("A", 400.0, 0.4), ("B", 400.0, 0.4)] * 8  # decided at 8 pairs: every pair on one side
    assert verdict.name == "latency p99 at 40% of capacity" and not verdict.higher_is_better
    assert verdict.ratio == pytest.approx(1.5, rel=0.01) and verdict.regression(0.05)
    assert verdict.metric == "latency p99 at 40% of A's capacity (400 requests/s)"
    assert said[0] == "  pair 1: A 1,001.0, B 1,502.0 µs p99 (A 400, B 400 of 400 requests/s)"


def test_a_baseline_served_below_the_rate_asked_is_an_error_naming_the_load_generator(monkeypatch):
    monkeypatch.setattr(
        gate, "fixed_rate_point", lambda entry, cfg, s, rate, share: latency_point(900, rate, 0.8 * rate)
    )
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    with pytest.raises(
        SampleError, match="oha sent only 400 of the 500 requests/s asked to A .*median of 8 samples.*lower --at"
    ):
        gate.latency_verdict("A", "B", 1000.0, cfg, Options(latency="p50"), lambda line: None)


def test_the_latency_rate_is_a_share_of_the_median_of_a_timed_requests_per_second(monkeypatch):
    made = {side: [cost_sample(0.01, rps) for rps in (3000.0, 1000.0, 2000.0) * 3] for side in ("A", "B")}
    monkeypatch.setattr(gate, "measure_sample", lambda entry, mode_name, rep, cfg, scripts: made[entry].pop(0))
    rates = []

    def fixed_rate_point(entry, cfg, seconds, rate, share):
        rates.append(rate)
        return latency_point(100.0, rate)

    monkeypatch.setattr(gate, "fixed_rate_point", fixed_rate_point)
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    opts = Options(pairs=9, max_pairs=9, latency="p90", at=0.25)
    timed, latency = gate.judge(Named("A"), Named("B"), cfg, opts, False, say=lambda line: None)
    assert timed.name == "CPU per request (keepalive)" and latency.name == "latency p90 at 25% of capacity"
    assert set(rates) == {500.0} and latency.outcome == "no change"  # 25% of 2,000, A's median requests/s


def test_a_run_error_keeps_the_verdicts_decided_before_it(monkeypatch):
    monkeypatch.setattr(gate, "measure_sample", lambda *args: cost_sample(0.01, 1000.0))

    def fixed_rate_point(entry, cfg, seconds, rate, share):
        raise gate.LoadError("oha did not finish within 31 s")

    monkeypatch.setattr(gate, "fixed_rate_point", fixed_rate_point)
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    with pytest.raises(GateError, match="cmd: A \\(the baseline\\): oha did not finish") as raised:
        gate.run_outside_gate(Named("cmd"), Named("cmd"), cfg, Options(latency="p99"), say=lambda line: None)
    assert [(name, v.name, v.outcome) for name, v in raised.value.found] == [
        ("cmd", "CPU per request (keepalive)", "no change")
    ]


class Named(str):
    """A stand-in entry for the workflow's loops: a name, no server."""

    @property
    def name(self) -> str:
        return str(self)


def test_a_mode_one_side_was_not_counted_in_is_left_out_of_the_system_call_verdicts(monkeypatch):
    """An entry that declares `pipelining = false` has no pipelined count: the gate compares the
    modes both sides were counted in, and says the other, rather than failing on it."""
    from arena.counts import syscalls
    from arena.workflows import gate

    def counted(entry, modes, requests):
        modes = [m for m in modes if m == "keepalive" or entry == "A"]
        calls = {"recvfrom": 1.0, "sendto": 1.0, "epoll_pwait": 1.0}
        return syscalls.EntryCounts(
            entry, "peer", [syscalls.Count(m, requests, 3.0, calls, {}, {}, 0.0) for m in modes]
        )

    monkeypatch.setattr(syscalls, "count_entry", counted)
    said = []
    verdicts = gate.syscall_verdicts("A", "B", said.append)
    assert [v.outcome for v in verdicts] == ["no change"]
    assert any("pipeline16" in line and "not compared" in line for line in said)
