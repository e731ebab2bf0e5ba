"""What one sample of `arena stack` (stack/run.py) reads: the CPU ticks of every process of the
stack from /proc, by process name (h2load's run: load/h2load.py)."""

from __future__ import annotations

from pathlib import Path

from renard_conformance.launcher import CLK_TCK


def cpu_ticks(pids: list[int]) -> dict[int, tuple[str, int, int]]:
    """pid -> (comm, user ticks, kernel ticks), children reaped counted in their parent."""
    out = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        out[pid] = parse_stat(stat)
    return out


def parse_stat(stat: str) -> tuple[str, int, int]:
    """(comm, utime + cutime, stime + cstime) of a /proc/PID/stat line (ticks)."""
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state)
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return comm, utime + cutime, stime + cstime


def cpu_by_process(before: dict, after: dict) -> dict[str, list[float]]:
    """comm -> [user s, kernel s] used between two cpu_ticks() readings."""
    out: dict[str, list[float]] = {}
    for pid, (comm, user, kernel) in after.items():
        _, user0, kernel0 = before.get(pid, (comm, 0, 0))
        used = out.setdefault(comm, [0.0, 0.0])
        used[0] += (user - user0) / CLK_TCK
        used[1] += (kernel - kernel0) / CLK_TCK
    return {comm: [round(u, 3), round(k, 3)] for comm, (u, k) in sorted(out.items())}
