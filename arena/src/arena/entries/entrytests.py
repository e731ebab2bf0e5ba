"""An entry's own tests (`test` in entry.toml), run with their output both shown and kept.

A long `make test` prints thousands of lines after a failing entry; CI often keeps only the tail.
So every test command's combined stdout+stderr also goes to a log, and `arena test` repeats the
last lines of each failed entry's log at the very end, where a reader of a truncated output looks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TAIL_LINES = 60  # lines of a failed entry's log repeated at the end


def run_logged(command: str, cwd: Path, log: Path) -> int:
    """Run a shell command in cwd; its output streams to our stdout and is appended to log.
    Returns the command's exit status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as kept:
        kept.write(f"$ {command}\n".encode())
        kept.flush()
        child = subprocess.Popen(command, shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert child.stdout is not None
        for chunk in iter(lambda: child.stdout.read1(65536), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            kept.write(chunk)
        return child.wait()


def tail(log: Path, lines: int = TAIL_LINES) -> str:
    """The last lines of a log ('' when it cannot be read)."""
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
