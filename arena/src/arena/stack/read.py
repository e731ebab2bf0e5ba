"""What one sample of `arena stack` (stack.py) reads: the CPU ticks of every process of the
stack from /proc, by process name, and h2load's run (pinned, bounded in time) and its figures,
in the shape of wrk's JSON line."""

from __future__ import annotations

import re
from pathlib import Path

from renard_conformance.launcher import CLK_TCK

from ..core.model import Config
from ..entries.process import TimedOut, run_timed
from .define import H2_STREAMS, StackError

# --- readings ----------------------------------------------------------------------------


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


# --- h2load -----------------------------------------------------------------------------

H2_COUNTS = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
H2_REQUESTS = re.compile(r"requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, (\d+) errored")


def parse_h2load(out: str, log: str, expect: int) -> dict:
    """h2load's summary and its --log-file (start µs, status, duration µs per request) as
    wrk's JSON line: requests answered, latency p50/p99 (µs), errors; the answers not of
    the expected class in errors.status."""
    counts, failed = H2_COUNTS.search(out), H2_REQUESTS.search(out)
    if not counts or not failed:
        raise StackError("h2load printed no summary: " + " | ".join(out.strip().splitlines()[-3:]))
    if "Application protocol: h2\n" not in out:
        raise StackError("h2load did not negotiate HTTP/2 (ALPN h2)")
    by_class = [int(x) for x in counts.groups()]
    answered = sum(by_class)
    durations = sorted(int(line.split("\t")[2]) for line in log.splitlines() if line.count("\t") == 2)
    return {
        "requests": answered,
        "latency_us": {"p50": percentile(durations, 50), "p99": percentile(durations, 99)},
        "errors": {
            "socket": int(failed.group(1)) + int(failed.group(2)),
            "status": answered - by_class[expect // 100 - 2],
        },
    }


def percentile(sorted_values: list[int], p: float) -> int | None:
    """Nearest-rank percentile of sorted values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def run_h2load(
    url: str, seconds: int, cfg: Config, expect: int, tmp: Path, uris: Path | None = None
) -> tuple[dict, float, float]:
    """h2load pinned to the client's CPUs for `seconds`; (figures as parse_h2load, its CPU
    seconds, wall seconds). uris: a file of URLs, one a line (mix.write_uris), sent in its
    order on each connection instead of url (h2load -i). Bounded by seconds + 30 s."""
    log = tmp / "h2load.log"
    argv = ["taskset", "-c", cfg.client_cpus, "h2load", "-t1", f"-c{cfg.connections}", f"-m{H2_STREAMS}"]
    argv += [f"-D{seconds}", f"--log-file={log}", f"--input-file={uris}" if uris else url]
    try:
        h2load = run_timed(argv, seconds, "h2load")
    except TimedOut as err:
        raise StackError(str(err)) from None
    if h2load.returncode != 0:
        tail = (h2load.stdout + h2load.stderr).splitlines()[-3:]
        raise StackError(f"h2load exited {h2load.returncode}: " + " | ".join(tail))
    text = log.read_text() if log.is_file() else ""
    log.unlink(missing_ok=True)
    figures = parse_h2load(h2load.stdout, text, expect)
    figures["duration_us"] = seconds * 1_000_000  # h2load's -D: the measured period
    return figures, h2load.client_cpu_s, h2load.wall_s
