"""Three renards behind one nginx upstream (HTTPS in front): one instance stopped (SIGTERM)
and another killed (SIGKILL), each restarted, under load, and not one visitor's request fails."""

import signal
import time

import pytest

from load import Load
from stack import Stack

LOAD_S = 6.0  # the whole load, bounded in time (and in count, per client: load.MAX_REQUESTS)


@pytest.fixture
def three(renard, tmp_path):
    with Stack(renard, tmp_path, instances=3) as s:
        yield s


def test_no_request_fails_while_instances_stop_and_restart(three, chi_square):
    with Load(three) as load:
        time.sleep(1.0)
        assert three.stop_instance(1, signal.SIGTERM) == 0  # a graceful stop (SPEC §7.6)
        time.sleep(1.0)
        three.start_instance(1)
        time.sleep(1.0)
        three.stop_instance(2, signal.SIGKILL)  # a crash
        time.sleep(1.0)
        three.start_instance(2)
        time.sleep(max(0.0, LOAD_S - 4.0))
    ks = load.ks()
    total = sum(ks.values())
    failures = load.failures
    assert failures == [], f"{len(failures)} of {total + len(failures)} requests failed: {failures[:5]}"
    assert total >= 1000, f"only {total} answers in {LOAD_S} s"
    _, _, p = chi_square([ks[k] for k in range(1, 22)], [total / 21] * 21)
    assert p > 1e-4, f"k is not uniform (p = {p:.2g}): {sorted(ks.items())}"
