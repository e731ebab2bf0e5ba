"""CPU time per keep-alive request (dev tool): starts the server on CPU 0 with one worker,
runs `wrk -t1 -c50` on CPU 1 for a few seconds, and divides the server's user+system time
(from /proc/PID/stat) by the requests wrk completed. The arena's `make bench` gives the
ranked figures; this is for before/after comparisons while optimising.

    ../../.venv/bin/python dev/cpu_per_request.py [SECONDS] [-- SERVER ARGV...]
    PIPELINE=1 ../../.venv/bin/python dev/cpu_per_request.py      # 16 requests per write
    RENARD_PY_LOOP=asyncio ../../.venv/bin/python dev/cpu_per_request.py   # standard loop
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ENTRY = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main() -> None:
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "--" else 3
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else [str(ENTRY / "renard")]
    server = subprocess.Popen(["taskset", "-c", "0", *argv, "--listen", "127.0.0.1:0",
                               "--threads", "1"], stderr=subprocess.PIPE)
    port = int(server.stderr.readline().decode().rsplit(":", 1)[1])
    url = f"http://127.0.0.1:{port}/"
    script = ENTRY.parents[1] / "arena" / "src" / "arena" / "load" / "wrk" / "pipeline.lua"
    pipeline = ["-s", str(script)] if os.environ.get("PIPELINE") else []
    try:
        subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c50", "-d1s", url],
                       capture_output=True, check=True)  # warm-up
        before, start = cpu_seconds(server.pid), time.monotonic()
        wrk = ["taskset", "-c", "1", "wrk", "-t1", "-c50", f"-d{seconds}s", *pipeline, url]
        out = subprocess.run(wrk, capture_output=True, text=True, check=True).stdout
        cpu, wall = cpu_seconds(server.pid) - before, time.monotonic() - start
    finally:
        server.terminate()
        server.wait(5)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    print(f"{requests / wall:,.0f} req/s, server CPU {cpu:.2f} s over {wall:.1f} s: "
          f"{cpu / requests * 1e6:.2f} us/request")


if __name__ == "__main__":
    main()
