"""process.run_timed, the one place a load generator (wrk, h2load) is run for its time: it
reports the child's own CPU and its wall time, its output and status, and stops a child that
outlives its time."""

import sys
import time

import pytest

from arena.entries.process import TimedOut, run_timed

SPIN = """
import time
began = time.process_time()
while time.process_time() - began < 0.3:
    pass
print("spun")
"""


def test_it_reports_the_cpu_a_child_spent_and_its_wall_time():
    timed = run_timed([sys.executable, "-c", SPIN], 1)
    assert timed.returncode == 0 and timed.stdout == "spun\n", timed
    assert timed.client_cpu_s > 0.1, timed  # the child spun 0.3 s of its own CPU
    assert timed.wall_s >= 0.25, timed  # 0.3 s of CPU take at least as long on the wall


def test_a_sleeping_child_costs_little_cpu_but_its_wall_time():
    timed = run_timed([sys.executable, "-c", "import time; time.sleep(0.5)"], 1)
    assert timed.wall_s >= 0.5 and timed.client_cpu_s < timed.wall_s - 0.25, timed


def test_its_status_and_stderr_are_kept():
    timed = run_timed([sys.executable, "-c", "import sys; sys.exit('no server')"], 1)
    assert timed.returncode == 1 and "no server" in timed.stderr and timed.stdout == ""


def test_a_child_that_outlives_its_time_and_grace_is_stopped_and_named():
    began = time.monotonic()
    with pytest.raises(TimedOut, match=r"^sleeper did not finish within 0\.5 s$"):
        run_timed([sys.executable, "-c", "import time; time.sleep(30)"], 0, "sleeper", grace_s=0.5)
    assert time.monotonic() - began < 10  # killed at the bound, not waited for
