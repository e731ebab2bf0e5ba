"""The CPU cap of the capped modes: a busy process inside it gets no more than its quota.
Skipped, with the reason, where no cgroup can be made (not root, no cpu controller)."""

import os
import subprocess
import sys
import time

import pytest

from arena.cgroup import CpuCap, probe

BUSY = "import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass\n"


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_busy_process_in_a_fifth_of_a_core_gets_about_a_fifth():
    problem = probe(0.2)
    if problem:
        pytest.skip(problem)
    cap = CpuCap.create(0.2)
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        cap.add([busy.pid])
        start, cpu0 = time.monotonic(), cpu_seconds(busy.pid)
        time.sleep(1.0)
        share = (cpu_seconds(busy.pid) - cpu0) / (time.monotonic() - start)
    finally:
        busy.kill()
        busy.wait()
        cap.remove()
    assert share < 0.3, f"the capped process used {share:.0%} of a core"
    assert not cap.path.exists()
