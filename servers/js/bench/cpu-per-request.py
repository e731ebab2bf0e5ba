#!/usr/bin/env python3
"""Server CPU per request under wrk (../../../shared/MEASURING.md): each server pinned to
CPU 0, `wrk -t1 -c50` on CPU 1, keep-alive; CPU = utime + stime of the server's process
tree from /proc, over the requests wrk counted. Servers interleaved, REPS rounds.
Usage: bench/cpu-per-request.py SECONDS REPS 'name=command with {port}' ..."""
import os, re, signal, statistics, subprocess, sys, time

def tree(pid):
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return pids

def ticks(pid):
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total

def hwm_kib(pid):
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                total += int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
        except (OSError, AttributeError):
            pass
    return total

def run(command, port, seconds):
    server = subprocess.Popen(["taskset", "-c", "0", "sh", "-c", "exec " + command.format(port=port)],
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    server.stderr.readline()
    subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c50", "-d1s", f"http://127.0.0.1:{port}/"], capture_output=True)
    before = ticks(server.pid)
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c50", f"-d{seconds}s", f"http://127.0.0.1:{port}/"],
                         capture_output=True, text=True).stdout
    used = ticks(server.pid) - before
    rss = hwm_kib(server.pid)
    os.killpg(server.pid, signal.SIGKILL)
    server.wait()
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    return requests / seconds, used / 100 / requests * 1e6, rss / 1024

seconds, reps = int(sys.argv[1]), int(sys.argv[2])
servers = [arg.split("=", 1) for arg in sys.argv[3:]]
results = {name: [] for name, _ in servers}
for rep in range(reps):
    for i, (name, command) in enumerate(servers):
        results[name].append(run(command, 18700 + 10 * rep + i, seconds))
for name, runs in results.items():
    rps = statistics.median(r[0] for r in runs)
    cpu = [r[1] for r in runs]
    print(f"{name:12} {rps:9.0f} req/s  CPU {statistics.median(cpu):5.2f} µs/req ({min(cpu):.2f}-{max(cpu):.2f})  peak RSS {max(r[2] for r in runs):5.1f} MB")
