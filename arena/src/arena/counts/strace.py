"""`strace -f -c` attached to a running server's tree and detached again (syscalls.py counts
with it): its `-c -U calls,name` summary parsed, and the difference of two windows per
request. Every thread of the tree is traced before the constructor returns."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

ATTACH_TIMEOUT_S = 20.0


class CountError(Exception):
    """A count (instructions or system calls) that could not be taken; str() says why in one
    line first. (Here, the lowest module of counts/, so that both counts raise the same one.)"""


# `strace -c -U calls,name`: "  2000 sendto" lines between dashes, then "  6002 total"
_LINE = re.compile(r"^\s*(\d+)\s+([a-z_0-9]+)\s*$")


def parse_summary(text: str) -> dict[str, int]:
    """strace's `-c -U calls,name` summary as {name: calls}, without the total."""
    calls: dict[str, int] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and m.group(2) != "total":
            calls[m.group(2)] = calls.get(m.group(2), 0) + int(m.group(1))
    return calls


def per_request(small: dict[str, int], large: dict[str, int], n: int) -> dict[str, float]:
    """(large - small) / 10 n by name, largest first; names whose difference is 0 left out."""
    names = set(small) | set(large)
    out = {name: (large.get(name, 0) - small.get(name, 0)) / (10 * n) for name in names}
    return dict(sorted(((k, round(v, 4)) for k, v in out.items() if v != 0), key=lambda kv: (-kv[1], kv[0])))


def tasks(pids: list[int]) -> list[tuple[int, int]]:
    """(pid, tid) of every thread of pids that still exists."""
    out = []
    for pid in pids:
        try:
            out += [(pid, int(t.name)) for t in Path(f"/proc/{pid}/task").iterdir()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def traced(pid: int, tid: int) -> bool:
    try:
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            if line.startswith("TracerPid:"):
                return int(line.split()[1]) != 0
    except (FileNotFoundError, ProcessLookupError):
        return True  # gone: nothing to wait for
    return False


class Strace:
    """`strace -f -c` attached to every process of a tree; stop() detaches and returns the
    calls by name. The constructor returns once every thread of the tree is traced."""

    def __init__(self, pids: list[int], out: Path):
        self.out = out
        argv = ["strace", "-f", "-qq", "-c", "-U", "calls,name", "-o", str(out)]
        for pid in pids:
            argv += ["-p", str(pid)]
        self.log = out.with_suffix(".stderr")
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + ATTACH_TIMEOUT_S
        while not all(traced(p, t) for p, t in tasks(pids)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise CountError(f"strace did not attach to {pids} within {ATTACH_TIMEOUT_S:g} s: {self._stderr()}")
            time.sleep(0.01)
        self.started = time.monotonic()

    def _stderr(self) -> str:
        return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-3:])

    def stop(self) -> dict[str, int]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                raise CountError("strace did not detach within 30 s") from None
        if not self.out.is_file():
            raise CountError(f"strace wrote no summary: {self._stderr()}")
        return parse_summary(self.out.read_text(errors="replace"))
