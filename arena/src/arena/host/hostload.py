"""The machine's own state around a sample: the guest's steal time and the load average.

On a virtual machine the hypervisor can run someone else on our vCPU; the guest sees that
time as `steal` in /proc/stat. A sample measured while its CPUs were stolen from measures
the neighbour as much as the server, so bench.py repeats such a sample once and, if the
second is stolen too, keeps it flagged (the report says so). Seen on this project's 2-vCPU
KVM guest (2026-11-25, load average 3-5 from other sessions' suites): 367 of 844 000
jiffies stolen since boot (0.04 %), none over 5 s windows; modes.STEAL_LIMIT (2 %) is well
above that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STAT = Path("/proc/stat")
LOADAVG = Path("/proc/loadavg")


def cpu_list(spec: str) -> list[int]:
    """The CPUs of a taskset list such as "0", "0-1,3"; raises ValueError."""
    cpus: list[int] = []
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        cpus += range(int(first), int(last or first) + 1)
    return cpus


@dataclass
class Jiffies:
    """Per CPU, (all time accounted, of which stolen), in USER_HZ ticks, from /proc/stat."""

    cpus: dict[int, tuple[int, int]]

    @classmethod
    def parse(cls, text: str) -> Jiffies:
        cpus = {}
        for line in text.splitlines():
            name, *fields = line.split()
            if not name.startswith("cpu") or name == "cpu":
                continue
            values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal (guest is in user)
            cpus[int(name[3:])] = (sum(values), values[7] if len(values) > 7 else 0)
        return cls(cpus)

    @classmethod
    def read(cls) -> Jiffies | None:
        try:
            return cls.parse(STAT.read_text())
        except (OSError, ValueError, IndexError):
            return None


def steal_share(before: Jiffies | None, after: Jiffies | None, cpus: list[int]) -> float | None:
    """Stolen time ÷ all time of these CPUs between two readings; None when unknown (no
    /proc/stat, a CPU it does not list, or no tick elapsed)."""
    if before is None or after is None or any(c not in before.cpus or c not in after.cpus for c in cpus):
        return None
    total = sum(after.cpus[c][0] - before.cpus[c][0] for c in cpus)
    stolen = sum(after.cpus[c][1] - before.cpus[c][1] for c in cpus)
    return round(stolen / total, 4) if total > 0 else None


def load_1m() -> float | None:
    """The 1-minute load average (/proc/loadavg), None where it cannot be read."""
    try:
        return float(LOADAVG.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
