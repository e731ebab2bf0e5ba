"""The machine a run happened on: CPU, cores, kernel, OS, memory, tool and runtime versions."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

# Tools and runtimes whose version is recorded when they are on PATH: argv printing it.
TOOLS = {
    "wrk": ["wrk", "-v"],
    "python": None,  # this interpreter
    "rustc": ["rustc", "--version"],
    "cargo": ["cargo", "--version"],
    "go": ["go", "version"],
    "node": ["node", "--version"],
    "java": ["java", "-version"],
    "gcc": ["gcc", "--version"],
    "nginx": ["nginx", "-v"],
    "h2load": ["h2load", "--version"],
}


def first_line(argv: list[str], cwd: Path | None = None, shell: bool = False, timeout_s: float = 20) -> str | None:
    """The first non-empty line a command prints on stdout, else on stderr; None if it fails to run."""
    try:
        p = subprocess.run(argv, cwd=cwd, shell=shell, capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for stream in (p.stdout, p.stderr):
        for line in stream.decode(errors="replace").splitlines():
            if line.strip():
                return line.strip()
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _memory_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def describe() -> dict:
    tools = {}
    for name, argv in TOOLS.items():
        if argv is None:
            tools[name] = platform.python_version()
        elif shutil.which(argv[0]):
            line = first_line(argv) or "unknown"
            tools[name] = line.split(" Copyright")[0]  # wrk -v appends its copyright
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "kernel": platform.release(),
        "os": _os_name(),
        "memory_bytes": _memory_bytes(),
        "tools": tools,
    }
