"""h2load, the HTTP/2 load generator of `arena stack`: its run (pinned, bounded in time) and its
figures in the shape of wrk's JSON line (requests, latency_us p50/p99, errors, duration_us)."""

from __future__ import annotations

import re
from pathlib import Path

from ..core.model import Config
from .driver import LoadError, run_load

H2_COUNTS = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
H2_REQUESTS = re.compile(r"requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, (\d+) errored")


def parse_h2load(out: str, log: str, expect: int) -> dict:
    """h2load's summary and its --log-file (start µs, status, duration µs per request) as
    wrk's JSON line: requests answered, latency p50/p99 (µs), errors; the answers not of
    the expected class in errors.status. Raises LoadError."""
    counts, failed = H2_COUNTS.search(out), H2_REQUESTS.search(out)
    if not counts or not failed:
        raise LoadError("h2load printed no summary: " + " | ".join(out.strip().splitlines()[-3:]))
    if "Application protocol: h2\n" not in out:
        raise LoadError("h2load did not negotiate HTTP/2 (ALPN h2)")
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
    url: str, seconds: int, cfg: Config, expect: int, streams: int, tmp: Path, uris: Path | None = None
) -> tuple[dict, float, float]:
    """h2load pinned to the client's CPUs for `seconds`, `streams` in flight per connection (-m);
    (figures as parse_h2load, its CPU seconds, wall seconds). uris: a file of URLs, one a line
    (mix.write_uris), sent in its order on each connection instead of url (h2load -i). Bounded
    by seconds + 30 s; raises LoadError."""
    log = tmp / "h2load.log"
    argv = ["taskset", "-c", cfg.client_cpus, "h2load", "-t1", f"-c{cfg.connections}", f"-m{streams}"]
    argv += [f"-D{seconds}", f"--log-file={log}", f"--input-file={uris}" if uris else url]

    def read(done) -> dict:
        text = log.read_text() if log.is_file() else ""
        log.unlink(missing_ok=True)
        figures = parse_h2load(done.stdout, text, expect)
        figures["duration_us"] = seconds * 1_000_000  # h2load's -D: the measured period
        return figures

    figures, h2load = run_load(argv, seconds, "h2load", read)
    return figures, h2load.client_cpu_s, h2load.wall_s
