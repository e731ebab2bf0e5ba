"""The gate's latency criterion on real servers and real oha (skipped where oha is missing:
arena/tools/install-oha): a server that answers 3 ms late (fixtures/late_server.py, which
sleeps before each answer) is a latency regression at a tenth of the capacity measured for
its baseline, while the same server against itself is not called significant. Short samples
(1 s, no warm-up, 10 connections), 8 pairs: the fewest with which a change can be significant;
the late server's test takes more while the verdict stays inconclusive, up to the gate's 15, as
the gate does: with 8, every pair must agree, and beside the flake campaign's load one pair
whose A a neighbour stalled (its p50 4.0 ms, B's 3.6) left a ratio of 11 not significant
(p = 0.016), where a ninth agreeing pair makes it so (p = 0.008).

A tenth, not a quarter: the late server answers at most 10 connections / 3 ms = 3 333
requests/s, and a quarter of its baseline's capacity (16 300 to 16 600 measured quiet) is
more, so its p50 was its queue (90 to 190 ms), not its 3 ms. At a tenth, measured on the
2-vCPU Intel Xeon guest quiet and beside two busy loops: A's p50 0.11 to 0.39 ms, B's 3.27 to
3.51 ms, the median ratio 9.4 at the least, its interval from 9.4 (quiet) and 15.8 (loaded) up."""

import shutil
import sys
from pathlib import Path

import pytest

from arena.entries.outside import outside_entry
from arena.load.oha import oha_problem
from arena.workflows import gate
from arena.workflows.gate import Options, gate_config

LATE_SERVER = Path(__file__).resolve().parent / "fixtures" / "late_server.py"
CFG = gate_config("keepalive", 1, 0, 10, 0.5)


def late(delay_ms: float):
    """The late server as an outside command (--cmd), answering after delay_ms."""
    return outside_entry(f"{sys.executable} {LATE_SERVER} --listen {{listen}} --delay-ms {delay_ms:g}")


@pytest.fixture(autouse=True)
def tools():
    if oha_problem():
        pytest.skip(oha_problem())
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")


def test_a_server_that_answers_3_ms_late_is_a_latency_regression_at_a_tenth_of_its_baseline_capacity():
    said = []
    capacity = gate.capacity(late(0), CFG, None, said.append)  # wrk samples of A alone: requests/s
    assert capacity > 400, said  # 10 connections, each answered well within 25 ms
    opts = Options(latency="p50", at=0.1)  # 8 pairs, more while inconclusive
    verdict = gate.latency_verdict(late(0), late(3), capacity, CFG, opts, said.append)
    assert verdict.regression(opts.threshold), said
    assert min(verdict.b) > 3000, said  # µs: the 3 ms sleep is in every p50
    # B over A, the median of the pairs' ratios: with one stalled pair of 8 the interval's lower
    # end was 4.4 (9.4 and up in the runs above), the median 11.0. 9.4 at the least measured; A's p50
    # would have to pass 1.6 ms in half the pairs.
    assert verdict.ratio > 2, said


def test_the_same_server_against_itself_is_not_a_significant_latency_change():
    said = []
    opts = Options(latency="p90", at=0.25, max_pairs=8, noise=0.25)  # the noise band of the timed A/A tests
    verdict = gate.latency_verdict(late(0), late(0), 2000.0, CFG, opts, said.append)  # at 500 requests/s
    assert verdict.pairs == 8 and verdict.outcome != "significant", said
    assert not verdict.regression(opts.threshold)
