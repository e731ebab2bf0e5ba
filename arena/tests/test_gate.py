"""arena gate: its arguments, the baseline worktree, and an A/A count of the floor that
finds no change (instruction counts: seconds; no wall-clock figure is asserted)."""

import subprocess
import sys
from pathlib import Path

import pytest
from test_bench import WRK

from arena.core.sample import Sample
from arena.counts import instructions
from arena.workflows import gate
from arena.workflows.gate import GateError, Options, gate_config, run_gate, worktree

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60)


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
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, words):
    result = arena(*args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1


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
    verdict = gate.timed_verdict("A", "B", cfg, Options(pairs=5, max_pairs=8), said.append)
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
