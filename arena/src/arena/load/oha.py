"""oha, the open-loop load generator of `arena latency` (`cargo install oha --locked`): is it
there, its command line (a fixed rate with --latency-correction, or as fast as it can), and
its JSON summary read back."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess

from ..core.model import Config
from .driver import LoadError, run_load


def oha_problem() -> str | None:
    if shutil.which("oha") is None:
        return "oha is not on PATH (arena/tools/install-oha installs it with cargo)"
    return None


@functools.cache
def json_flags() -> tuple[str, ...]:
    """How this oha is asked for JSON: `--output-format json` (recent) or `--json` (older)."""
    help_text = subprocess.run(["oha", "--help"], capture_output=True, text=True, timeout=30).stdout
    return ("--output-format", "json") if "--output-format" in help_text else ("--json",)


def run_oha(url: str, cfg: Config, seconds: int, rate: float | None) -> dict:
    """oha's JSON summary of one run, pinned to the client's CPUs, never following the 302;
    rate (requests/s) None: as fast as it can. Bounded by seconds + 30 s; raises LoadError."""
    argv = ["taskset", "-c", cfg.client_cpus, "oha", "--no-tui", *json_flags(), "--redirect", "0"]
    argv += ["-z", f"{seconds}s", "-c", str(cfg.connections)]
    if rate is not None:
        argv += ["-q", f"{rate:.0f}", "--latency-correction"]
    return run_load(argv + [url], seconds, "oha", read_oha)[0]


def read_oha(done) -> dict:
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise LoadError(f"oha printed no JSON: {done.stdout[:200]!r}") from None
