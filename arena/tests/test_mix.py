"""`arena bench --mix seeded`: the requests that reach a real renard (read off its own
system calls with strace) are 80% `GET /`, 15% `/?seed=NAME` from the fixed list and 5%
`/?cb=N`, pipelined ones too; two wrk runs send the same sequence, the one mix.py lays out
(which h2load's file holds too: `arena stack`'s wire is checked in test_stack_real.py); the
run and its report say which mix was measured."""

import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from arena.core.modes import mode
from arena.entries.manifest import discover
from arena.entries.process import Launch, free_port, launch_ready
from arena.load.mix import BLOCK, MIXES, PERIOD, SEED_NAMES, kinds, lua, targets, write_uris
from arena.load.wrk import wrk_script

REPO = Path(__file__).resolve().parents[2]
TARGET = re.compile(r"GET (\S+) HTTP/1\.1")


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def renard():
    """The flagship, started for the test (one thread, not pinned), stopped after it."""
    for tool in ("wrk", "taskset", "strace"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")
    entry = next((e for e in discover(REPO) if e.name == "rust"), None)
    if entry is None or not entry.available or not (entry.folder / "bin" / "renard").is_file():
        pytest.skip("servers/rust/bin/renard is not built (make build)")
    server = launch_ready(entry, Launch(port=free_port(), threads=1))
    try:
        yield server
    finally:
        server.stop()


class Traced:
    """strace attached to a process: every read it makes, its bytes in full (-s)."""

    def __init__(self, pid: int, out: Path):
        self.out = out
        self.proc = subprocess.Popen(
            ["strace", "-f", "-p", str(pid), "-e", "trace=read,recvfrom,recvmsg,readv", "-s", "65536", "-o", str(out)],
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 10
        line = ""
        while "attached" not in line and time.monotonic() < deadline:  # strace says so on stderr
            line = self.proc.stderr.readline()
        assert "attached" in line, f"strace did not attach: {line!r}"

    def stop(self) -> list[str]:
        """Detaches; each read's data (one string per read system call that holds a request)."""
        self.proc.terminate()
        self.proc.wait(timeout=10)
        return [line for line in self.out.read_text(errors="replace").splitlines() if "GET " in line]


def shares(targets: list[str]) -> Counter:
    kinds = Counter()
    for t in targets:
        kinds["seed" if "?seed=" in t else "cb" if "?cb=" in t else "plain" if t == "/" else "other"] += 1
    return kinds


def test_the_mixes_are_what_they_say():
    assert set(MIXES) == {"default", "seeded"}
    assert lua(MIXES["default"]) == ""  # the default sends wrk's static request, as every earlier run
    seeded = MIXES["seeded"]
    assert (seeded.plain_per_mille, seeded.seeded_per_mille, seeded.busted_per_mille) == (800, 150, 50)
    assert len(SEED_NAMES) == 16 and all(name.isalpha() for name in SEED_NAMES)


def test_every_block_of_1000_requests_holds_the_shares_exactly():
    seeded = MIXES["seeded"]
    layout = kinds(seeded)
    assert len(layout) == PERIOD and layout == kinds(seeded)
    blocks = [Counter("seed" if c.isalpha() else c for c in layout[i : i + BLOCK]) for i in range(0, PERIOD, BLOCK)]
    assert all(b == {"/": 800, "seed": 150, "+": 50} for b in blocks), blocks[0]
    assert len({layout[i : i + BLOCK] for i in range(0, PERIOD, BLOCK)}) == PERIOD // BLOCK  # shuffled anew
    assert set(targets(seeded, "/", PERIOD)) >= {f"/?seed={n}" for n in SEED_NAMES}  # every name drawn


def test_the_targets_add_a_seed_or_a_counting_cache_buster_to_the_path():
    seeded = MIXES["seeded"]
    sent = targets(seeded, "/x?a=1", PERIOD + BLOCK)
    busters = [int(t.rsplit("=", 1)[1]) for t in sent if "&cb=" in t]
    assert busters == list(range(1, len(busters) + 1)) and len(busters) == 50 * (PERIOD + BLOCK) // BLOCK
    assert {t for t in sent if "cb=" not in t} == {"/x?a=1"} | {f"/x?a=1&seed={n}" for n in SEED_NAMES}
    assert targets(MIXES["default"], "/", 3) == ["/", "/", "/"]


def test_h2loads_file_is_the_sequence_as_full_urls(tmp_path):
    seeded = MIXES["seeded"]
    lines = write_uris(seeded, "https://127.0.0.1:8443/", tmp_path / "uris.txt").read_text().splitlines()
    assert lines == [f"https://127.0.0.1:8443{t}" for t in targets(seeded, "/", PERIOD)]


def test_the_seeded_mix_reaches_the_server_in_its_proportions(renard, tmp_path):
    """keepalive, close and pipeline16 through `arena bench --url`: what renard read."""
    trace = Traced(renard.proc.pid, tmp_path / "trace.txt")
    try:
        p = arena(
            "bench",
            "--url",
            f"http://127.0.0.1:{renard.port}/",
            "--mix",
            "seeded",
            "--modes",
            "keepalive,close,pipeline16",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--reps",
            "1",
            "--connections",
            "8",
            "--results",
            str(tmp_path / "results"),
        )
    finally:
        reads = trace.stop()
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    targets = [t for line in reads for t in TARGET.findall(line)]
    kinds = shares(targets)
    n = len(targets)
    assert n >= 2000, f"too few requests to judge the shares: {n}"
    assert kinds["other"] == 0, kinds
    # The sequence is fixed (seeded), so these shares are the same in every run; the bounds
    # are over 4 binomial standard deviations at n = 2000.
    assert abs(kinds["seed"] / n - 0.15) < 0.03, kinds
    assert abs(kinds["cb"] / n - 0.05) < 0.02, kinds
    assert abs(kinds["plain"] / n - 0.80) < 0.035, kinds
    assert {t.split("=", 1)[1] for t in targets if "?seed=" in t} <= set(SEED_NAMES)
    assert all(re.fullmatch(r"/\?cb=[1-9][0-9]*", t) for t in targets if "?cb=" in t)
    # A pipelined write (16 requests read at once) carries the mix too, not 16 copies of GET /.
    pipelined = [t for line in reads if len(TARGET.findall(line)) >= 8 for t in TARGET.findall(line)]
    assert len(pipelined) >= 1000, len(pipelined)
    assert abs(shares(pipelined)["seed"] / len(pipelined) - 0.15) < 0.04, shares(pipelined)

    run_dir = (tmp_path / "results" / "latest").resolve()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["config"]["mix"] == "seeded"
    assert "Requests sent (--mix seeded): 80% `GET /`, 15%" in (run_dir / "report.md").read_text()


ANSWERS = 400  # responses a traced run waits for: a count, not a duration, so that a busy
# machine (strace slows the server several times) sends as many as a quiet one
WRK_CEILING_S = 60  # a run that cannot reach ANSWERS in this long has stopped answering


def run_wrk_traced(renard, script: Path, out: Path) -> list[str]:
    """The targets a one-connection wrk run with the mode's script sent, until the server had
    answered ANSWERS of them: a response() added to the script exits wrk then (its main
    thread sleeps the whole -d whatever its threads do, so wrk.thread:stop() would not end it)."""
    counted = out.with_suffix(".lua")
    counted.write_text(
        f"dofile({str(script)!r})\nlocal answered = 0\n"
        f"function response()\n  answered = answered + 1\n  if answered >= {ANSWERS} then os.exit(0) end\nend\n"
    )
    trace = Traced(renard.proc.pid, out)
    try:
        wrk = subprocess.run(
            ["wrk", "-t1", "-c1", f"-d{WRK_CEILING_S}s", "-s", str(counted), f"http://127.0.0.1:{renard.port}/"],
            capture_output=True,
            timeout=2 * WRK_CEILING_S,
        )
    finally:
        reads = trace.stop()
    assert wrk.returncode == 0, wrk.stderr
    return [t for line in reads for t in TARGET.findall(line)]


def test_two_runs_send_the_same_sequence_the_one_mix_py_makes(renard, tmp_path):
    """One connection: the wire's order is the order request() made them, which is mix.targets()
    from its second (wrk calls request() once before it connects, to count pipelined requests)."""
    script = wrk_script(mode("keepalive"), tmp_path, "seeded")
    first = run_wrk_traced(renard, script, tmp_path / "first.txt")
    second = run_wrk_traced(renard, script, tmp_path / "second.txt")
    common = min(len(first), len(second))
    assert common >= ANSWERS, (len(first), len(second))
    assert first[:common] == second[:common]
    assert first == targets(MIXES["seeded"], "/", len(first) + 1)[1:]
    assert shares(first[:common])["seed"] > 0 and shares(first[:common])["cb"] > 0


def test_the_default_mix_sends_only_the_path(renard, tmp_path):
    script = wrk_script(mode("keepalive"), tmp_path, "default")
    targets = run_wrk_traced(renard, script, tmp_path / "default.txt")
    assert targets and set(targets) == {"/"}
