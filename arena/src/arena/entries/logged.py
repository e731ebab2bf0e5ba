"""Shell commands run in an entry's folder with their output kept in a log: its build
(build.py), its own tests (`arena test`, `arena check`). With echo, the output is also shown
as it comes: a long `make test` prints thousands of lines after a failing entry and CI often
keeps only the tail, so `arena test` repeats the log's last lines (tail) at the very end."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

TAIL_LINES = 60  # lines of a failed entry's log repeated at the end
TEST_TIMEOUT_S = 900  # one command of an entry's own tests


def run_logged(
    commands: list[str], cwd: Path, log: Path, timeout_s: float, echo: bool = False, append: bool = False
) -> tuple[str, int | None] | None:
    """Runs shell commands in order in cwd, no stdin, their stdout+stderr into log (each after a
    `$ command` line; appended to it, or the log begun anew) and, with echo, to our stdout too;
    stops at the first that fails or outlives timeout_s (seconds; its process group killed).
    Returns (that command, its exit status, None when it timed out), or None when all succeeded."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab" if append else "wb") as kept:
        for command in commands:
            kept.write(f"$ {command}\n".encode())
            kept.flush()
            child = subprocess.Popen(
                command,
                shell=True,
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own group, killed whole on the timeout
            )
            timed_out = threading.Event()
            timer = threading.Timer(timeout_s, _kill_group, (child.pid, timed_out))
            timer.start()
            try:
                for chunk in iter(functools.partial(child.stdout.read1, 65536), b""):
                    kept.write(chunk)
                    if echo:
                        sys.stdout.buffer.write(chunk)
                        sys.stdout.buffer.flush()
                status = child.wait()
            finally:
                timer.cancel()
            if timed_out.is_set():
                kept.write(f"\narena: timed out after {timeout_s:g} s\n".encode())
                return command, None
            if status != 0:
                kept.write(f"\narena: exit status {status}\n".encode())
                return command, status
    return None


def _kill_group(pgid: int, timed_out: threading.Event) -> None:
    timed_out.set()
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def tail(log: Path, lines: int = TAIL_LINES) -> str:
    """The last lines of a log ('' when it cannot be read)."""
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
