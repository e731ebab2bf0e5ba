#!/usr/bin/env python3
"""Measures nginx -> renard over a Unix socket against TCP loopback: CPU per request of the
whole stack a visitor reaches (nginx master + worker + renard), over HTTPS keep-alive.

Both stacks (stack.py: the shipped site, one nginx worker, renard --threads 1) run at once,
pinned to CPU 0; `wrk -t1 -c50` runs on CPU 1 against each in turn, interleaved (tcp, unix,
tcp, unix, ...), per ../shared/MEASURING.md. CPU per request = the utime + stime that the
stack's processes spent during the run (/proc/PID/stat, ticks) / the requests wrk counted.

Usage: deploy/measure_upstream.py [--repetitions 3] [--seconds 4] [--connections 50] [--upstreams tcp,unix]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from stack import Stack  # noqa: E402

TICK_S = 1 / os.sysconf("SC_CLK_TCK")
RENARD = HERE.parent / "servers" / "rust" / "bin" / "renard"


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def tree(stack: Stack) -> list[int]:
    """The stack's processes: nginx's master and workers, every renard."""
    master = stack.nginx.pid
    return [master, *children(master), *(p.pid for p in stack.instances if p is not None)]


def cpu_s(pids: list[int]) -> float:
    """utime + stime of these processes (all their threads), in seconds."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total * TICK_S


def pin(pids: list[int], cpu: int) -> None:
    for pid in pids:
        subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=True, capture_output=True)


def wrk(url: str, seconds: int, connections: int) -> tuple[int, int, float]:
    """(requests answered 3xx or less, other answers and errors, wrk's own CPU seconds)."""
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url]
    before = os.times()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=seconds + 30).stdout
    after = os.times()
    requests = int(re.search(r"^\s*(\d+) requests in", out, re.M).group(1))
    bad = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    bad += sum(int(n) for n in errors.groups()) if errors else 0
    wrk_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return requests - bad, bad, wrk_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--upstreams", default="tcp,unix", help="stack.py's upstream kinds, in turn")
    args = parser.parse_args()
    modes = tuple(args.upstreams.split(","))
    results: dict[str, list[tuple[float, float, float]]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as work, contextlib.ExitStack() as running:
        stacks = {}
        for mode in modes:  # each stopped on the way out, whatever happens after it started
            (Path(work) / mode).mkdir()
            stacks[mode] = running.enter_context(Stack(RENARD, Path(work) / mode, upstream=mode))
        for mode in modes:
            pin(tree(stacks[mode]), 0)
        for _ in range(args.repetitions):
            for mode in modes:
                stack = stacks[mode]
                pids = tree(stack)
                start, t0 = cpu_s(pids), time.monotonic()
                ok, bad, wrk_cpu = wrk(stack.url("/"), args.seconds, args.connections)
                spent, elapsed = cpu_s(pids) - start, time.monotonic() - t0
                if bad:
                    print(f"{mode}: {bad} answers were not 302 or failed: not measured", file=sys.stderr)
                    return 1
                results[mode].append((spent / ok * 1e6, ok / args.seconds, wrk_cpu / elapsed))
    print(f"nginx -> renard, HTTPS keep-alive, wrk -t1 -c{args.connections} -d{args.seconds}s on CPU 1, ", end="")
    print(f"stack on CPU 0, {args.repetitions} runs interleaved; median (min-max)")
    print("| upstream | CPU µs/request (nginx + renard) | requests/s | wrk's core busy |")
    print("|---|---|---|---|")
    for mode in modes:
        cpu, rate, busy = zip(*results[mode], strict=True)
        print(
            f"| {mode} | {statistics.median(cpu):.1f} ({min(cpu):.1f}-{max(cpu):.1f}) "
            f"| {statistics.median(rate) / 1000:.1f}k ({min(rate) / 1000:.1f}-{max(rate) / 1000:.1f}) "
            f"| {statistics.median(busy):.0%} |"
        )
    if len(modes) == 2:
        ratios = [b[0] / a[0] for a, b in zip(results[modes[0]], results[modes[1]], strict=True)]
        print(
            f"{modes[1]} / {modes[0]} CPU per request, pair by pair: {statistics.median(ratios):.3f} "
            f"({min(ratios):.3f}-{max(ratios):.3f})"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
