"""The CPU cap of the capped modes: a busy process inside it gets no more than its quota.
Skipped, with the reason, where no cgroup can be made (not root, no cpu controller)."""

import os
import subprocess
import sys
import time

import pytest

from arena.host.cgroup import CpuCap, probe

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


def test_the_cgroup_counts_the_cpu_time_of_its_processes_as_proc_does_at_finer_resolution():
    problem = probe(0.5)
    if problem:
        pytest.skip(problem)
    cap = CpuCap.create(0.5)
    if cap.usage_s() is None:
        cap.remove()
        pytest.skip("no CPU-time counter here (no cpuacct hierarchy mounted beside v1's cpu)")
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        cap.add([busy.pid])
        usage0, cpu0 = cap.usage_s(), cpu_seconds(busy.pid)
        time.sleep(1.0)
        usage, cpu = cap.usage_s() - usage0, cpu_seconds(busy.pid) - cpu0
    finally:
        busy.kill()
        busy.wait()
        cap.remove()
    tick = 1 / os.sysconf("SC_CLK_TCK")
    assert 0.1 < usage < 0.7, f"the group counted {usage:.3f} s in 1 s at half a core"
    assert abs(usage - cpu) <= 3 * tick + 0.05 * cpu, f"cgroup {usage:.4f} s, /proc {cpu:.2f} s"
    assert not cap.path.exists() and (cap.accounting is None or not cap.accounting.exists())
