"""User-space instructions per request of a native entry, counted by callgrind.

A throughput figure moves by tens of percent on a shared machine; the number of
instructions a server executes per request does not. An entry whose entry.toml says
`native = true` is started under `valgrind --tool=callgrind` (one thread) and driven by the
arena's own client (load/raw.py), on one connection, with a fixed number of requests of the shape
wrk sends (`GET / HTTP/1.1` and `Host`): one per round trip (keepalive) or 16 per write
(pipeline16). Start-up and shutdown are excluded by the difference of two runs:

    instructions per request = (Ir(10 N) - Ir(N)) / 9 N

Ir is callgrind's total of executed instructions over every thread of the process. The
client waits for every answer before it sends the next batch, so the count does not depend
on timing. Every run is bounded (RUN_TIMEOUT_S) and the server is always stopped.

An outside server (outside.Outside: `arena gate --cmd … --native`) is counted alike: it says
no `listening on` line, so it is given a free port and found ready when that port accepts.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ..core.model import InstructionCount as Count
from ..entries.manifest import Entry
from ..entries.process import Launch, free_port, start
from ..load.driver import LoadError
from ..load.raw import Client
from .strace import CountError

# arena mode -> requests per write; the two modes whose wrk load the count mirrors
PER_WRITE = {"keepalive": 1, "pipeline16": 16}
DEFAULT_REQUESTS = 1600  # N: the runs serve N and 10 N requests per mode
QUICK_REQUESTS = 320
RUN_TIMEOUT_S = 300.0  # one callgrind run, start to stop
READY_TIMEOUT_S = 60.0  # valgrind starts a program 20-50 times slower
TOP_FUNCTIONS = 30  # lines of callgrind_annotate kept


def available() -> str | None:
    """Why instructions cannot be counted here; None when they can."""
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: valgrind)"
    return None


def drive(port: int, requests: int, per_write: int, deadline: float) -> None:
    """Sends `requests` requests on one connection, `per_write` at a time, waiting for all
    the answers of a write before the next (load/raw.py); raises CountError on a wrong answer,
    a close or the deadline."""
    client = Client(port, per_write, False, deadline)
    try:
        client.send(requests, deadline)
    except LoadError as err:
        raise CountError(f"{err} (under callgrind)") from None
    finally:
        client.close()
    if client.reconnects:
        raise CountError("the server closed the connection")


def total_ir(out_file: Path) -> int:
    """The total Ir of a callgrind output file (its `totals:` or `summary:` line)."""
    for line in out_file.read_text(errors="replace").splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise CountError(f"no total in {out_file}")


def callgrind_run(entry: Entry, requests: int, per_write: int, out_file: Path) -> int:
    """The total Ir of one run of entry under callgrind serving `requests` requests."""
    wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--quiet")
    port = 0 if entry.ready == "listening" else free_port()  # 0: the entry's `listening on` line says its port
    server = start(entry, Launch(port=port, threads=1, wrapper=wrapper))
    try:
        server.wait_ready(READY_TIMEOUT_S)
        drive(server.port, requests, per_write, time.monotonic() + RUN_TIMEOUT_S)
    finally:
        status = server.stop()
    if status is None:  # SIGKILLed: valgrind writes no profile
        raise CountError("the server did not exit on SIGTERM within 5 s under valgrind: no profile written")
    if not out_file.is_file():
        raise CountError(f"callgrind wrote no {out_file.name} (the server did not exit cleanly)")
    return total_ir(out_file)


def annotate(out_file: Path, dest: Path) -> None:
    """callgrind_annotate's functions by exclusive cost, the first TOP_FUNCTIONS, to dest."""
    result = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=99", str(out_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    dest.write_text("\n".join(lines[: 40 + TOP_FUNCTIONS]) + "\n")


def count(entry: Entry, mode: str, requests: int = DEFAULT_REQUESTS, keep: Path | None = None) -> Count:
    """Instructions per request of entry in mode (a key of PER_WRITE), from runs of N and 10 N.

    keep: a directory where the annotated top functions of the 10 N run are written as
    `<entry>.<mode>.callgrind.txt` (Count.annotation names it)."""
    per_write = PER_WRITE[mode]
    n = max(per_write, requests - requests % per_write)
    with tempfile.TemporaryDirectory(prefix="arena-callgrind-") as tmp:
        small = callgrind_run(entry, n, per_write, Path(tmp) / "small.out")
        large_file = Path(tmp) / "large.out"
        large = callgrind_run(entry, 10 * n, per_write, large_file)
        name = None
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            name = f"{entry.name}.{mode}.callgrind.txt"
            annotate(large_file, keep / name)
    return Count(mode, n, round((large - small) / (9 * n), 1), small, large, name)
